import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import type { Catalogs } from '../i18n/index.js';
import type { Branding } from '../experience/views/frame.js';
import { signInPage } from '../experience/views/sign-in.js';
import type { SignInSettings } from '../sign-in/settings.js';
import type { Dispatch } from './dispatch.js';
import { admittedOf, formOf, managementCaller, messageOf, refusedStatus, seeOther, type Admit, type Draw } from './routing.js';
import { draftOf, signInSettingsPage, type SettingsDraft } from './sign-in-settings-views.js';

const languages = ['en', 'de', 'ja'];

/** The form's draft of stored settings. */
function draftFrom(settings: SignInSettings): SettingsDraft {
  const { methods } = settings.signIn;
  return {
    signUpIdentifiers: [...settings.signUp.identifiers],
    signUpPassword: settings.signUp.password,
    signUpVerify: settings.signUp.verify,
    passwordSignIn: methods.filter(({ password }) => password).map(({ identifier }) => identifier),
    codeSignIn: methods.filter(({ verificationCode, identifier }) => verificationCode && identifier !== 'username').map(({ identifier }) => identifier),
    mfaFactors: [...settings.mfa.factors],
    mfaPolicy: settings.mfa.policy,
    passkeySignIn: settings.passkeySignIn.enabled,
  };
}

/** The parts of `PATCH /api/sign-in-exp` a draft sets: sign-up, sign-in methods (password first where both), MFA, passkeys. */
function patchOf(draft: SettingsDraft, stored: SignInSettings) {
  const identifiers = ['username', 'email', 'phone'] as const;
  const methods = identifiers
    .filter((identifier) => draft.passwordSignIn.includes(identifier) || draft.codeSignIn.includes(identifier))
    .map((identifier) => ({
      identifier,
      password: draft.passwordSignIn.includes(identifier),
      verificationCode: draft.codeSignIn.includes(identifier),
      isPasswordPrimary: draft.passwordSignIn.includes(identifier),
    }));
  return {
    signUp: { ...stored.signUp, identifiers: draft.signUpIdentifiers, password: draft.signUpPassword, verify: draft.signUpVerify },
    signIn: { methods },
    mfa: { ...stored.mfa, factors: draft.mfaFactors, policy: draft.mfaPolicy },
    passkeySignIn: { enabled: draft.passkeySignIn },
  };
}

/**
 * The sign-in settings (`GET/PATCH /api/sign-in-exp`), with a preview of the real sign-in page:
 * the page the pages serve, drawn by the same view with the saved settings or a draft, in a frame
 * that only the console's own pages may hold (`frame-ancestors 'self'`), inert (sandboxed: no
 * forms, no scripts).
 */
export function signInSettingsRoutes(
  router: Router,
  admitted: Admit,
  dispatch: Dispatch,
  draw: Draw,
  { branding, catalogs }: { branding: Branding; catalogs: Catalogs },
) {
  const { api } = managementCaller(dispatch);
  const stored = async (ctx: ParameterizedContext) => {
    const answer = await api(ctx, 'GET', '/api/sign-in-exp');
    if (answer.status !== 200) throw new Error(`the sign-in settings could not be read: ${answer.status} ${messageOf(answer)}`);
    return answer.body as SignInSettings;
  };
  /** The page's frame may hold the preview: one more source than the console's other pages allow. */
  const allowPreviewFrame = (ctx: ParameterizedContext) => {
    ctx.state.holdsPreview = true;
  };
  const languageOf = (value: unknown, fallback: string) => (typeof value === 'string' && languages.includes(value) ? value : fallback);

  router.get('/sign-in-settings', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    allowPreviewFrame(ctx);
    draw(
      ctx,
      signInSettingsPage(page, {
        draft: draftFrom(await stored(ctx)),
        language: languageOf(ctx.query.lang, page.t.locale),
        saved: true,
        notice: ctx.query.done === 'saved' ? page.t.t('console.settings.saved') : undefined,
      }),
    );
  });

  router.post('/sign-in-settings', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const fields = formOf(ctx);
    const draft = draftOf(fields);
    const language = languageOf(fields.get('lang'), page.t.locale);
    allowPreviewFrame(ctx);
    // A preview draws the draft beside the form, and saves nothing.
    if (fields.get('intent') === 'preview') return draw(ctx, signInSettingsPage(page, { draft, language, saved: false }));
    const answer = await api(ctx, 'PATCH', '/api/sign-in-exp', patchOf(draft, await stored(ctx)));
    if (answer.status !== 200) return draw(ctx, signInSettingsPage(page, { draft, language, saved: false, error: messageOf(answer) }), refusedStatus(answer));
    seeOther(ctx, `/sign-in-settings?done=saved&lang=${language}`);
  });

  // The preview: the sign-in page as the view draws it for the draft in the query, in the language asked.
  router.get('/sign-in-settings/preview', admitted, async (ctx) => {
    const draft = draftOf(new URLSearchParams(ctx.querystring));
    // The social connectors the page offers, as it offers them (their buttons, by name).
    const connectors = await api(ctx, 'GET', '/api/connectors');
    const social =
      connectors.status === 200
        ? (connectors.body as Array<{ id: string; metadata: { name: { en: string } } }>).map(({ id, metadata }) => ({ id, name: metadata.name.en }))
        : [];
    const t = catalogs.forRequest(languageOf(ctx.query.lang, 'en'), undefined);
    const body = signInPage(
      { branding, t, base: `${admittedOf(ctx).page.base}/sign-in-settings/preview`, csrf: '' },
      {
        password: draft.passwordSignIn as Array<'username' | 'email' | 'phone'>,
        code: draft.codeSignIn as Array<'email' | 'phone'>,
        passkey: draft.passkeySignIn,
        social,
      },
    );
    // The one console route a frame may show, and only to the console's own pages.
    ctx.set(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        "style-src 'self'",
        `img-src 'self'${branding.logoUrl ? ` ${new URL(branding.logoUrl).origin}` : ''}`,
        "form-action 'none'",
        "frame-ancestors 'self'",
        "base-uri 'none'",
      ].join('; '),
    );
    ctx.set('X-Frame-Options', 'SAMEORIGIN');
    ctx.status = 200;
    ctx.type = 'html';
    ctx.body = body;
  });
}
