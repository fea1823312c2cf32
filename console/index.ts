import { createHash } from 'node:crypto';

import Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import type { JSONWebKeySet } from 'jose';
import type { Db } from 'mongodb';
import type Provider from 'oidc-provider';

import type { Catalogs } from '../i18n/index.js';
import type { Branding } from '../experience/views/frame.js';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import { readForm } from '../lib/http/form-body.js';
import { isDatabaseUnavailable } from '../lib/store/availability.js';
import type { Logger } from '../lib/logger.js';
import type { Queries } from '../lib/store/queries/index.js';
import { redeemOwnCode } from '../provider/own-codes.js';
import { createConsoleAccess, provedSecondFactor, type Admitted, type Refusal } from './access.js';
import { consoleBuiltIn, type ConsolePaths } from './built-in.js';
import type { Dispatch } from './dispatch.js';
import { createConsoleStore, csrfMatches, consoleLoginMs, consoleSessionMs, type ConsoleSession } from './store.js';
import { applicationRoutes } from './applications.js';
import { changeRoutes } from './changes.js';
import { connectorRoutes } from './connectors.js';
import { impersonationRoutes } from './impersonations.js';
import { impersonationPolicyRoutes } from './impersonation-policy.js';
import { jwtCustomizerRoutes } from './jwt-customizers.js';
import { keyRoutes } from './keys.js';
import { organizationRoutes } from './organizations.js';
import { resourceRoutes } from './resources.js';
import { signInSettingsRoutes } from './sign-in-settings.js';
import { roleRoutes } from './roles.js';
import { userRoutes } from './users.js';
import { webhookRoutes } from './webhooks.js';
import { consoleStylesheet, consoleStylesheetPath, messagePage, type ConsolePage } from './views.js';

export interface ConsoleDeps {
  db: Db;
  provider: Provider;
  queries: Queries;
  clock: Clock;
  logger: Logger;
  /** The provider's issuer: its authorization endpoint is `${issuer}/auth`. */
  issuer: string;
  /** The provider's public signing keys (its JWKS), which the impersonation audit's checkpoints verify against. */
  publicKeys: () => JSONWebKeySet;
  /** The service's public origin: what a form's `Origin` must be. */
  origin: string;
  paths: ConsolePaths;
  branding: Branding;
  catalogs: Catalogs;
  /** The Management API's handlers, called in process for the administrator. */
  dispatch: Dispatch;
}

/** The console's two cookies: the session (SameSite=Strict), and a sign-in under way (Lax: it comes back through the provider's redirects). */
const sessionCookie = 'console_session';
const loginCookie = 'console_login';

/** A path inside the console to go back to after signing in; anything else goes to the start. */
const insideConsole = (base: string, value: unknown) =>
  typeof value === 'string' && value.startsWith(`${base}/`) && !value.startsWith('//') && /^[\w\-/.%?=&+]*$/.test(value) ? value : `${base}/users`;

/**
 * The admin console under `paths.base`: an administrator signs in through this provider's own
 * authorization code flow (PKCE) as the console's application, with a second factor, and must
 * hold the console permission through a user role; the browser then holds only an httpOnly,
 * SameSite=Strict session cookie, and every form carries the session's CSRF token. The pages call
 * the Management API's handlers in process, so every change names the administrator.
 */
export function createConsole(deps: ConsoleDeps): Middleware {
  const { paths, catalogs, branding } = deps;
  const { base } = paths;
  const store = createConsoleStore(deps.db, deps.clock);
  const access = createConsoleAccess(deps.queries, deps.provider);
  const router = new Router({ prefix: base });

  const pageOf = (ctx: ParameterizedContext, session?: ConsoleSession): ConsolePage => ({
    t: catalogs.forRequest(undefined, ctx.get('accept-language')),
    branding,
    base,
    ...(session && { csrf: session.csrf }),
  });
  const headers = (ctx: ParameterizedContext) => {
    ctx.set(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        "style-src 'self'",
        "img-src 'self'",
        // The sign-in settings' page holds the preview of the sign-in page, a console route of its own.
        ...(ctx.state.holdsPreview === true ? ["frame-src 'self'"] : []),
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
    );
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // Not no-referrer: with it a browser sends `Origin: null` on the console's own forms, which the CSRF check refuses.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
  };
  const draw = (ctx: ParameterizedContext, body: string, status = 200) => {
    headers(ctx);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = body;
  };
  const refuse = (ctx: ParameterizedContext, why: Refusal | 'signIn' | 'form', status: number) => {
    const page = pageOf(ctx);
    draw(
      ctx,
      messagePage(page, page.t.t(why === 'enrolled' ? 'console.enrolled.title' : 'console.refused.title'), page.t.t(`console.refused.${why}`), {
        href: `${base}/sign-in`,
        label: page.t.t('console.signIn'),
      }),
      status,
    );
  };
  /** Secure whenever the request came over HTTPS (behind a proxy, as TRUST_PROXY tells): a browser then never sends it in the clear. */
  const cookie = (ctx: ParameterizedContext, sameSite: 'strict' | 'lax', maxAge: number) => ({
    httpOnly: true,
    secure: ctx.secure,
    sameSite,
    path: base,
    maxAge,
    overwrite: true,
  });

  router.get(consoleStylesheetPath, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/css';
    ctx.body = consoleStylesheet;
  });

  // Leaves for the provider's sign-in; `prompt=login` asks for a fresh sign-in every time, so that its second factor is of now.
  router.get('/sign-in', async (ctx) => {
    const login = await store.beginLogin(insideConsole(base, ctx.query.returnTo));
    ctx.cookies.set(loginCookie, login.token, cookie(ctx, 'lax', consoleLoginMs));
    const challenge = createHash('sha256').update(login.verifier).digest('base64url');
    const request = new URLSearchParams({
      client_id: consoleBuiltIn.applicationId,
      response_type: 'code',
      redirect_uri: paths.callback,
      scope: 'openid',
      state: login.state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      prompt: 'login',
    });
    headers(ctx);
    ctx.redirect(`${deps.issuer}/auth?${request.toString()}`);
  });

  // RFC 6749 §4.1.2: the provider's answer. The state and the verifier are this browser's sign-in's, spent once.
  router.get('/callback', async (ctx) => {
    const login = await store.spendLogin(ctx.cookies.get(loginCookie));
    ctx.cookies.set(loginCookie, null, cookie(ctx, 'lax', 0));
    const { code, state } = ctx.query;
    if (!login || typeof state !== 'string' || state !== login.state || typeof code !== 'string') return refuse(ctx, 'signIn', 400);
    const signedIn = await redeemOwnCode(deps.provider, deps.db, deps.clock, {
      code,
      clientId: consoleBuiltIn.applicationId,
      redirectUri: paths.callback,
      verifier: login.verifier,
    });
    if (!signedIn?.sessionUid) return refuse(ctx, 'signIn', 400);
    if (!(await access.admits(signedIn.accountId))) return refuse(ctx, 'permission', 403);
    // A factor enrolled in this very sign-in was given to whoever held the password: it counts once a sign-in uses it.
    if (!provedSecondFactor(signedIn.amr)) return refuse(ctx, (await access.hasSecondFactor(signedIn.accountId)) ? 'enrolled' : 'secondFactor', 403);
    const { token } = await store.createSession(signedIn.accountId, signedIn.amr, signedIn.sessionUid);
    ctx.cookies.set(sessionCookie, token, cookie(ctx, 'strict', consoleSessionMs));
    headers(ctx);
    ctx.status = 303;
    ctx.redirect(login.returnTo);
  });

  router.get('/signed-out', (ctx) => {
    const page = pageOf(ctx);
    draw(
      ctx,
      messagePage(page, page.t.t('console.signedOut.title'), page.t.t('console.signedOut.lead'), {
        href: `${base}/sign-in`,
        label: page.t.t('console.signIn'),
      }),
    );
  });

  /**
   * Every other route: a live session of someone the console still admits, else the sign-in (a
   * page) or a refusal (a form). A form must come from the console: its `Origin` (and, where the
   * browser says, `Sec-Fetch-Site`) is ours, and its token is the session's.
   */
  const admitted = async (ctx: ParameterizedContext, next: () => Promise<unknown>) => {
    const token = ctx.cookies.get(sessionCookie);
    const session = await store.findSession(token);
    const leave = () => {
      if (ctx.method === 'GET') {
        headers(ctx);
        return ctx.redirect(`${base}/sign-in?${new URLSearchParams({ returnTo: ctx.originalUrl }).toString()}`);
      }
      return refuse(ctx, 'form', 403);
    };
    if (!session) return leave();
    if (!(await access.keeps(session))) {
      await store.endSession(token);
      return leave();
    }
    if (ctx.method === 'POST') {
      const site = ctx.get('sec-fetch-site');
      const origin = ctx.get('origin');
      const form = await readForm(ctx);
      if ((site && site !== 'same-origin') || (origin && origin !== deps.origin) || !csrfMatches(session, form.get('csrf'))) return refuse(ctx, 'form', 403);
      ctx.state.form = form;
    }
    ctx.state.console = { token: token!, session, page: pageOf(ctx, session) } satisfies Admitted;
    headers(ctx);
    await next();
  };

  router.post('/sign-out', admitted, async (ctx) => {
    await store.endSession(ctx.cookies.get(sessionCookie));
    ctx.cookies.set(sessionCookie, null, cookie(ctx, 'strict', 0));
    ctx.status = 303;
    ctx.redirect(`${base}/signed-out`);
  });

  router.get('/', admitted, (ctx) => {
    ctx.redirect(`${base}/users`);
  });
  userRoutes(router, admitted, deps.dispatch, draw, store);
  applicationRoutes(router, admitted, deps.dispatch, draw, store);
  changeRoutes(router, admitted, deps.dispatch, draw);
  resourceRoutes(router, admitted, deps.dispatch, draw);
  roleRoutes(router, admitted, deps.dispatch, draw);
  organizationRoutes(router, admitted, deps.dispatch, draw);
  signInSettingsRoutes(router, admitted, deps.dispatch, draw, { branding, catalogs });
  connectorRoutes(router, admitted, deps.dispatch, draw);
  keyRoutes(router, admitted, deps.dispatch, draw);
  impersonationPolicyRoutes(router, admitted, deps.dispatch, draw);
  jwtCustomizerRoutes(router, admitted, deps.dispatch, draw);
  webhookRoutes(router, admitted, deps.dispatch, draw, store);
  impersonationRoutes(router, admitted, deps.dispatch, draw, store, { db: deps.db, publicKeys: deps.publicKeys, issuer: deps.issuer });

  const routes = router.routes() as Middleware;
  /**
   * What went wrong, as a page: a bad request (a form too large, not a form) says so with its
   * status; an unreachable database is 503; anything else is logged and 500, its detail kept.
   */
  const failed = (ctx: ParameterizedContext, error: unknown) => {
    const page = pageOf(ctx);
    const unavailable = isDatabaseUnavailable(error);
    const known = error instanceof ApiError && error.expose;
    if (!unavailable && !known) deps.logger.error(`${ctx.method} ${ctx.path} failed`, error);
    const status = unavailable ? 503 : known ? error.status : 500;
    const text = unavailable ? page.t.t('message.unavailable.text') : known ? error.message : page.t.t('console.error.text');
    draw(ctx, messagePage(page, page.t.t('console.error.title'), text, { href: `${base}/users`, label: page.t.t('console.back') }), status);
  };
  return async (ctx, next) => {
    if (ctx.path !== base && !ctx.path.startsWith(`${base}/`)) return next();
    try {
      // The console owns its path: a route it does not have is its own 404 page, never the host's.
      await routes(ctx, async () => {
        const page = pageOf(ctx);
        draw(
          ctx,
          messagePage(page, page.t.t('console.notFound.title'), page.t.t('console.notFound.text'), { href: `${base}/users`, label: page.t.t('console.back') }),
          404,
        );
      });
    } catch (error) {
      failed(ctx, error);
    }
  };
}
