import { timingSafeEqual } from 'node:crypto';

import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type Provider from 'oidc-provider';

import { ApiError } from '../lib/errors.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../lib/store/availability.js';
import { email as emailSchema } from '../lib/identifiers.js';
import { callerOf, experienceCookie, experiencePrefix, usernamePattern } from './api.js';
import { grantMissing, type MissingConsent } from './consent.js';
import { assertPasswordAllowed } from './password-policy.js';
import type { Caller, ExperienceService, Identifier } from './service.js';
import type { ExperienceDocument } from './state.js';
import * as views from './views.js';

export const pagesPrefix = '/interaction';
const formLimit = 16 * 1024;
// The forms accept what the JSON API's schemas accept.
const usernameFormat = new RegExp(usernamePattern);
const emailFormat = new RegExp(emailSchema.pattern);
const validEmail = (email: string) => email.length <= emailSchema.maxLength && emailFormat.test(email);

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** What a page handler gets: the interaction, its experience, the submitted form. */
interface PageRequest {
  details: Details;
  experience: ExperienceDocument;
  form: URLSearchParams;
  caller: Caller;
  /** Renders the page the form came from, with an error, when the handler throws. */
  page: views.FormContext;
  /** The application's name, on a consent page. */
  applicationName: string;
}

type PageResult = { redirect: string } | { html: string; status?: number };
type PageHandler = (request: PageRequest) => Promise<PageResult>;

async function readForm(ctx: ParameterizedContext): Promise<URLSearchParams> {
  if (ctx.method !== 'POST') return new URLSearchParams(ctx.querystring);
  if (!ctx.is('application/x-www-form-urlencoded')) throw new ApiError('guard.unsupported_media_type', 'forms are sent as application/x-www-form-urlencoded');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > formLimit) throw new ApiError('guard.payload_too_large', 'the form is too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** A sentence for the page: the API's message, capitalized. */
const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;

const originOf = (url: string | undefined) => {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
};

export interface PagesOptions {
  branding: views.Branding;
  /** Whether a client is one of our first-party applications (consented without asking). */
  isFirstParty(clientId: string): Promise<boolean>;
}

/**
 * The server-rendered pages that oidc-provider's `interactions.url` leads to. Plain forms, no
 * script: each POST goes through the same service as the JSON API, then either redirects (303)
 * or renders the form again with a generic error.
 */
export function experiencePages(service: ExperienceService, provider: Provider, { branding, isFirstParty }: PagesOptions) {
  const router = new Router({ prefix: pagesPrefix });
  const logoOrigin = originOf(branding.logoUrl);

  function securityHeaders(ctx: ParameterizedContext, details?: Details) {
    // A form's redirects are checked against form-action too, up to the application's redirect URI.
    const redirectOrigin = originOf(details?.params.redirect_uri as string | undefined);
    ctx.set(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        "style-src 'self'",
        `img-src 'self'${logoOrigin ? ` ${logoOrigin}` : ''}`,
        `form-action 'self'${redirectOrigin ? ` ${redirectOrigin}` : ''}`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
    );
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
  }

  /** A database that cannot be reached: a page that says to retry (503, Retry-After), not a 500 or "expired". */
  router.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      securityHeaders(ctx);
      ctx.set('Retry-After', String(databaseRetryAfterSeconds));
      ctx.status = 503;
      ctx.type = 'html';
      ctx.body = views.messagePage(
        branding,
        'Temporarily unavailable',
        'The sign-in service cannot be reached at the moment. Wait a few seconds and try again.',
      );
    }
  });

  /** Loads and checks the interaction, runs the handler, and turns its errors into the page again. */
  /** `handler` answers a POST; `onGet`, if given, may answer a GET instead of the page (a redirect). */
  function route(
    render: (request: PageRequest, error?: string) => string,
    handler?: PageHandler,
    onGet?: (request: PageRequest) => Promise<PageResult | undefined>,
  ) {
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
        ctx.body = views.messagePage(branding, 'This sign-in has expired', 'Go back to the application and sign in again.');
        return;
      }
      securityHeaders(ctx, details);
      const { experience } = await service.open(details);
      const base = `${pagesPrefix}/${details.uid}`;
      const clientId = String(details.params.client_id);
      // The client comes from the provider's cache of our applications, not from another query.
      const client = details.prompt.name === 'consent' ? await provider.Client.find(clientId) : undefined;
      const request: PageRequest = {
        details,
        experience,
        form: new URLSearchParams(),
        caller: callerOf(ctx),
        page: { branding, base, csrf: experience.csrf },
        applicationName: client?.clientName ?? clientId,
      };
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
          result = (await onGet?.(request)) ?? { html: render(request) };
        }
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        if (error.status === 429 && typeof error.data?.retryAfter === 'number') ctx.set('Retry-After', String(error.data.retryAfter));
        result = { html: render(request, sentence(error.message)), status: error.status };
      }
      if ('redirect' in result) {
        ctx.status = 303;
        ctx.redirect(result.redirect);
        return;
      }
      ctx.status = result.status ?? 200;
      ctx.type = 'html';
      ctx.body = result.html;
    };
  }

  const withError = (request: PageRequest, error?: string) => ({ ...request.page, error });
  const identifierOf = (value: string): Identifier => (value.includes('@') ? { type: 'email', value } : { type: 'username', value });
  const field = (request: PageRequest, name: string) => (request.form.get(name) ?? '').trim();
  const clientOf = (request: PageRequest): string => String(request.details.params.client_id);

  async function signIn(request: PageRequest): Promise<PageResult> {
    const identifier = field(request, 'identifier');
    const password = request.form.get('password') ?? '';
    if (!identifier || !password) throw new ApiError('session.invalid_credentials', 'enter your username or email, and your password');
    const experience = await service.start(request.experience, 'SignIn');
    const verificationId = await service.verifyPassword(experience, identifierOf(identifier), password, request.caller);
    await service.identify(experience, verificationId);
    return { redirect: await service.submit(experience, clientOf(request), request.caller) };
  }

  /** OIDC Core §3.1.2.1 `login_hint`: the identifier the application says the user will likely use. */
  const loginHintOf = (request: PageRequest): string => {
    const hint = request.details.params.login_hint;
    return typeof hint === 'string' && hint.length <= 256 ? hint : '';
  };
  const renderSignIn = (request: PageRequest, error?: string) =>
    views.signInPage(withError(request, error), {
      identifier: request.form.has('identifier') ? field(request, 'identifier') : loginHintOf(request),
    });
  const renderSignUp = (request: PageRequest, error?: string) =>
    views.signUpPage(withError(request, error), { username: field(request, 'username'), email: field(request, 'email') });
  const codeFields = (request: PageRequest) => ({ email: field(request, 'email'), verificationId: field(request, 'verificationId') });
  /**
   * The code step of sign-up and reset, on the page `render` draws: check the emailed code,
   * identify by it, do what else the flow needs (`then`), and submit.
   */
  const codeStep = (
    path: string,
    render: (context: views.FormContext, fields: { email: string; verificationId: string }) => string,
    then?: (request: PageRequest) => Promise<void>,
  ) =>
    router.post(
      path,
      route(
        (request, error) => render(withError(request, error), codeFields(request)),
        async (request) => {
          const { email, verificationId } = codeFields(request);
          await service.verifyCode(request.experience, verificationId, { type: 'email', value: email }, field(request, 'code'));
          await service.identify(request.experience, verificationId);
          await then?.(request);
          return { redirect: await service.submit(request.experience, clientOf(request), request.caller) };
        },
      ),
    );

  router.get(
    '/:uid',
    route(
      (request, error) => {
        const { prompt } = request.details;
        if (prompt.name === 'consent') return renderConsent(request, error);
        return renderSignIn(request, error);
      },
      undefined,
      // A first-party application is consented without asking, even when the request says
      // `prompt=consent` (Logto's SDKs send it on every sign-in), as in Logto.
      async (request) => {
        if (request.details.prompt.name !== 'consent' || !(await isFirstParty(clientOf(request)))) return undefined;
        return { redirect: await consentTo(request) };
      },
    ),
  );
  router.post('/:uid/sign-in', route(renderSignIn, signIn));

  router.get('/:uid/sign-up', route(renderSignUp));
  router.post(
    '/:uid/sign-up',
    route(renderSignUp, async (request) => {
      const username = field(request, 'username');
      const email = field(request, 'email');
      const password = request.form.get('password') ?? '';
      if (!username && !email) throw new ApiError('session.missing_profile', 'enter a username, an email address, or both');
      if (username && !usernameFormat.test(username))
        throw new ApiError('guard.invalid_input', 'a username has letters, digits and underscores, and does not start with a digit');
      if (email && !validEmail(email)) throw new ApiError('guard.invalid_input', 'this email address does not look right');
      assertPasswordAllowed(password, [username, email]);
      const experience = await service.start(request.experience, 'Register');
      if (username) await service.identify(experience, await service.newPasswordIdentity(experience, username, password, request.caller));
      else await service.addProfile(experience, 'password', password, request.caller);
      if (!email) return { redirect: await service.submit(experience, clientOf(request), request.caller) };
      const verificationId = await service.sendCode(experience, { type: 'email', value: email }, request.caller);
      return { html: views.signUpCodePage(request.page, { email, verificationId }) };
    }),
  );
  codeStep('/:uid/sign-up/code', views.signUpCodePage);

  const renderForgot = (request: PageRequest, error?: string) => views.forgotPasswordPage(withError(request, error), { email: field(request, 'email') });
  router.get('/:uid/forgot-password', route(renderForgot));
  router.post(
    '/:uid/forgot-password',
    route(renderForgot, async (request) => {
      const email = field(request, 'email');
      if (!validEmail(email)) throw new ApiError('guard.invalid_input', 'this email address does not look right');
      const experience = await service.start(request.experience, 'ForgotPassword');
      const verificationId = await service.sendCode(experience, { type: 'email', value: email }, request.caller);
      return { html: views.resetPasswordPage(request.page, { email, verificationId }) };
    }),
  );
  codeStep('/:uid/forgot-password/reset', views.resetPasswordPage, (request) =>
    service.resetPassword(request.experience, request.form.get('password') ?? '', request.caller),
  );

  function renderConsent(request: PageRequest, error?: string): string {
    const missing = request.details.prompt.details as MissingConsent;
    return views.consentPage(withError(request, error), {
      applicationName: request.applicationName,
      scopes: missing.missingOIDCScope ?? [],
      resources: Object.entries(missing.missingResourceScopes ?? {}).map(([indicator, scopes]) => ({ indicator, scopes })),
    });
  }
  router.post(
    '/:uid/consent',
    route(renderConsent, async (request) => {
      const { details } = request;
      if (details.prompt.name !== 'consent') throw new ApiError('session.invalid_event', 'there is nothing to consent to');
      if (request.form.get('decision') !== 'allow') return { redirect: await service.abort(request.experience) };
      return { redirect: await consentTo(request) };
    }),
  );

  /** Grants what the consent prompt found missing and finishes it; answers where the browser goes. */
  async function consentTo({ details }: PageRequest): Promise<string> {
    // The grant the prompt was about, or a new one if it has expired since.
    const grant =
      (details.grantId && (await provider.Grant.find(details.grantId))) ||
      new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    grantMissing(grant, details.prompt.details as MissingConsent);
    return service.finish(details.uid, { consent: { grantId: await grant.save() } });
  }

  router.post(
    '/:uid/abort',
    route(renderSignIn, async (request) => ({ redirect: await service.abort(request.experience) })),
  );

  return router;
}
