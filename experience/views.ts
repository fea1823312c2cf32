/** The operator's look: product name, logo and primary colour (see README, Sign-in experience). */
export interface Branding {
  productName: string;
  logoUrl?: string;
  /** A CSS hex colour, `#rrggbb`. */
  primaryColor: string;
}

export const stylesheetPath = '/interaction-assets/style.css';
/** The WebAuthn browser library (@simplewebauthn/browser's bundle) and our few lines that use it: the pages' only scripts. */
export const webAuthnLibraryPath = '/interaction-assets/simplewebauthn-browser.js';
export const passkeyScriptPath = '/interaction-assets/passkey.js';

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Escapes text for HTML element content and double-quoted attributes. */
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => escapes[character]!);

/** A trusted piece of markup: only the templates below make one. */
class Html {
  constructor(readonly markup: string) {}
  toString() {
    return this.markup;
  }
}

/** A tagged template that escapes every value that is not already markup. */
function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const render = (value: unknown): string => {
    if (value instanceof Html) return value.markup;
    if (Array.isArray(value)) return value.map(render).join('');
    if (value === undefined || value === null || value === false) return '';
    return escapeHtml(String(value));
  };
  return new Html(strings.reduce((markup, part, index) => markup + part + (index < values.length ? render(values[index]) : ''), ''));
}

/** The stylesheet, with the operator's colour: served from our origin so that the CSP needs no inline style. */
export const stylesheet = ({ primaryColor }: Branding) => `
:root { --primary: ${primaryColor}; --text: #1d2129; --muted: #5c6370; --line: #d0d4da; --control: #6b7280; --focus: #1d2129;
  --page: #f4f5f7; --card: #fff; --field: #fff; --link: var(--primary); --error: #b42318; --error-bg: #fef3f2; --error-line: #fecdca; color-scheme: light dark; }
/* Dark, when the person's system asks for it: the same contrasts (text 4.5:1, borders and the focus ring 3:1). */
@media (prefers-color-scheme: dark) {
  :root { --text: #e6e8eb; --muted: #aab1bc; --line: #3a3f47; --control: #8d95a3; --focus: #e6e8eb; --page: #0f1115; --card: #181b21; --field: #0f1115;
    --link: color-mix(in srgb, var(--primary) 45%, #fff); --error: #fda29b; --error-bg: #2a1514; --error-line: #7a271a; }
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--page); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { width: min(100% - 2rem, 24rem); margin: 2rem 0; padding: 2rem; background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
header { text-align: center; margin-bottom: 1.5rem; }
header img { max-height: 48px; max-width: 100%; }
header .product { margin: .25rem 0 0; color: var(--muted); font-size: .9rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 0; }
p.lead { color: var(--muted); margin: .25rem 0 1rem; }
p.application { margin: .25rem 0 0; color: var(--muted); }
p.application strong { color: var(--text); }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
label .hint { font-weight: 400; color: var(--muted); font-size: .85rem; }
/* A field's border and the focus ring stand out from the card at 3:1 at least (WCAG 2.2, 1.4.11 and 2.4.13). */
input[type=text], input[type=email], input[type=tel], input[type=password] { width: 100%; min-height: 44px; padding: .6rem .7rem; font: inherit; color: var(--text); background: var(--field); border: 1px solid var(--control); border-radius: 8px; }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button { width: 100%; margin-top: 1.5rem; padding: .7rem; font: inherit; font-weight: 600; color: #fff; background: var(--primary); border: 0; border-radius: 8px; cursor: pointer; }
/* The way out is quiet beside the way in: no fill, the text's own colour. */
button.secondary { margin-top: .75rem; color: var(--text); background: transparent; border: 1px solid var(--control); font-weight: 400; }
a.button { display: block; box-sizing: border-box; width: 100%; margin-top: .75rem; padding: .7rem; text-align: center; font-weight: 600; text-decoration: none; border-radius: 8px; }
a.button.secondary { color: var(--text); background: transparent; border: 1px solid var(--control); font-weight: 400; }
.error { margin: 0 0 1rem; padding: .6rem .8rem; color: var(--error); background: var(--error-bg); border: 1px solid var(--error-line); border-radius: 8px; }
nav { display: flex; justify-content: space-between; gap: 1rem; margin-top: 1.25rem; font-size: .9rem; }
a { color: var(--link); }
ul.scopes { padding-left: 1.2rem; }
p.or { margin: 1.5rem 0 0; text-align: center; color: var(--muted); font-size: .9rem; }
.qr svg { display: block; width: 12rem; height: 12rem; margin: .5rem auto; padding: .5rem; background: #fff; border-radius: 8px; } /* scannable in dark mode too */
ul.codes { columns: 2; padding-left: 1.2rem; font-size: 1.05rem; }
p.hint { color: var(--muted); font-size: .9rem; word-break: break-all; }
`;

interface PageFrame {
  branding: Branding;
  /** The application the person signs in to, named on every page of its interaction. */
  applicationName?: string | undefined;
  title: string;
  lead?: string;
  error?: string | undefined;
  /** Loads the passkey scripts (served from our origin; no inline script). */
  passkeys?: boolean;
}

function page({ branding, applicationName, title, lead, error, passkeys }: PageFrame, content: Html): string {
  return `<!doctype html>${html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>${title} · ${branding.productName}</title>
      <link rel="stylesheet" href="${stylesheetPath}" />
      ${
        passkeys
          ? html`<script src="${webAuthnLibraryPath}" defer></script>
              <script src="${passkeyScriptPath}" defer></script>`
          : ''
      }
    </head>
    <body>
      <main>
        <header>
          ${branding.logoUrl ? html`<img src="${branding.logoUrl}" alt="${branding.productName}" />` : ''}
          <p class="product">${branding.productName}</p>
          <h1>${title}</h1>
          ${applicationName ? html`<p class="application">to continue to <strong>${applicationName}</strong></p>` : ''}
          ${lead ? html`<p class="lead">${lead}</p>` : ''}
        </header>
        ${error ? html`<p class="error" role="alert">${error}</p>` : ''} ${content}
      </main>
    </body>
  </html>`}`;
}

/** What every form of an interaction needs: where it posts and its CSRF token. */
export interface FormContext {
  branding: Branding;
  /** The application the interaction is for (its name, as its registration gives it). */
  applicationName?: string | undefined;
  /** The interaction's base path, `/interaction/<uid>`. */
  base: string;
  csrf: string;
  error?: string | undefined;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}" />`;

/** Where a code went, as a form carries it back: `email` or `phone` with its value as the person typed it. */
export interface SentCode {
  type: 'email' | 'phone';
  value: string;
  verificationId: string;
}

/** The fields of a form that answers a code: which code, and the code. */
const codeInputs = ({ type, value, verificationId }: SentCode) =>
  html`<input type="hidden" name="${type}" value="${value}" />
    <input type="hidden" name="verificationId" value="${verificationId}" />
    <label for="code">Verification code</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus />`;

/** "Username, email or phone": the identifiers a form takes, as a label. */
export function identifierLabel(types: ReadonlyArray<'username' | 'email' | 'phone'>): string {
  const words = types.map((type, index) => (index === 0 ? `${type.charAt(0).toUpperCase()}${type.slice(1)}` : type));
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}

/** The input type and hints for an email address, a phone number, or either. */
const contactInput = (types: ReadonlyArray<'email' | 'phone'>) =>
  types.length === 1 && types[0] === 'phone'
    ? html`type="tel" inputmode="tel" autocomplete="tel"`
    : types.length === 1
      ? html`type="email" autocomplete="email"`
      : html`type="text" autocomplete="username"`;

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

export function signInPage(form: FormContext, { identifier = '', password, code, passkey = false, social = [], sso = false }: SignInOffer): string {
  return page(
    { ...form, title: 'Sign in', passkeys: passkey },
    html` ${
        password.length > 0
          ? html`<form method="post" action="${form.base}/sign-in">
              ${csrfField(form.csrf)}
              <label for="identifier">${identifierLabel(password)}</label>
              <input id="identifier" name="identifier" type="text" autocomplete="username" value="${identifier}" required autofocus />
              <label for="password">Password</label>
              <input id="password" name="password" type="password" autocomplete="current-password" required />
              <button type="submit">Sign in</button>
            </form>`
          : ''
      }
      ${
        code.length > 0
          ? html`<form method="post" action="${form.base}/sign-in/code">
              ${csrfField(form.csrf)} ${password.length > 0 ? html`<p class="or">Or get a one-time code</p>` : ''}
              <label for="code-identifier">${identifierLabel(code)}</label>
              <input
                id="code-identifier"
                name="identifier"
                ${contactInput(code)}
                value="${identifier}"
                required
                ${password.length > 0 ? '' : html`autofocus`}
              />
              <button type="submit" ${password.length > 0 ? html`class="secondary"` : ''}>Send me a code</button>
            </form>`
          : ''
      }
      ${passkey ? passkeyButton(form, 'sign-in', 'Sign in with a passkey') : ''}
      ${social.map((connector) => html`<a class="button secondary" href="${form.base}/social/${connector.id}">Continue with ${connector.name}</a>`)}
      ${sso ? html`<a class="button secondary" href="${form.base}/sso">Use your company account</a>` : ''}
      <nav>
        ${password.length > 0 ? html`<a href="${form.base}/forgot-password">Forgot your password?</a>` : html`<span></span>`}<a href="${form.base}/sign-up"
          >Create an account</a
        >
      </nav>
      <form method="post" action="${form.base}/abort">${csrfField(form.csrf)}<button type="submit" class="secondary">Cancel</button></form>`,
  );
}

/** A button the passkey script drives (`register`, `authenticate` or `sign-in`), and where it says what went wrong. */
const passkeyButton = (form: FormContext, mode: 'register' | 'authenticate' | 'sign-in', label: string) =>
  html`<button type="button" class="secondary" data-passkey="${mode}" data-base="${form.base}">${label}</button>
    <p class="error" id="passkey-status" role="alert" hidden></p>`;

/** The second factors a user may prove now, one form (or button) each. */
export function mfaChallengePage(form: FormContext, factors: Array<'Totp' | 'WebAuthn' | 'BackupCode'>): string {
  return page(
    { ...form, title: 'Two-step verification', lead: 'Prove it is you with your second factor.', passkeys: factors.includes('WebAuthn') },
    html` ${factors.includes('WebAuthn') ? passkeyButton(form, 'authenticate', 'Use your passkey') : ''}
      ${
        factors.includes('Totp')
          ? html`<form method="post" action="${form.base}/mfa/totp">
              ${csrfField(form.csrf)}
              <label for="totp">Code from your authenticator app</label>
              <input id="totp" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required />
              <button type="submit">Verify</button>
            </form>`
          : ''
      }
      ${
        factors.includes('BackupCode')
          ? html`<form method="post" action="${form.base}/mfa/backup-code">
              ${csrfField(form.csrf)}
              <label for="backup-code">A backup code</label>
              <input id="backup-code" name="code" type="text" autocomplete="off" required />
              <button type="submit" class="secondary">Use a backup code</button>
            </form>`
          : ''
      }
      <form method="post" action="${form.base}/abort">${csrfField(form.csrf)}<button type="submit" class="secondary">Cancel</button></form>`,
  );
}

/** Enrolling a second factor: an authenticator app (its QR code and secret, then a code from it) or a passkey. */
export function mfaEnrolPage(
  form: FormContext,
  { totp, passkey }: { totp?: { verificationId: string; secret: string; qrSvg: string }; passkey: boolean },
): string {
  return page(
    { ...form, title: 'Set up two-step verification', lead: 'Your account needs a second factor before you continue.', passkeys: passkey },
    html` ${
      passkey
        ? html`<p>Use a passkey on this device or a security key:</p>
            ${passkeyButton(form, 'register', 'Create a passkey')}`
        : ''
    }
    ${
      totp
        ? html`<form method="post" action="${form.base}/mfa/enrol/totp">
            ${csrfField(form.csrf)}
            <p>Or scan this code with an authenticator app:</p>
            <div class="qr">${new Html(totp.qrSvg)}</div>
            <p class="hint">Or enter this key: <code id="totp-secret">${totp.secret}</code></p>
            <input type="hidden" name="verificationId" value="${totp.verificationId}" />
            <label for="totp">The code it shows</label>
            <input id="totp" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required />
            <button type="submit">Verify and continue</button>
          </form>`
        : ''
    }`,
  );
}

/** New backup codes, shown once, with a download; continuing binds them. */
export function backupCodesPage(form: FormContext, { verificationId, codes }: { verificationId: string; codes: string[] }): string {
  const file = `data:text/plain;charset=utf-8,${encodeURIComponent(`${form.branding.productName} backup codes\n\n${codes.join('\n')}\n`)}`;
  return page(
    { ...form, title: 'Save your backup codes', lead: 'Each code signs you in once if you lose your second factor. They are shown only now.' },
    html`<ul class="codes">
        ${codes.map((code) => html`<li><code>${code}</code></li>`)}
      </ul>
      <p><a href="${file}" download="backup-codes.txt">Download the codes</a></p>
      <form method="post" action="${form.base}/mfa/backup-codes">
        ${csrfField(form.csrf)}
        <input type="hidden" name="verificationId" value="${verificationId}" />
        <button type="submit">I have saved them</button>
      </form>`,
  );
}

/** Single sign-on, first step: the work email, whose domain names the company's identity provider. */
export function ssoEmailPage(form: FormContext, email = ''): string {
  return page(
    { ...form, title: 'Use your company account', lead: 'Enter your work email: your company’s sign-in page takes it from there.' },
    html`<form method="post" action="${form.base}/sso">
        ${csrfField(form.csrf)}
        <label for="email">Work email</label>
        <input id="email" name="email" type="email" autocomplete="email" value="${email}" required autofocus />
        <button type="submit">Continue</button>
      </form>
      <nav><a href="${form.base}">Other ways to sign in</a><span></span></nav>`,
  );
}

/** Single sign-on, second step: the company's identity providers for that domain (links: the browser goes on to the IdP). */
export function ssoChoicePage(form: FormContext, email: string, connectors: Array<{ id: string; name: string }>): string {
  return page(
    { ...form, title: 'Use your company account', lead: `Sign in as ${email} with your company’s identity provider.` },
    html`${connectors.map((connector) => html`<a class="button" href="${form.base}/sso/${connector.id}">Continue with ${connector.name}</a>`)}
      <nav><a href="${form.base}/sso">Use another email</a><span></span></nav>`,
  );
}

/** Linking an upstream account to the account that has its email: asked, never assumed. */
export function linkSocialPage(
  form: FormContext,
  { connectorName, email, verificationId }: { connectorName: string; email: string; verificationId: string },
): string {
  return page(
    { ...form, title: 'Link your account?', lead: `An account with ${email} exists already. Sign in to it with ${connectorName} from now on?` },
    html`<form method="post" action="${form.base}/social/link">
        ${csrfField(form.csrf)}
        <input type="hidden" name="verificationId" value="${verificationId}" />
        <button type="submit">Link and sign in</button>
      </form>
      <form method="post" action="${form.base}/abort">${csrfField(form.csrf)}<button type="submit" class="secondary">Cancel</button></form>`,
  );
}

/** What the sign-up page asks for, from the settings, and what was typed. */
export interface SignUpOffer {
  fields: { username: boolean; email: boolean; phone: boolean; password: boolean };
  values: { username?: string; email?: string; phone?: string };
}

export function signUpPage(form: FormContext, { fields, values }: SignUpOffer): string {
  const offered = (['username', 'email', 'phone'] as const).filter((name) => fields[name]);
  const lead = offered.length > 1 ? `Give your ${identifierLabel(offered).toLowerCase()}.` : undefined;
  return page(
    { ...form, title: 'Create your account', ...(lead && { lead }) },
    html` <form method="post" action="${form.base}/sign-up">
        ${csrfField(form.csrf)}
        ${
          fields.username
            ? html`<label for="username">Username <span class="hint">(letters, digits and _)</span></label>
                <input id="username" name="username" type="text" autocomplete="username" value="${values.username ?? ''}" />`
            : ''
        }
        ${
          fields.email
            ? html`<label for="email">Email <span class="hint">(we will send a code to check it)</span></label>
                <input id="email" name="email" type="email" autocomplete="email" value="${values.email ?? ''}" />`
            : ''
        }
        ${
          fields.phone
            ? html`<label for="phone">Phone <span class="hint">(with its country code; we will text a code to check it)</span></label>
                <input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" value="${values.phone ?? ''}" />`
            : ''
        }
        ${
          fields.password
            ? html`<label for="password">Password <span class="hint">(at least 8 characters)</span></label>
                <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required />`
            : ''
        }
        <button type="submit">Create account</button>
      </form>
      <nav><span></span><a href="${form.base}">I already have an account</a></nav>`,
  );
}

/** The page that takes a code sent by mail or text, for the step `action` names. */
export function codePage(
  form: FormContext,
  sent: SentCode,
  { action, button, back }: { action: string; button: string; back: { href: string; text: string } },
): string {
  const where = sent.type === 'email' ? 'email' : 'phone';
  return page(
    { ...form, title: `Check your ${where}`, lead: `Enter the 6-digit code we sent to ${sent.value}.` },
    html` <form method="post" action="${form.base}${action}">
        ${csrfField(form.csrf)} ${codeInputs(sent)}
        <button type="submit">${button}</button>
      </form>
      <nav><span></span><a href="${form.base}${back.href}">${back.text}</a></nav>`,
  );
}

export const signUpCodePage = (form: FormContext, sent: SentCode) =>
  codePage(form, sent, { action: '/sign-up/code', button: 'Verify and create account', back: { href: '/sign-up', text: 'Start again' } });
export const signInCodePage = (form: FormContext, sent: SentCode) =>
  codePage(form, sent, { action: '/sign-in/code/verify', button: 'Verify and sign in', back: { href: '', text: 'Back to sign in' } });
export const profileCodePage = (form: FormContext, sent: SentCode) =>
  codePage(form, sent, { action: '/profile/code', button: 'Verify and continue', back: { href: '/profile', text: 'Use another' } });

/** One thing the account still needs (Logto's profile fulfilment), as a form. */
export type ProfileStep = 'username' | 'email' | 'phone' | 'emailOrPhone' | 'password';

export function profilePage(form: FormContext, step: ProfileStep, value = ''): string {
  const asks: Record<ProfileStep, { title: string; lead: string; field: Html }> = {
    username: {
      title: 'Choose a username',
      lead: 'Your account needs a username before you continue.',
      field: html`<label for="username">Username <span class="hint">(letters, digits and _)</span></label>
        <input id="username" name="username" type="text" autocomplete="username" value="${value}" required autofocus />`,
    },
    email: {
      title: 'Add your email',
      lead: 'Your account needs an email address before you continue. We will send a code to check it.',
      field: html`<label for="email">Email</label> <input id="email" name="email" type="email" autocomplete="email" value="${value}" required autofocus />`,
    },
    phone: {
      title: 'Add your phone',
      lead: 'Your account needs a phone number before you continue. We will text a code to check it.',
      field: html`<label for="phone">Phone <span class="hint">(with its country code)</span></label>
        <input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" value="${value}" required autofocus />`,
    },
    emailOrPhone: {
      title: 'Add your email or phone',
      lead: 'Your account needs an email address or a phone number before you continue. We will send a code to check it.',
      field: html`<label for="identifier">Email or phone</label>
        <input id="identifier" name="identifier" type="text" autocomplete="email" value="${value}" required autofocus />`,
    },
    password: {
      title: 'Set a password',
      lead: 'Your account needs a password before you continue.',
      field: html`<label for="password">Password <span class="hint">(at least 8 characters)</span></label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required autofocus />`,
    },
  };
  const { title, lead, field } = asks[step];
  return page(
    { ...form, title, lead },
    html` <form method="post" action="${form.base}/profile">
        ${csrfField(form.csrf)}
        <input type="hidden" name="step" value="${step}" />
        ${field}
        <button type="submit">${step === 'username' || step === 'password' ? 'Continue' : 'Send code'}</button>
      </form>
      <form method="post" action="${form.base}/abort">${csrfField(form.csrf)}<button type="submit" class="secondary">Cancel</button></form>`,
  );
}

export function forgotPasswordPage(form: FormContext, { identifier = '', phone }: { identifier?: string; phone: boolean }): string {
  return page(
    { ...form, title: 'Reset your password', lead: `We will ${phone ? 'send' : 'email'} you a code to set a new password.` },
    html` <form method="post" action="${form.base}/forgot-password">
        ${csrfField(form.csrf)}
        <label for="identifier">${phone ? 'Email or phone' : 'Email'}</label>
        <input id="identifier" name="identifier" type="${phone ? 'text' : 'email'}" autocomplete="email" value="${identifier}" required autofocus />
        <button type="submit">Send code</button>
      </form>
      <nav><span></span><a href="${form.base}">Back to sign in</a></nav>`,
  );
}

export function resetPasswordPage(form: FormContext, sent: SentCode): string {
  return page(
    { ...form, title: 'Choose a new password', lead: `If ${sent.value} has an account, we sent it a 6-digit code.` },
    html` <form method="post" action="${form.base}/forgot-password/reset">
        ${csrfField(form.csrf)} ${codeInputs(sent)}
        <label for="password">New password <span class="hint">(at least 8 characters)</span></label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required />
        <button type="submit">Set password and sign in</button>
      </form>
      <nav><span></span><a href="${form.base}/forgot-password">Send another code</a></nav>`,
  );
}

export function consentPage(
  form: FormContext,
  { applicationName, scopes, resources }: { applicationName: string; scopes: string[]; resources: Array<{ indicator: string; scopes: string[] }> },
): string {
  return page(
    { ...form, title: `Allow ${applicationName}?`, lead: `${applicationName} asks for access to your account.` },
    html` ${
        scopes.length > 0
          ? html`<p>Your profile:</p>
              <ul class="scopes">
                ${scopes.map((scope) => html`<li>${scope}</li>`)}
              </ul>`
          : ''
      }
      ${resources.map(
        ({ indicator, scopes: granted }) =>
          html`<p>${indicator}:</p>
            <ul class="scopes">
              ${granted.map((scope) => html`<li>${scope}</li>`)}
            </ul>`,
      )}
      <form method="post" action="${form.base}/consent">
        ${csrfField(form.csrf)}
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
      </form>`,
  );
}

export function messagePage(branding: Branding, title: string, text: string): string {
  return page({ branding, title, lead: text }, html``);
}

/** oidc-provider's sign-out question, in the same look; `form` is the provider's own hidden form. */
export function signOutPage(branding: Branding, form: string): string {
  return page(
    { branding, title: 'Sign out?', lead: 'Do you want to sign out of this device?' },
    html`${new Html(form)}
      <button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Yes, sign me out</button>
      <button type="submit" form="op.logoutForm" class="secondary">No, stay signed in</button>`,
  );
}
