import { randomBytes } from 'node:crypto';

import { ApiError } from '../../lib/errors.js';
import { callerOf, pagesPrefix } from '../http.js';
import * as views from '../views/pages.js';
import { checkEmail, field, formError, pageErrorOf, renderSignIn, withError } from './forms.js';
import type { PageKit } from './kit.js';
import type { PageRequest } from './request.js';
import { expiredPage, lookOf } from './pipeline.js';

/** Social sign-in and enterprise SSO: to the provider, back to the callback, then signed in, registered, or asked to link. */
export function connectorPages(kit: PageKit) {
  const { router, route, service, submitOrComplete, submitWith, securityHeaders, plainContext, provider, options, socialCookie } = kit;

  /**
   * To a connector's provider (a link, not a form: the browser goes on to the provider, which a form's CSP
   * `form-action` would not allow), in a sign-in that comes back to `/callback/[sso/]:connectorId`.
   */
  const toProvider = (kind: 'social' | 'sso') => async (request: PageRequest) => {
    const experience = await service.start(request.experience, 'SignIn');
    const connectorId = request.params.connectorId ?? '';
    const { authorizationUri } = await service[kind].authorizationUri(experience, connectorId, {
      state: randomBytes(24).toString('base64url'),
      redirectUri: `${options.origin}${pagesPrefix}/callback/${kind === 'sso' ? 'sso/' : ''}${connectorId}`,
    });
    request.rememberForCallback();
    return { redirect: authorizationUri };
  };

  // Social sign-in: to the provider, back to the callback, then signed in, registered, or asked to link.
  router.get('/:uid/social/:connectorId', route(renderSignIn, undefined, toProvider('social')));
  router.post(
    '/:uid/social/link',
    route(renderSignIn, async (request) => {
      await service.identify(request.experience, field(request, 'verificationId'), { linkSocialIdentity: true });
      return submitOrComplete(request);
    }),
  );
  router.get(['/callback/:connectorId', '/callback/sso/:connectorId'], async (ctx) => {
    const enterprise = ctx.path.startsWith(`${pagesPrefix}/callback/sso/`);
    const flow = enterprise ? service.sso : service.social;
    securityHeaders(ctx);
    ctx.type = 'html';
    const expired = () => {
      ctx.status = 400;
      ctx.body = expiredPage(plainContext(ctx));
    };
    const uid = ctx.cookies.get(socialCookie, { signed: true });
    if (!uid) return expired();
    let opened: Awaited<ReturnType<typeof service.open>>;
    try {
      opened = await service.open(uid);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) return expired();
      throw error;
    }
    const client = opened.clientId ? await provider.Client.find(opened.clientId) : undefined;
    const look = client && lookOf(client);
    // The link page's form ends at the application: its redirect origin joins form-action, as on every page.
    securityHeaders(ctx, { params: { redirect_uri: opened.redirectUri } }, look);
    const t = options.catalogs.forRequest(opened.uiLocales, ctx.get('accept-language'));
    const { connectorId } = ctx.params as { connectorId: string };
    const state = String(ctx.query.state ?? '');
    const verificationId = await (enterprise ? service.pendingSso : service.pendingSocial)(opened.experience, connectorId, state);
    if (!verificationId) return expired();
    const form: views.FormContext = {
      branding: options.branding,
      t,
      base: `${pagesPrefix}/${uid}`,
      csrf: opened.experience.csrf,
      ...(look && { application: look }),
    };
    const caller = { ...callerOf(ctx), locale: t.locale };
    try {
      await flow.verify(opened.experience, connectorId, verificationId, Object.fromEntries(new URLSearchParams(ctx.querystring)));
      try {
        await service.identify(opened.experience, verificationId);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'user.identity_not_exist') throw error;
        const related = error.data?.relatedUser;
        if (typeof related === 'string' && !enterprise) {
          const name = (await service.offeredConnectors()).social.find(({ id }) => id === connectorId)?.name ?? connectorId;
          ctx.body = views.linkSocialPage(form, { connectorName: name, email: related, verificationId });
          return;
        }
        // Nobody has this upstream account: the sign-in goes on as a registration with it.
        await service.identify(await service.switchEvent(opened.experience, 'Register'), verificationId);
      }
      ctx.status = 303;
      ctx.redirect(await submitWith(opened.experience, opened.clientId, caller, form.base));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      ctx.status = error.status;
      const said = pageErrorOf(error, t);
      ctx.body = views.messagePage(form, t.t('message.failed.title'), said.text, said.lang);
    }
  });

  // Enterprise SSO: the work email, its domain's identity providers, the IdP, and back to the callback.
  const renderSsoEmail = (request: PageRequest, error?: views.PageError) => views.ssoEmailPage(withError(request, error), field(request, 'email'));
  router.get('/:uid/sso', route(renderSsoEmail));
  router.post(
    '/:uid/sso',
    route(renderSsoEmail, async (request) => {
      const email = field(request, 'email');
      checkEmail(email);
      const connectors = await service.sso.discover(email);
      if (connectors.length === 0) throw formError('guard.invalid_input', 'error.noSso', 'email');
      return { html: views.ssoChoicePage(request.page, email, connectors) };
    }),
  );
  router.get('/:uid/sso/:connectorId', route(renderSsoEmail, undefined, toProvider('sso')));
}
