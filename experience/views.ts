/** The operator's look: product name, logo and primary colour (see README, Sign-in experience). */
export interface Branding {
  productName: string;
  logoUrl?: string;
  /** A CSS hex colour, `#rrggbb`. */
  primaryColor: string;
}

export const stylesheetPath = '/interaction-assets/style.css';

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
:root { --primary: ${primaryColor}; --text: #1d2129; --muted: #5c6370; --line: #d0d4da; --error: #b42318; color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f4f5f7; color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { width: min(100% - 2rem, 24rem); margin: 2rem 0; padding: 2rem; background: #fff; border: 1px solid var(--line); border-radius: 12px; }
header { text-align: center; margin-bottom: 1.5rem; }
header img { max-height: 48px; max-width: 100%; }
header .product { margin: .25rem 0 0; color: var(--muted); font-size: .9rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 0; }
p.lead { color: var(--muted); margin: .25rem 0 1rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
label .hint { font-weight: 400; color: var(--muted); font-size: .85rem; }
input[type=text], input[type=email], input[type=password] { width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid var(--line); border-radius: 8px; }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid color-mix(in srgb, var(--primary) 45%, transparent); outline-offset: 1px; }
button { width: 100%; margin-top: 1.5rem; padding: .7rem; font: inherit; font-weight: 600; color: #fff; background: var(--primary); border: 0; border-radius: 8px; cursor: pointer; }
button.secondary { margin-top: .75rem; color: var(--text); background: #fff; border: 1px solid var(--line); }
.error { margin: 0 0 1rem; padding: .6rem .8rem; color: var(--error); background: #fef3f2; border: 1px solid #fecdca; border-radius: 8px; }
nav { display: flex; justify-content: space-between; gap: 1rem; margin-top: 1.25rem; font-size: .9rem; }
a { color: var(--primary); }
ul.scopes { padding-left: 1.2rem; }
`;

interface PageFrame {
  branding: Branding;
  title: string;
  lead?: string;
  error?: string | undefined;
}

function page({ branding, title, lead, error }: PageFrame, content: Html): string {
  return `<!doctype html>${html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>${title} · ${branding.productName}</title>
      <link rel="stylesheet" href="${stylesheetPath}" />
    </head>
    <body>
      <main>
        <header>
          ${branding.logoUrl ? html`<img src="${branding.logoUrl}" alt="${branding.productName}" />` : ''}
          <p class="product">${branding.productName}</p>
          <h1>${title}</h1>
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
  /** The interaction's base path, `/interaction/<uid>`. */
  base: string;
  csrf: string;
  error?: string | undefined;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}" />`;

/** The fields of a form that answers an emailed code: which code, and the code. */
const codeInputs = (email: string, verificationId: string) =>
  html`<input type="hidden" name="email" value="${email}" />
    <input type="hidden" name="verificationId" value="${verificationId}" />
    <label for="code">Verification code</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus />`;

export function signInPage(form: FormContext, { identifier = '' }: { identifier?: string }): string {
  return page(
    { ...form, title: 'Sign in' },
    html` <form method="post" action="${form.base}/sign-in">
        ${csrfField(form.csrf)}
        <label for="identifier">Username or email</label>
        <input id="identifier" name="identifier" type="text" autocomplete="username" value="${identifier}" required autofocus />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <nav><a href="${form.base}/forgot-password">Forgot your password?</a><a href="${form.base}/sign-up">Create an account</a></nav>
      <form method="post" action="${form.base}/abort">${csrfField(form.csrf)}<button type="submit" class="secondary">Cancel</button></form>`,
  );
}

export function signUpPage(form: FormContext, { username = '', email = '' }: { username?: string; email?: string }): string {
  return page(
    { ...form, title: 'Create your account', lead: 'Choose a username, give your email address, or both.' },
    html` <form method="post" action="${form.base}/sign-up">
        ${csrfField(form.csrf)}
        <label for="username">Username <span class="hint">(letters, digits and _)</span></label>
        <input id="username" name="username" type="text" autocomplete="username" value="${username}" autofocus />
        <label for="email">Email <span class="hint">(we will send a code to check it)</span></label>
        <input id="email" name="email" type="email" autocomplete="email" value="${email}" />
        <label for="password">Password <span class="hint">(at least 8 characters)</span></label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required />
        <button type="submit">Create account</button>
      </form>
      <nav><span></span><a href="${form.base}">I already have an account</a></nav>`,
  );
}

export function signUpCodePage(form: FormContext, { email, verificationId }: { email: string; verificationId: string }): string {
  return page(
    { ...form, title: 'Check your email', lead: `Enter the 6-digit code we sent to ${email}.` },
    html` <form method="post" action="${form.base}/sign-up/code">
        ${csrfField(form.csrf)} ${codeInputs(email, verificationId)}
        <button type="submit">Verify and create account</button>
      </form>
      <nav><span></span><a href="${form.base}/sign-up">Start again</a></nav>`,
  );
}

export function forgotPasswordPage(form: FormContext, { email = '' }: { email?: string }): string {
  return page(
    { ...form, title: 'Reset your password', lead: 'We will email you a code to set a new password.' },
    html` <form method="post" action="${form.base}/forgot-password">
        ${csrfField(form.csrf)}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="email" value="${email}" required autofocus />
        <button type="submit">Send code</button>
      </form>
      <nav><span></span><a href="${form.base}">Back to sign in</a></nav>`,
  );
}

export function resetPasswordPage(form: FormContext, { email, verificationId }: { email: string; verificationId: string }): string {
  return page(
    { ...form, title: 'Choose a new password', lead: `If ${email} has an account, we sent it a 6-digit code.` },
    html` <form method="post" action="${form.base}/forgot-password/reset">
        ${csrfField(form.csrf)} ${codeInputs(email, verificationId)}
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
