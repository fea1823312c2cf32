import { timingSafeEqual } from 'node:crypto';

import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type Provider from 'oidc-provider';

import { ApiError } from '../../lib/errors.js';
import { webOrigin } from '../../lib/http/web-origin.js';
import type { ApplicationSignInExperience } from '../../lib/store/models.js';
import { databaseRetryAfterSeconds, databaseUnavailable, isDatabaseUnavailable } from '../../lib/store/availability.js';
import { callerOf, experienceCookie, experiencePrefix, pagesPrefix } from '../http.js';
import type { ExperienceService } from '../service.js';
import * as views from '../views/pages.js';
import { asHexColor } from '../views/stylesheet.js';
import { readForm } from '../../lib/http/form-body.js';
import { pageErrorOf } from './forms.js';
import type { Details, PageHandler, PageRender, PageRequest, PageResult, PagesOptions } from './request.js';

/** Names the interaction a social sign-in returns to, for the callback (whose path is not the interaction's). */
const socialCookie = '_social';
/** An http(s) URL's origin for the CSP, written anew from a valid host (`webOrigin`); nothing for anything else (a `data:` URL has no origin to allow). */
const originOf = webOrigin;

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/**
 * An application's look, from its client in the provider's cache: its sign-in experience
 * (`/api/applications/:id/sign-in-experience`) over its OIDC metadata's `logoUri` and its name.
 */
export function lookOf(client: Client): views.ApplicationLook {
  const metadata = client.metadata() as { signInExperience?: ApplicationSignInExperience; logo_uri?: string };
  const own = metadata.signInExperience;
  const primary = asHexColor(own?.color.primaryColor);
  const dark = asHexColor(own?.color.darkPrimaryColor);
  return {
    name: own?.displayName ?? client.clientName ?? client.clientId,
    logoUrl: own?.branding.logoUrl ?? metadata.logo_uri,
    darkLogoUrl: own?.branding.logoUrl ? own.branding.darkLogoUrl : undefined,
    colors: primary ? { primaryColor: primary, darkPrimaryColor: dark ?? primary } : undefined,
    termsOfUseUrl: own?.termsOfUseUrl ?? undefined,
    privacyPolicyUrl: own?.privacyPolicyUrl ?? undefined,
  };
}

/**
 * The application's look in an organization's (Logto's organization `branding` and `color`): its
 * logos and colours where the organization has them; the application keeps its name and policies.
 */
export function withOrganizationLook(look: views.ApplicationLook, organization: Awaited<ReturnType<PagesOptions['organizationLook']>>): views.ApplicationLook {
  if (!organization) return look;
  const { logoUrl, darkLogoUrl } = organization;
  const primaryColor = asHexColor(organization.primaryColor);
  const darkPrimaryColor = asHexColor(organization.darkPrimaryColor);
  return {
    ...look,
    ...(logoUrl && { logoUrl, darkLogoUrl }),
    ...(primaryColor && { colors: { primaryColor, darkPrimaryColor: darkPrimaryColor ?? primaryColor } }),
  };
}

export const expiredPage = (context: views.PageContext) =>
  views.messagePage(context, context.t.t('message.expired.title'), context.t.t('message.expired.text'));

/**
 * What every page goes through: its security headers, the outage page, and `route`, which loads
 * and checks the interaction, reads the form (and its CSRF token), runs the handler, and turns the
 * errors a person can cause into the page again, said at the field.
 */
export function pagePipeline(
  router: Router,
  service: ExperienceService,
  provider: Provider,
  { branding, catalogs, databaseReady, organizationLook }: PagesOptions,
) {
  const logoOrigin = originOf(branding.logoUrl);
  /** A page outside an interaction (an expired one, an outage): the language the browser asks for. */
  const plainContext = (ctx: ParameterizedContext): views.PageContext => ({ branding, t: catalogs.forRequest(undefined, ctx.get('accept-language')) });

  function securityHeaders(ctx: ParameterizedContext, details?: Pick<Details, 'params'>, look?: views.ApplicationLook) {
    // A form's redirects are checked against form-action too, up to the application's redirect URI.
    const redirectOrigin = originOf(details?.params.redirect_uri as string | undefined);
    // The application's own logos, where it has them, beside the operator's.
    const imageOrigins = [...new Set([logoOrigin, originOf(look?.logoUrl), originOf(look?.darkLogoUrl)].filter(Boolean))];
    ctx.set(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        "style-src 'self'",
        // Our own scripts only (the passkey ceremony), never inline; they talk to our Experience API.
        "script-src 'self'",
        "connect-src 'self'",
        ["img-src 'self'", ...imageOrigins].join(' '),
        `form-action 'self'${redirectOrigin ? ` ${redirectOrigin}` : ''}`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
    );
    // RFC 7034, for browsers that know no frame-ancestors.
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
  }

  /** A database that cannot be reached: a page that says to retry (503, Retry-After), not a 500 or "expired". */
  router.use(async (ctx, next) => {
    try {
      // Not before the database is known to be ours again: an empty one would say "no such account".
      if (!(await databaseReady())) throw databaseUnavailable();
      await next();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      securityHeaders(ctx);
      ctx.set('Retry-After', String(databaseRetryAfterSeconds));
      ctx.status = 503;
      ctx.type = 'html';
      const context = plainContext(ctx);
      ctx.body = views.messagePage(context, context.t.t('message.unavailable.title'), context.t.t('message.unavailable.text'));
    }
  });

  /** Loads and checks the interaction, runs the handler, and turns its errors into the page again. */
  /** `handler` answers a POST; `onGet`, if given, may answer a GET instead of the page (a redirect). */
  function route(render: PageRender, handler?: PageHandler, onGet?: (request: PageRequest) => Promise<PageResult | undefined>) {
    return async (ctx: ParameterizedContext) => {
      let details: Details;
      try {
        // Checks that this browser holds the interaction (its cookie), not only that the uid exists.
        details = await provider.interactionDetails(ctx.req, ctx.res);
        if (details.uid !== ctx.params.uid) throw new Error('interaction mismatch');
      } catch (error) {
        // An interaction we could not look up is not an expired one: the person may retry.
        if (isDatabaseUnavailable(error)) throw error;
        securityHeaders(ctx);
        ctx.status = 400;
        ctx.type = 'html';
        ctx.body = expiredPage(plainContext(ctx));
        return;
      }
      const { experience } = await service.open(details);
      const base = `${pagesPrefix}/${details.uid}`;
      const clientId = String(details.params.client_id);
      // The client comes from the provider's cache of our applications, not from another query: every page names it.
      const client = await provider.Client.find(clientId);
      const organizationId = details.params.organization_id;
      const look =
        client &&
        (typeof organizationId === 'string' && organizationId ? withOrganizationLook(lookOf(client), await organizationLook(organizationId)) : lookOf(client));
      securityHeaders(ctx, details, look);
      // OIDC Core §3.1.2.1 `ui_locales` first, then the browser's Accept-Language.
      const t = catalogs.forRequest(details.params.ui_locales, ctx.get('accept-language'));
      const request: PageRequest = {
        details,
        experience,
        form: new URLSearchParams(),
        caller: { ...callerOf(ctx), locale: t.locale },
        t,
        page: { branding, t, base, csrf: experience.csrf, ...(look && { application: look }) },
        applicationName: look?.name ?? clientId,
        settings: await service.settings(),
        mfaFactors: [],
        ...(await service.offeredConnectors()),
        params: ctx.params as Record<string, string>,
        rememberForCallback: () =>
          ctx.cookies.set(socialCookie, details.uid, {
            path: `${pagesPrefix}/callback`,
            httpOnly: true,
            // The provider sends the browser back with a top-level GET: a Lax cookie goes with it.
            sameSite: 'lax',
            secure: ctx.secure,
            overwrite: true,
            signed: true,
            expires: new Date(details.exp * 1000),
          }),
      };
      if (ctx.path.includes('/mfa')) request.mfaFactors = (await service.mfa.state(experience)).usable;
      let result: PageResult;
      try {
        request.form = await readForm(ctx);
        if (ctx.method === 'POST') {
          if (!sameSecret(request.form.get('csrf') ?? '', experience.csrf)) {
            throw new ApiError('session.csrf_failed', 'this form has expired; reload the page and try again');
          }
          result = await handler!(request);
        } else {
          // The JSON API finds this interaction by this cookie, for a UI of the integrator's own.
          ctx.cookies.set(experienceCookie, details.uid, {
            path: experiencePrefix,
            httpOnly: true,
            sameSite: 'lax',
            secure: ctx.secure,
            overwrite: true,
            signed: true,
            expires: new Date(details.exp * 1000),
          });
          result = (await onGet?.(request)) ?? { html: await render(request) };
        }
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        if (typeof error.data?.retryAfter === 'number') ctx.set('Retry-After', String(error.data.retryAfter));
        result = { html: await render(request, pageErrorOf(error, request.t)), status: error.status };
      }
      if ('redirect' in result) {
        ctx.status = 303;
        ctx.redirect(result.redirect);
        return;
      }
      ctx.status = result.status ?? 200;
      ctx.type = 'html';
      // RFC 9110 §8.5 and §12.5.5: the page's language, and that the browser's preference chose it.
      ctx.set('Content-Language', request.t.locale);
      ctx.vary('Accept-Language');
      ctx.body = result.html;
    };
  }

  return { route, plainContext, securityHeaders, socialCookie };
}

export type PagePipeline = ReturnType<typeof pagePipeline>;
