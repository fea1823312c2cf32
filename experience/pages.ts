import { randomBytes, timingSafeEqual } from 'node:crypto';

import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type Provider from 'oidc-provider';

import { webOrigin } from '../lib/http/web-origin.js';
import { ApiError } from '../lib/errors.js';
import { databaseRetryAfterSeconds, databaseUnavailable, isDatabaseUnavailable } from '../lib/store/availability.js';
import { email as emailSchema } from '../lib/identifiers.js';
import { callerOf, experienceCookie, experiencePrefix, usernamePattern } from './api.js';
import { grantMissing, type MissingConsent } from './consent.js';
import { assertPasswordAllowed, minPasswordLength } from '../sign-in/password-policy.js';
import type { Caller, ExperienceService, Identifier } from './service.js';
import type { ExperienceDocument } from './state.js';
import type { CodeTarget } from '../sign-in/codes.js';
import type { SignInSettings } from '../sign-in/settings.js';
import type { ApplicationSignInExperience } from '../lib/store/models.js';
import { phoneInput } from '../lib/phone.js';
import * as views from './views/pages.js';
import { en, type MessageKey } from '../i18n/en.js';
import type { Catalogs, Translator } from '../i18n/index.js';
import { isHexColor } from './views/stylesheet.js';

export const pagesPrefix = '/interaction';
/** Names the interaction a social sign-in returns to, for the callback (whose path is not the interaction's). */
const socialCookie = '_social';
const formLimit = 16 * 1024;
// The forms accept what the JSON API's schemas accept.
const usernameFormat = new RegExp(usernamePattern);
const emailFormat = new RegExp(emailSchema.pattern);
const validEmail = (email: string) => email.length <= emailSchema.maxLength && emailFormat.test(email);
const phoneLike = new RegExp(phoneInput.pattern);
/** Where a submit the settings hold back sends the browser: the page that asks for what is missing. */
const nextStep: Partial<Record<string, string>> = {
  'user.missing_profile': '/profile',
  'session.mfa.require_mfa_verification': '/mfa',
  'user.missing_mfa': '/mfa/enrol',
  'session.mfa.backup_code_required': '/mfa/backup-codes',
};
const profileSteps = new Set<string>(['username', 'email', 'phone', 'emailOrPhone', 'password'] satisfies views.ProfileStep[]);

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** What a page handler gets: the interaction, its experience, the submitted form. */
interface PageRequest {
  details: Details;
  experience: ExperienceDocument;
  form: URLSearchParams;
  caller: Caller;
  /** What the page the form came from is drawn with (an error is added when the handler throws). */
  page: views.FormContext;
  /** The application's name, on a consent page. */
  applicationName: string;
  /** The page's language: `ui_locales`, then `Accept-Language`. */
  t: Translator;
  /** How people may sign up and sign in: the forms follow it. */
  settings: SignInSettings;
  /** The second factors the identified user may prove now (for the MFA pages). */
  mfaFactors: Array<'Totp' | 'WebAuthn' | 'BackupCode'>;
  /** The social connectors the sign-in page offers. */
  social: Array<{ id: string; name: string }>;
  /** Whether the sign-in page offers single sign-on (an enterprise SSO connector is configured). */
  sso: boolean;
  /** The route's parameters (`uid`, `connectorId`). */
  params: Record<string, string>;
  /** Remembers this interaction for the social callback (a path-scoped, signed cookie). */
  rememberForCallback(): void;
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

/** A refusal of the pages' own checks: its code, the message from the catalog, and the field it is about. */
const formError = (
  code: 'guard.invalid_input' | 'user.missing_profile' | 'user.sign_in_method_not_enabled' | 'session.invalid_credentials',
  key: MessageKey,
  field?: string,
) => new ApiError(code, en[key].replace(/\.$/, ''), { messageKey: key, ...(field && { pageField: field }) });

/** The field (an input's id) each kind of error is about, where the code says it. */
const fieldOfError: Partial<Record<string, string>> = {
  'session.invalid_credentials': 'password',
  'verification_code.invalid': 'code',
  'session.mfa.invalid_totp_code': 'totp',
  'session.mfa.invalid_backup_code': 'backup-code',
  'password.rejected': 'password',
  'user.username_already_in_use': 'username',
  'user.email_already_in_use': 'email',
  'user.phone_already_in_use': 'phone',
  'user.invalid_phone': 'phone',
};

/**
 * What an error says on a page, in the page's language: the pages' own checks and the errors a
 * person can cause have catalog messages (a wait said in minutes or seconds); anything else keeps
 * the API's English message, marked as English for screen readers.
 */
export function pageErrorOf(error: ApiError, t: Translator): views.PageError {
  const data = error.data ?? {};
  const field = typeof data.pageField === 'string' ? data.pageField : fieldOfError[error.code];
  const wait = typeof data.retryAfter === 'number' ? t.duration(data.retryAfter) : '';
  const key =
    typeof data.messageKey === 'string'
      ? data.messageKey
      : error.code === 'password.rejected' && typeof data.rule === 'string'
        ? `error.password.${data.rule}`
        : `error.${error.code}`;
  if (key in en) return { text: t.t(key as MessageKey, { wait, min: Number(data.min ?? 0), max: Number(data.max ?? 0) }), field };
  return { text: sentence(error.message), field, ...(t.locale !== 'en' && { lang: 'en' }) };
}

/** Runs `work`; an error it throws is said beside the field `id` (the one field its form has, whatever the error names). */
async function aboutField<T>(id: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      throw new ApiError(error.code, error.message, { ...error.data, pageField: id }, error.status);
    }
    throw error;
  }
}

/** A code as a person types or pastes it ("123 456", "123-456"): the digits. */
const digitsOf = (code: string) => code.replace(/[\s-]/g, '');

/** An http(s) URL's origin for the CSP, written anew from a valid host (`webOrigin`); nothing for anything else (a `data:` URL has no origin to allow). */
const originOf = webOrigin;

type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/**
 * An application's look, from its client in the provider's cache: its sign-in experience
 * (`/api/applications/:id/sign-in-experience`) over its OIDC metadata's `logoUri` and its name.
 */
function lookOf(client: Client): views.ApplicationLook {
  const metadata = client.metadata() as { signInExperience?: ApplicationSignInExperience; logo_uri?: string };
  const own = metadata.signInExperience;
  const primary = own?.color.primaryColor;
  const dark = own?.color.darkPrimaryColor;
  return {
    name: own?.displayName ?? client.clientName ?? client.clientId,
    logoUrl: own?.branding.logoUrl ?? metadata.logo_uri,
    darkLogoUrl: own?.branding.logoUrl ? own.branding.darkLogoUrl : undefined,
    colors: isHexColor(primary) ? { primaryColor: primary, darkPrimaryColor: isHexColor(dark) ? dark : primary } : undefined,
    termsOfUseUrl: own?.termsOfUseUrl ?? undefined,
    privacyPolicyUrl: own?.privacyPolicyUrl ?? undefined,
  };
}

const expiredPage = (context: views.PageContext) => views.messagePage(context, context.t.t('message.expired.title'), context.t.t('message.expired.text'));

export interface PagesOptions {
  branding: views.Branding;
  /** The languages of the pages and of the codes they send. */
  catalogs: Catalogs;
  /** Each API resource's name and its permissions' descriptions, for the consent page. */
  describeResources(indicators: string[]): Promise<Map<string, { name: string; scopes: Map<string, string | null> }>>;
  /** Our public origin: social providers send the browser back to it. */
  origin: string;
  /** Whether a client is one of our first-party applications (consented without asking). */
  isFirstParty(clientId: string): Promise<boolean>;
  /** Whether the database may be read now; false while it cannot be reached or is not yet known to be ours. */
  databaseReady(): Promise<boolean>;
}

/**
 * The server-rendered pages that oidc-provider's `interactions.url` leads to. Plain forms, no
 * script: each POST goes through the same service as the JSON API, then either redirects (303)
 * or renders the form again with a generic error.
 */
export function experiencePages(
  service: ExperienceService,
  provider: Provider,
  { branding, catalogs, describeResources, isFirstParty, origin, databaseReady }: PagesOptions,
) {
  const router = new Router({ prefix: pagesPrefix });
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
  function route(
    render: (request: PageRequest, error?: views.PageError) => string | Promise<string>,
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
        ctx.body = expiredPage(plainContext(ctx));
        return;
      }
      const { experience } = await service.open(details);
      const base = `${pagesPrefix}/${details.uid}`;
      const clientId = String(details.params.client_id);
      // The client comes from the provider's cache of our applications, not from another query: every page names it.
      const client = await provider.Client.find(clientId);
      const look = client && lookOf(client);
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
        social: await service.social.list(),
        sso: await service.sso.offered(),
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
        if (error.status === 429 && typeof error.data?.retryAfter === 'number') ctx.set('Retry-After', String(error.data.retryAfter));
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

  const withError = (request: PageRequest, error?: views.PageError) => ({ ...request.page, error });
  const field = (request: PageRequest, name: string) => (request.form.get(name) ?? '').trim();
  const clientOf = (request: PageRequest): string => String(request.details.params.client_id);
  /** What a person typed where an email or a phone number goes: an address has an `@`. */
  const contactOf = (value: string): CodeTarget => (value.includes('@') ? { type: 'email', value } : { type: 'phone', value });
  /** What a person typed to sign in: an address, a phone number (digits, `+`, spaces and punctuation), or a username. */
  const identifierOf = (value: string): Identifier =>
    value.includes('@') ? { type: 'email', value } : phoneLike.test(value) ? { type: 'phone', value } : { type: 'username', value };
  const checkEmail = (email: string, id = 'email') => {
    if (!validEmail(email)) throw formError('guard.invalid_input', 'error.emailFormat', id);
  };

  /**
   * Submits the interaction; when the settings require something the account lacks (Logto's
   * `user.missing_profile`), the browser goes to the page that asks for it instead.
   */
  async function submitOrComplete(request: PageRequest): Promise<PageResult> {
    return { redirect: await submitWith(request.experience, clientOf(request), request.caller, request.page.base) };
  }

  /** The submit's redirect, or the page of this interaction (`base`) that asks for what it still needs. */
  async function submitWith(experience: ExperienceDocument, clientId: string | undefined, caller: Caller, base: string): Promise<string> {
    try {
      // A sign-in or a registration always answers where to go (only a reset answers nothing, and it has its own page).
      return (await service.submit(experience, clientId, caller)) ?? base;
    } catch (error) {
      const next = error instanceof ApiError ? nextStep[error.code] : undefined;
      if (next !== undefined) return `${base}${next}`;
      throw error;
    }
  }

  /** Sends a code for the interaction as it now is, and answers the page that takes it. */
  async function sendCodePage(
    request: PageRequest,
    target: CodeTarget,
    render: (form: views.FormContext, sent: views.SentCode) => string,
  ): Promise<PageResult> {
    if (target.type === 'email') checkEmail(target.value);
    const verificationId = await service.sendCode(request.experience, target, request.caller);
    return { html: render(request.page, { ...target, verificationId }) };
  }

  async function signIn(request: PageRequest): Promise<PageResult> {
    const identifier = field(request, 'identifier');
    const password = request.form.get('password') ?? '';
    if (!identifier || !password) throw formError('session.invalid_credentials', 'error.identifierAndPassword', identifier ? 'password' : 'identifier');
    const experience = await service.start(request.experience, 'SignIn');
    const verificationId = await service.verifyPassword(experience, identifierOf(identifier), password, request.caller);
    await service.identify(experience, verificationId);
    return submitOrComplete(request);
  }

  /** OIDC Core §3.1.2.1 `login_hint`: the identifier the application says the user will likely use. */
  const loginHintOf = (request: PageRequest): string => {
    const hint = request.details.params.login_hint;
    return typeof hint === 'string' && hint.length <= 256 ? hint : '';
  };
  /** The sign-in page; `after` prefills the identifier and says what just happened (a reset). */
  const renderSignIn = (request: PageRequest, error?: views.PageError, after?: { identifier: string; notice: string }) => {
    const { methods } = request.settings.signIn;
    return views.signInPage(
      { ...withError(request, error), ...(after && { notice: after.notice }) },
      {
        identifier: after ? after.identifier : request.form.has('identifier') ? field(request, 'identifier') : loginHintOf(request),
        password: methods.filter((method) => method.password).map(({ identifier }) => identifier),
        code: methods.filter((method) => method.verificationCode && method.identifier !== 'username').map(({ identifier }) => identifier as 'email' | 'phone'),
        passkey: request.settings.passkeySignIn.enabled,
        social: request.social,
        sso: request.sso,
      },
    );
  };
  const renderSignUp = (request: PageRequest, error?: views.PageError) => {
    const { identifiers, password, secondaryIdentifiers = [] } = request.settings.signUp;
    const offered = (name: 'username' | 'email' | 'phone') => identifiers.includes(name) || secondaryIdentifiers.some(({ identifier }) => identifier === name);
    return views.signUpPage(withError(request, error), {
      fields: { username: offered('username'), email: offered('email'), phone: offered('phone'), password },
      values: { username: field(request, 'username'), email: field(request, 'email'), phone: field(request, 'phone') },
      minPasswordLength,
    });
  };
  /** The code a form carries back: its target (an `email` or `phone` field) and verification id. */
  const sentCodeOf = (request: PageRequest): views.SentCode => {
    const phone = field(request, 'phone');
    return {
      ...(phone ? { type: 'phone', value: phone } : { type: 'email', value: field(request, 'email') }),
      verificationId: field(request, 'verificationId'),
    };
  };
  /**
   * A code step, on the page `render` draws: check the code, then `use` it (identify by it, or add
   * it to the profile), do what else the flow needs (`then`), and submit.
   */
  const codeStep = (
    path: string,
    render: (context: views.FormContext, sent: views.SentCode) => string,
    use: (request: PageRequest, sent: views.SentCode) => Promise<unknown>,
    then?: (request: PageRequest) => Promise<void>,
  ) =>
    router.post(
      path,
      route(
        (request, error) => render(withError(request, error), sentCodeOf(request)),
        async (request) => {
          const sent = sentCodeOf(request);
          await service.verifyCode(request.experience, sent.verificationId, sent, digitsOf(field(request, 'code')));
          await use(request, sent);
          await then?.(request);
          return submitOrComplete(request);
        },
      ),
    );
  const identifyBy = (request: PageRequest, sent: views.SentCode) => service.identify(request.experience, sent.verificationId);

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
  // Sign-in by a code to an email address or phone number, where the settings allow it (the service checks).
  router.post(
    '/:uid/sign-in/code',
    route(renderSignIn, async (request) => {
      const identifier = field(request, 'identifier');
      if (!identifier) throw formError('guard.invalid_input', 'error.emailOrPhoneMissing', 'code-identifier');
      const target = contactOf(identifier);
      if (!request.settings.signIn.methods.some((method) => method.identifier === target.type && method.verificationCode)) {
        throw formError('user.sign_in_method_not_enabled', 'error.codeMethodDisabled', 'code-identifier');
      }
      request.experience = await service.start(request.experience, 'SignIn');
      return aboutField('code-identifier', () => sendCodePage(request, target, views.signInCodePage));
    }),
  );
  codeStep('/:uid/sign-in/code/verify', views.signInCodePage, identifyBy);

  // "Send a new code" on every page that takes one: the same target again, through the same send
  // limits. A refusal keeps the page (and the code sent before) and says how long to wait.
  const codeFlows = new Set<string>(['sign-up', 'sign-in', 'profile', 'reset'] satisfies views.CodeFlow[]);
  const flowOf = (request: PageRequest): views.CodeFlow => {
    const flow = field(request, 'flow');
    return (codeFlows.has(flow) ? flow : 'sign-in') as views.CodeFlow;
  };
  router.post(
    '/:uid/code/resend',
    route(
      (request, error) => views.codePage(withError(request, error), flowOf(request), sentCodeOf(request)),
      async (request) => {
        const flow = field(request, 'flow');
        const { type, value } = sentCodeOf(request);
        if (!codeFlows.has(flow) || !value) throw formError('guard.invalid_input', 'error.generic');
        if (flow === 'sign-in' && !request.settings.signIn.methods.some((method) => method.identifier === type && method.verificationCode)) {
          throw formError('user.sign_in_method_not_enabled', 'error.codeMethodDisabled');
        }
        const verificationId = await service.sendCode(request.experience, { type, value }, request.caller);
        const context = { ...request.page, notice: request.t.t('code.resent', { target: value }) };
        return { html: views.codePage(context, flow as views.CodeFlow, { type, value, verificationId }) };
      },
    ),
  );

  router.get('/:uid/sign-up', route(renderSignUp));
  router.post(
    '/:uid/sign-up',
    route(renderSignUp, async (request) => {
      const username = field(request, 'username');
      const email = field(request, 'email');
      const phone = field(request, 'phone');
      const password = request.form.get('password') ?? '';
      const { signUp } = request.settings;
      const first = ['username', 'email', 'phone'].find((name) => request.form.has(name));
      if (!username && !email && !phone) throw formError('user.missing_profile', 'error.fillInOne', first);
      if (email && phone) throw formError('guard.invalid_input', 'error.emailAndPhone', 'phone');
      if (username && !usernameFormat.test(username)) throw formError('guard.invalid_input', 'error.usernameFormat', 'username');
      if (email) checkEmail(email);
      if (signUp.password) assertPasswordAllowed(password, [username, email]);
      const experience = await service.start(request.experience, 'Register');
      request.experience = experience;
      if (username && signUp.identifiers.includes('username')) {
        await service.identify(experience, await service.newPasswordIdentity(experience, username, password, request.caller));
      } else {
        if (username) await service.addProfile(experience, 'username', username, request.caller);
        if (signUp.password) await service.addProfile(experience, 'password', password, request.caller);
      }
      if (!email && !phone) return submitOrComplete(request);
      return sendCodePage(request, email ? { type: 'email', value: email } : { type: 'phone', value: phone }, views.signUpCodePage);
    }),
  );
  codeStep('/:uid/sign-up/code', views.signUpCodePage, identifyBy);

  // What the settings require that the account lacks (Logto's profile fulfilment), one thing at a time.
  const renderProfile = (request: PageRequest, error?: views.PageError) => {
    const step = field(request, 'step') as views.ProfileStep;
    return views.profilePage(withError(request, error), profileSteps.has(step) ? step : 'email', step === 'password' ? '' : field(request, step));
  };
  router.get(
    '/:uid/profile',
    route(renderProfile, undefined, async (request) => {
      const [next] = await service.missingProfile(request.experience);
      // Nothing left to add: the interaction goes ahead (or says why it cannot).
      if (!next) return submitOrComplete(request);
      return { html: views.profilePage(request.page, next) };
    }),
  );
  router.post(
    '/:uid/profile',
    route(renderProfile, async (request) => {
      const step = field(request, 'step');
      if (step === 'username' || step === 'password') {
        await service.addProfile(
          request.experience,
          step,
          step === 'password' ? (request.form.get('password') ?? '') : field(request, 'username'),
          request.caller,
        );
        return submitOrComplete(request);
      }
      const given = field(request, step === 'emailOrPhone' ? 'identifier' : step);
      if (!given || !profileSteps.has(step)) throw formError('guard.invalid_input', 'error.fillIn', step === 'emailOrPhone' ? 'identifier' : step);
      const target = step === 'emailOrPhone' ? contactOf(given) : { type: step as 'email' | 'phone', value: given };
      return aboutField(step === 'emailOrPhone' ? 'identifier' : step, () => sendCodePage(request, target, views.profileCodePage));
    }),
  );
  codeStep('/:uid/profile/code', views.profileCodePage, (request, sent) => service.linkIdentifier(request.experience, sent.type, sent.verificationId));

  /**
   * To a connector's provider (a link, not a form: the browser goes on to the provider, which a form's CSP
   * `form-action` would not allow), in a sign-in that comes back to `/callback/[sso/]:connectorId`.
   */
  const toProvider = (kind: 'social' | 'sso') => async (request: PageRequest) => {
    const experience = await service.start(request.experience, 'SignIn');
    const connectorId = request.params.connectorId ?? '';
    const { authorizationUri } = await service[kind].authorizationUri(experience, connectorId, {
      state: randomBytes(24).toString('base64url'),
      redirectUri: `${origin}${pagesPrefix}/callback/${kind === 'sso' ? 'sso/' : ''}${connectorId}`,
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
    const t = catalogs.forRequest(opened.uiLocales, ctx.get('accept-language'));
    const { connectorId } = ctx.params as { connectorId: string };
    const state = String(ctx.query.state ?? '');
    const verificationId = await (enterprise ? service.pendingSso : service.pendingSocial)(opened.experience, connectorId, state);
    if (!verificationId) return expired();
    const form: views.FormContext = { branding, t, base: `${pagesPrefix}/${uid}`, csrf: opened.experience.csrf, ...(look && { application: look }) };
    const caller = { ...callerOf(ctx), locale: t.locale };
    try {
      await flow.verify(opened.experience, connectorId, verificationId, Object.fromEntries(new URLSearchParams(ctx.querystring)));
      try {
        await service.identify(opened.experience, verificationId);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'user.identity_not_exist') throw error;
        const related = error.data?.relatedUser;
        if (typeof related === 'string' && !enterprise) {
          const name = (await service.social.list()).find(({ id }) => id === connectorId)?.name ?? connectorId;
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

  // Where the passkey script sends the browser once its ceremony is done: the submit, or what it asks for next.
  router.get('/:uid/continue', route(renderSignIn, undefined, submitOrComplete));

  // MFA: prove a factor (the submit answered 403), enrol one (mandatory MFA), save backup codes.
  const renderChallenge = (request: PageRequest, error?: views.PageError) => views.mfaChallengePage(withError(request, error), request.mfaFactors);
  const challengeStep = (path: string, verify: (request: PageRequest, code: string) => Promise<unknown>) =>
    router.post(
      path,
      route(renderChallenge, async (request) => {
        await verify(request, field(request, 'code'));
        return submitOrComplete(request);
      }),
    );
  router.get('/:uid/mfa', route(renderChallenge));
  challengeStep('/:uid/mfa/totp', (request, code) => service.mfa.totpVerify(request.experience, digitsOf(code), undefined, request.caller));
  challengeStep('/:uid/mfa/backup-code', (request, code) => service.mfa.backupCodeVerify(request.experience, code, request.caller));

  /** The enrol page, with a fresh TOTP secret when the settings offer TOTP. */
  async function enrolPage(request: PageRequest, error?: views.PageError): Promise<string> {
    const { factors } = request.settings.mfa;
    const totp = factors.includes('Totp') ? await service.mfa.totpSecret(request.experience) : undefined;
    return views.mfaEnrolPage(withError(request, error), {
      ...(totp && { totp: { verificationId: totp.verificationId, secret: totp.secret, qrSvg: totp.secretQrSvg } }),
      passkey: factors.includes('WebAuthn'),
    });
  }
  router.get(
    '/:uid/mfa/enrol',
    route(renderSignIn, undefined, async (request) => ({ html: await enrolPage(request) })),
  );
  router.post(
    '/:uid/mfa/enrol/totp',
    route(renderSignIn, async (request) => {
      const verificationId = field(request, 'verificationId');
      try {
        await service.mfa.totpVerify(request.experience, digitsOf(field(request, 'code')), verificationId, request.caller);
        await service.mfa.bind(request.experience, 'Totp', verificationId);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        // A new secret, as the page shows one each time: the person scans again.
        return { html: await enrolPage(request, pageErrorOf(error, request.t)), status: error.status };
      }
      return submitOrComplete(request);
    }),
  );
  router.get(
    '/:uid/mfa/backup-codes',
    route(renderSignIn, undefined, async (request) => ({
      html: views.backupCodesPage(request.page, await service.mfa.backupCodesGenerate(request.experience)),
    })),
  );
  router.post(
    '/:uid/mfa/backup-codes',
    route(renderSignIn, async (request) => {
      await service.mfa.bind(request.experience, 'BackupCode', field(request, 'verificationId'));
      return submitOrComplete(request);
    }),
  );

  const hasPhoneMethods = (request: PageRequest) => request.settings.signIn.methods.some(({ identifier }) => identifier === 'phone');
  const renderForgot = (request: PageRequest, error?: views.PageError) =>
    views.forgotPasswordPage(withError(request, error), { identifier: field(request, 'identifier'), phone: hasPhoneMethods(request) });
  router.get('/:uid/forgot-password', route(renderForgot));
  router.post(
    '/:uid/forgot-password',
    route(renderForgot, async (request) => {
      const identifier = field(request, 'identifier');
      const target = hasPhoneMethods(request) ? contactOf(identifier) : ({ type: 'email', value: identifier } as const);
      request.experience = await service.start(request.experience, 'ForgotPassword');
      return aboutField('identifier', () => sendCodePage(request, target, views.resetPasswordPage));
    }),
  );
  // The reset signs nobody in: the sign-in page follows, where the new password (and the account's
  // second factor, when it has one) signs the person in.
  router.post(
    '/:uid/forgot-password/reset',
    route(
      (request, error) => views.resetPasswordPage(withError(request, error), sentCodeOf(request)),
      async (request) => {
        const sent = sentCodeOf(request);
        await service.verifyCode(request.experience, sent.verificationId, sent, digitsOf(field(request, 'code')));
        await identifyBy(request, sent);
        await service.resetPassword(request.experience, request.form.get('password') ?? '', request.caller);
        await service.submit(request.experience, clientOf(request), request.caller);
        return { html: renderSignIn(request, undefined, { identifier: sent.value, notice: request.t.t('reset.done') }) };
      },
    ),
  );

  /** The consent page: each permission by what its API's operator wrote about it, under the API's name. */
  async function renderConsent(request: PageRequest, error?: views.PageError): Promise<string> {
    const missing = request.details.prompt.details as MissingConsent;
    const asked = Object.entries(missing.missingResourceScopes ?? {});
    const described = await describeResources(asked.map(([indicator]) => indicator));
    return views.consentPage(withError(request, error), {
      scopes: missing.missingOIDCScope ?? [],
      resources: asked.map(([indicator, scopes]) => {
        const resource = described.get(indicator);
        return { indicator, name: resource?.name, scopes: scopes.map((name) => ({ name, description: resource?.scopes.get(name) })) };
      }),
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
