import { en, type MessageKey } from '../../i18n/en.js';
import type { Translator } from '../../i18n/index.js';
import { cancelForm, codeField, field, form, page, type FieldSpec, type FormContext, type PageContext } from './frame.js';
import { html, Html } from './markup.js';

export { type ApplicationLook, type Branding, type FormContext, type PageContext, type PageError, passkeyScriptPath, webAuthnLibraryPath } from './frame.js';
export { stylesheet, stylesheetPath, colorsOfQuery, type BrandColors } from './stylesheet.js';

/** Where a code went, as a form carries it back: `email` or `phone` with its value as the person typed it. */
export interface SentCode {
  type: 'email' | 'phone';
  value: string;
  verificationId: string;
}

/** "Username, email or phone": the identifiers a form takes, as a label (its first letter up, where the language has case). */
export function identifierLabel(t: Translator, types: ReadonlyArray<'username' | 'email' | 'phone'>): string {
  const list = identifierList(t, types);
  return `${list.charAt(0).toLocaleUpperCase(t.locale)}${list.slice(1)}`;
}
const identifierList = (t: Translator, types: ReadonlyArray<'username' | 'email' | 'phone'>) => t.or(types.map((type) => t.t(`identifier.${type}`)));

/** The input type and hints for an email address, a phone number, or either. */
const contactInput = (types: ReadonlyArray<'email' | 'phone'>) =>
  types.length === 1 && types[0] === 'phone'
    ? ({ type: 'tel', inputmode: 'tel', autocomplete: 'tel' } as const)
    : types.length === 1
      ? ({ type: 'email', autocomplete: 'email' } as const)
      : ({ type: 'text', autocomplete: 'username' } as const);

/** The fields several pages ask for, each with its label, type and `autocomplete` in one place. */
const fieldsFor = (t: Translator, minPasswordLength: number) =>
  ({
    username: { id: 'username', label: t.t('field.username'), hint: t.t('hint.username'), autocomplete: 'username' },
    email: { id: 'email', label: t.t('field.email'), type: 'email', autocomplete: 'email' },
    phone: { id: 'phone', label: t.t('field.phone'), type: 'tel', inputmode: 'tel', autocomplete: 'tel' },
    newPassword: {
      id: 'password',
      label: t.t('field.password'),
      hint: t.t('hint.password', { min: minPasswordLength }),
      type: 'password',
      autocomplete: 'new-password',
      minlength: minPasswordLength,
      required: true,
    },
  }) satisfies Record<string, FieldSpec>;

/** Whether `value` is something a code can go to: an address where email codes are offered, a number where phone codes are. */
const reachableBy = (value: string, types: ReadonlyArray<'email' | 'phone'>) =>
  (types.includes('email') && value.includes('@')) || (types.includes('phone') && /^\+?[\d\s().-]{6,}$/.test(value));

/** What the sign-in page offers, from the settings: a password form for some identifiers, a code for others. */
export interface SignInOffer {
  identifier?: string;
  /** Social connectors to continue with. */
  social?: Array<{ id: string; name: string }>;
  /** Offer a passkey sign-in (the settings' `passkeySignIn`). */
  passkey?: boolean;
  /** Offer single sign-on (an enterprise SSO connector exists). */
  sso?: boolean;
  /** The identifiers that sign in with a password (none: no password form). */
  password: Array<'username' | 'email' | 'phone'>;
  /** The identifiers that sign in with a code (none: no code form). */
  code: Array<'email' | 'phone'>;
}

export function signInPage(context: FormContext, { identifier = '', password, code, passkey = false, social = [], sso = false }: SignInOffer): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('signIn.title'), passkeys: passkey },
    html` ${
        password.length > 0
          ? form(
              context,
              '/sign-in',
              html`${field(context, { id: 'identifier', label: identifierLabel(t, password), autocomplete: 'username', value: identifier, required: true, autofocus: true })}
                ${field(context, { id: 'password', label: t.t('field.password'), type: 'password', autocomplete: 'current-password', required: true })}
                <button type="submit">${t.t('signIn.submit')}</button>`,
            )
          : ''
      }
      ${
        code.length > 0
          ? form(
              context,
              '/sign-in/code',
              html`${password.length > 0 ? html`<p class="or">${t.t('signIn.orCode')}</p>` : ''}
                ${field(context, {
                  id: 'code-identifier',
                  name: 'identifier',
                  label: identifierLabel(t, code),
                  ...contactInput(code),
                  // What was typed carries over only if the code form takes it (a username is no address).
                  value: reachableBy(identifier, code) ? identifier : '',
                  required: true,
                  autofocus: password.length === 0,
                })} <button type="submit" ${password.length > 0 ? html`class="secondary"` : ''}>${t.t('signIn.sendCode')}</button>`,
            )
          : ''
      }
      ${passkey ? passkeyButton(context, 'sign-in', t.t('signIn.passkey')) : ''}
      ${social.map((connector) => html`<a class="button secondary" href="${context.base}/social/${connector.id}">${t.t('signIn.continueWith', { connector: connector.name })}</a>`)}
      ${sso ? html`<a class="button secondary" href="${context.base}/sso">${t.t('signIn.sso')}</a>` : ''}
      <nav>
        ${password.length > 0 ? html`<a href="${context.base}/forgot-password">${t.t('signIn.forgot')}</a>` : ''}<a href="${context.base}/sign-up"
          >${t.t('signIn.createAccount')}</a
        >
      </nav>
      ${cancelForm(context)}`,
  );
}

/** A button the passkey script drives (`register`, `authenticate` or `sign-in`), and where it says what went wrong, in the page's language. */
const passkeyButton = (context: FormContext, mode: 'register' | 'authenticate' | 'sign-in', label: string) =>
  html`<button
      type="button"
      class="secondary"
      data-passkey="${mode}"
      data-base="${context.base}"
      data-not-used="${context.t.t('passkey.notUsed')}"
      data-failed="${context.t.t('passkey.failed')}"
    >
      ${label}
    </button>
    <p class="error" id="passkey-status" role="alert" hidden></p>`;

/** The second factors a user may prove now, one form (or button) each. */
export function mfaChallengePage(context: FormContext, factors: Array<'Totp' | 'WebAuthn' | 'BackupCode'>): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('mfa.title'), lead: t.t('mfa.lead'), passkeys: factors.includes('WebAuthn') },
    html` ${factors.includes('WebAuthn') ? passkeyButton(context, 'authenticate', t.t('mfa.usePasskey')) : ''}
    ${
      factors.includes('Totp')
        ? form(
            context,
            '/mfa/totp',
            html`${codeField(context, { id: 'totp', label: t.t('mfa.totpLabel'), autofocus: !factors.includes('WebAuthn') })}
              <button type="submit">${t.t('action.verify')}</button>`,
          )
        : ''
    }
    ${
      factors.includes('BackupCode')
        ? form(
            context,
            '/mfa/backup-code',
            html`${field(context, { id: 'backup-code', name: 'code', label: t.t('mfa.backupLabel'), autocomplete: 'off', required: true })}
              <button type="submit" class="secondary">${t.t('mfa.useBackup')}</button>`,
          )
        : ''
    }
    ${cancelForm(context)}`,
  );
}

/** Enrolling a second factor: an authenticator app (its QR code and secret, then a code from it) or a passkey. */
export function mfaEnrolPage(
  context: FormContext,
  { totp, passkey }: { totp?: { verificationId: string; secret: string; qrSvg: string }; passkey: boolean },
): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('mfaEnrol.title'), lead: t.t('mfaEnrol.lead'), passkeys: passkey },
    html` ${
      passkey
        ? html`<p>${t.t('mfaEnrol.passkeyIntro')}</p>
            ${passkeyButton(context, 'register', t.t('mfaEnrol.createPasskey'))}`
        : ''
    }
    ${
      totp
        ? form(
            context,
            '/mfa/enrol/totp',
            html`<p>${t.t('mfaEnrol.scan')}</p>
              <div class="qr" role="img" aria-label="${t.t('mfaEnrol.qrLabel')}">${new Html(totp.qrSvg)}</div>
              <p class="hint">${t.t('mfaEnrol.key')} <code id="totp-secret">${totp.secret}</code></p>
              <input type="hidden" name="verificationId" value="${totp.verificationId}" />
              ${codeField(context, { id: 'totp', label: t.t('mfaEnrol.codeLabel'), autofocus: false })}
              <button type="submit">${t.t('mfaEnrol.submit')}</button>`,
          )
        : ''
    }`,
  );
}

/** New backup codes, shown once, with a download; continuing binds them. */
export function backupCodesPage(context: FormContext, { verificationId, codes }: { verificationId: string; codes: string[] }): string {
  const { t } = context;
  const file = `data:text/plain;charset=utf-8,${encodeURIComponent(`${t.t('backupCodes.file', { product: context.branding.productName })}\n\n${codes.join('\n')}\n`)}`;
  return page(
    context,
    { title: t.t('backupCodes.title'), lead: t.t('backupCodes.lead') },
    html`<ul class="codes">
        ${codes.map((code) => html`<li><code>${code}</code></li>`)}
      </ul>
      <p><a href="${file}" download="backup-codes.txt">${t.t('backupCodes.download')}</a></p>
      ${form(
        context,
        '/mfa/backup-codes',
        html`<input type="hidden" name="verificationId" value="${verificationId}" /> <button type="submit">${t.t('backupCodes.saved')}</button>`,
      )}`,
  );
}

/** Single sign-on, first step: the work email, whose domain names the company's identity provider. */
export function ssoEmailPage(context: FormContext, email = ''): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('sso.title'), lead: t.t('sso.lead') },
    html`${form(
        context,
        '/sso',
        html`${field(context, { id: 'email', label: t.t('sso.email'), type: 'email', autocomplete: 'email', value: email, required: true, autofocus: true })}
          <button type="submit">${t.t('action.continue')}</button>`,
      )}
      <nav><a href="${context.base}">${t.t('signIn.otherMethods')}</a></nav>`,
  );
}

/** Single sign-on, second step: the company's identity providers for that domain (links: the browser goes on to the IdP). */
export function ssoChoicePage(context: FormContext, email: string, connectors: Array<{ id: string; name: string }>): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('sso.title'), lead: t.t('sso.choiceLead', { email }) },
    html`${connectors.map((connector) => html`<a class="button" href="${context.base}/sso/${connector.id}">${t.t('signIn.continueWith', { connector: connector.name })}</a>`)}
      <nav><a href="${context.base}/sso">${t.t('sso.anotherEmail')}</a></nav>`,
  );
}

/** Linking an upstream account to the account that has its email: asked, never assumed. */
export function linkSocialPage(
  context: FormContext,
  { connectorName, email, verificationId }: { connectorName: string; email: string; verificationId: string },
): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('link.title'), lead: t.t('link.lead', { email, connector: connectorName }) },
    html`${form(
      context,
      '/social/link',
      html`<input type="hidden" name="verificationId" value="${verificationId}" /> <button type="submit">${t.t('link.submit')}</button>`,
    )}
    ${cancelForm(context)}`,
  );
}

/** What the sign-up page asks for, from the settings, and what was typed. */
export interface SignUpOffer {
  fields: { username: boolean; email: boolean; phone: boolean; password: boolean };
  values: { username?: string; email?: string; phone?: string };
  minPasswordLength: number;
}

export function signUpPage(context: FormContext, { fields, values, minPasswordLength }: SignUpOffer): string {
  const { t } = context;
  const specs = fieldsFor(t, minPasswordLength);
  const offered = (['username', 'email', 'phone'] as const).filter((name) => fields[name]);
  const lead = offered.length > 1 ? t.t('signUp.lead', { identifiers: identifierList(t, offered) }) : undefined;
  // The first field asks for focus (WCAG 2.4.3: the page starts where the work does).
  const first: string = offered[0] ?? 'password';
  const hints = { username: specs.username.hint, email: t.t('hint.emailCode'), phone: t.t('hint.phoneCode') };
  return page(
    context,
    { title: t.t('signUp.title'), lead },
    html`${form(
        context,
        '/sign-up',
        html`${offered.map((name) => field(context, { ...specs[name], hint: hints[name], value: values[name] ?? '', autofocus: first === name }))}
          ${fields.password ? field(context, { ...specs.newPassword, autofocus: first === 'password' }) : ''}
          <button type="submit">${t.t('signUp.submit')}</button>`,
      )}
      <nav><a href="${context.base}">${t.t('signUp.haveAccount')}</a></nav>`,
  );
}

/** The flows that send a code, each with the page step that takes it: what the resend form names. */
export type CodeFlow = 'sign-up' | 'sign-in' | 'profile' | 'reset';

/** "No code? Send a new code": the same target again, through the send limits (a refusal says how long to wait). */
const resendForm = (context: FormContext, flow: CodeFlow, sent: SentCode) =>
  form(
    context,
    '/code/resend',
    html`<input type="hidden" name="flow" value="${flow}" />
      <input type="hidden" name="${sent.type}" value="${sent.value}" />
      <input type="hidden" name="verificationId" value="${sent.verificationId}" />
      <p class="resend">${context.t.t('code.resendPrompt')} <button type="submit" class="link">${context.t.t('code.resend')}</button></p>`,
  );

/** The fields of a form that answers a code: which code, and the code. */
const codeInputs = (context: FormContext, { type, value, verificationId }: SentCode, autofocus = true) =>
  html`<input type="hidden" name="${type}" value="${value}" />
    <input type="hidden" name="verificationId" value="${verificationId}" />
    ${codeField(context, { autofocus })}`;

const codeSteps: Record<
  Exclude<CodeFlow, 'reset'>,
  {
    action: string;
    button: 'code.signUpSubmit' | 'code.signInSubmit' | 'code.profileSubmit';
    back: { href: string; text: 'code.startAgain' | 'code.backToSignIn' | 'code.useAnother' };
  }
> = {
  'sign-up': { action: '/sign-up/code', button: 'code.signUpSubmit', back: { href: '/sign-up', text: 'code.startAgain' } },
  'sign-in': { action: '/sign-in/code/verify', button: 'code.signInSubmit', back: { href: '', text: 'code.backToSignIn' } },
  profile: { action: '/profile/code', button: 'code.profileSubmit', back: { href: '/profile', text: 'code.useAnother' } },
};

/** The page that takes a code sent by mail or text, for the flow's step. */
export function codePage(context: FormContext, flow: CodeFlow, sent: SentCode): string {
  if (flow === 'reset') return resetPasswordPage(context, sent);
  const { t } = context;
  const { action, button, back } = codeSteps[flow];
  return page(
    context,
    { title: t.t(sent.type === 'email' ? 'code.titleEmail' : 'code.titlePhone'), lead: t.t('code.lead', { target: sent.value }) },
    html`${form(context, action, html`${codeInputs(context, sent)} <button type="submit">${t.t(button)}</button>`)} ${resendForm(context, flow, sent)}
      <nav><a href="${context.base}${back.href}">${t.t(back.text)}</a></nav>`,
  );
}

export const signUpCodePage = (context: FormContext, sent: SentCode) => codePage(context, 'sign-up', sent);
export const signInCodePage = (context: FormContext, sent: SentCode) => codePage(context, 'sign-in', sent);
export const profileCodePage = (context: FormContext, sent: SentCode) => codePage(context, 'profile', sent);

/** One thing the account still needs (Logto's profile fulfilment), as a form. */
export type ProfileStep = 'username' | 'email' | 'phone' | 'emailOrPhone' | 'password';

export function profilePage(context: FormContext, step: ProfileStep, value = '', minPasswordLength = 8): string {
  const { t } = context;
  const specs = fieldsFor(t, minPasswordLength);
  const asked: Record<ProfileStep, FieldSpec> = {
    username: { ...specs.username, value },
    email: { ...specs.email, value },
    phone: { ...specs.phone, hint: t.t('hint.countryCode'), value },
    emailOrPhone: { id: 'identifier', label: t.t('field.emailOrPhone'), autocomplete: 'email', value },
    password: specs.newPassword,
  };
  return page(
    context,
    { title: t.t(`profile.${step}.title`), lead: t.t(`profile.${step}.lead`) },
    html`${form(
      context,
      '/profile',
      html`<input type="hidden" name="step" value="${step}" />
        ${field(context, { ...asked[step], required: true, autofocus: true })}
        <button type="submit">${t.t(step === 'username' || step === 'password' ? 'action.continue' : 'action.sendCode')}</button>`,
    )}
    ${cancelForm(context)}`,
  );
}

export function forgotPasswordPage(context: FormContext, { identifier = '', phone }: { identifier?: string; phone: boolean }): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('forgot.title'), lead: t.t(phone ? 'forgot.leadAny' : 'forgot.leadEmail') },
    html`${form(
        context,
        '/forgot-password',
        html`${field(context, {
            id: 'identifier',
            label: t.t(phone ? 'field.emailOrPhone' : 'field.email'),
            type: phone ? 'text' : 'email',
            autocomplete: 'email',
            value: identifier,
            required: true,
            autofocus: true,
          })} <button type="submit">${t.t('action.sendCode')}</button>`,
      )}
      <nav><a href="${context.base}">${t.t('code.backToSignIn')}</a></nav>`,
  );
}

export function resetPasswordPage(context: FormContext, sent: SentCode, minPasswordLength = 8): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('reset.title'), lead: t.t('reset.lead', { target: sent.value }) },
    html`${form(
        context,
        '/forgot-password/reset',
        html`${codeInputs(context, sent)} ${field(context, { ...fieldsFor(t, minPasswordLength).newPassword, label: t.t('field.newPassword') })}
          <button type="submit">${t.t('reset.submit')}</button>`,
      )}
      ${resendForm(context, 'reset', sent)}
      <nav><a href="${context.base}/forgot-password">${t.t('reset.another')}</a></nav>`,
  );
}

/** What a consent asks for: the OpenID scopes, and each API resource's permissions with what its operator wrote about them. */
export interface ConsentRequest {
  scopes: string[];
  resources: Array<{ indicator: string; name?: string | undefined; scopes: Array<{ name: string; description?: string | null | undefined }> }>;
}

export function consentPage(context: FormContext, { scopes, resources }: ConsentRequest): string {
  const { t, application } = context;
  const name = application?.name ?? '';
  // A scope the catalogs describe (`scope.<name>`) by its words; any other by its name.
  const scopeText = (scope: string) => (`scope.${scope}` in en ? t.t(`scope.${scope}` as MessageKey) : scope);
  const policies = [
    application?.termsOfUseUrl && html`<a href="${application.termsOfUseUrl}" rel="noopener noreferrer" target="_blank">${t.t('consent.terms')}</a>`,
    application?.privacyPolicyUrl && html`<a href="${application.privacyPolicyUrl}" rel="noopener noreferrer" target="_blank">${t.t('consent.privacy')}</a>`,
  ].filter((link): link is Html => link instanceof Html);
  return page(
    context,
    { title: t.t('consent.title', { application: name }), lead: t.t('consent.lead', { application: name }) },
    html` ${
      scopes.length > 0
        ? html`<section aria-labelledby="consent-account">
            <h2 id="consent-account">${t.t('consent.profile')}</h2>
            <ul class="scopes">
              ${scopes.map((scope) => html`<li>${scopeText(scope)}</li>`)}
            </ul>
          </section>`
        : ''
    }
    ${resources.map(
      ({ indicator, name: resourceName, scopes: asked }, index) =>
        html`<section aria-labelledby="consent-resource-${index}">
          <h2 id="consent-resource-${index}">${resourceName ?? indicator}</h2>
          <ul class="scopes">
            ${asked.map((scope) => html`<li>${scope.description ? html`${scope.description} <span class="hint">(${scope.name})</span>` : scope.name}</li>`)}
          </ul>
        </section>`,
    )}
    ${
      policies.length > 0
        ? html`<p class="policies">
            ${t.t('consent.policies', { application: name })} ${policies.map((link, index) => html`${index > 0 ? ' · ' : ''}${link}`)}
          </p>`
        : ''
    }
    ${form(
      context,
      '/consent',
      html`<button type="submit" name="decision" value="allow">${t.t('consent.allow')}</button>
        <button type="submit" name="decision" value="deny" class="secondary">${t.t('consent.deny')}</button>`,
    )}`,
  );
}

/** A page that only says something (an expired sign-in, an outage, a failed upstream sign-in). */
export function messagePage(context: PageContext, title: string, text: string, lang?: string): string {
  return page(context, { title }, html`<p class="lead" ${lang ? html` lang="${lang}"` : ''}>${text}</p>`);
}

/** oidc-provider's sign-out question, in the same look; `logoutForm` is the provider's own hidden form. */
export function signOutPage(context: PageContext, logoutForm: string): string {
  const { t } = context;
  return page(
    context,
    { title: t.t('signOut.title'), lead: t.t('signOut.lead') },
    html`${new Html(logoutForm)}
      <button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>${t.t('signOut.yes')}</button>
      <button type="submit" form="op.logoutForm" class="secondary">${t.t('signOut.no')}</button>`,
  );
}
