import type { MessageKey, Translator } from '../../i18n/index.js';
import { html, Html } from './markup.js';
import { stylesheetHref, type BrandColors } from './stylesheet.js';

/** The operator's look: product name, logo and primary colour (docs/sign-in.md). */
export interface Branding {
  productName: string;
  logoUrl?: string;
  /** A CSS hex colour, `#rrggbb`. */
  primaryColor: string;
}

/**
 * An application's own look over the operator's (Logto's application sign-in experience, and the
 * `logoUri` of its OIDC metadata): what it is called on the pages, its logos and colours, and the
 * policies the consent page links to.
 */
export interface ApplicationLook {
  name: string;
  logoUrl?: string | undefined;
  darkLogoUrl?: string | undefined;
  colors?: BrandColors | undefined;
  termsOfUseUrl?: string | undefined;
  privacyPolicyUrl?: string | undefined;
}

export const webAuthnLibraryPath = '/interaction-assets/simplewebauthn-browser.js';
export const passkeyScriptPath = '/interaction-assets/passkey.js';

/** What every page is drawn with: the operator's look, the language, and the application when there is one. */
export interface PageContext {
  branding: Branding;
  t: Translator;
  /** The application the person signs in to, named (with its logo) on every page of its interaction. */
  application?: ApplicationLook | undefined;
}

/** What went wrong, for the page: the text, and the field it is about (an input's id), if any. */
export interface PageError {
  text: string;
  field?: string | undefined;
  /** The language of the text when it is not the page's (an API message no catalog has). */
  lang?: string | undefined;
}

/** What every form of an interaction needs besides: where it posts, its CSRF token, and what the last submit said. */
export interface FormContext extends PageContext {
  /** The interaction's base path, `/interaction/<uid>`. */
  base: string;
  csrf: string;
  error?: PageError | undefined;
  /** Something that went right (a code sent again), announced politely. */
  notice?: string | undefined;
}

export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}" />`;

/** A field: its label (with a hint), the input, and, when the last submit failed because of it, the reason tied to it. */
export interface FieldSpec {
  id: string;
  name?: string;
  label: string;
  hint?: string | undefined;
  type?: 'text' | 'email' | 'tel' | 'password';
  /** `autocomplete` (WCAG 1.3.5): `username`, `email`, `tel`, `one-time-code`, `current-password`, `new-password`, `off`. */
  autocomplete: string;
  inputmode?: 'numeric' | 'tel' | 'email' | undefined;
  value?: string | undefined;
  required?: boolean;
  autofocus?: boolean;
  minlength?: number;
  maxlength?: number;
}

/**
 * How a field asks for focus when nothing is in error: `autofocus=""`, a form no escaped value can
 * contain (its quotes would be escaped), so that page() can take it away from every field when one
 * is in error (`aria-invalid="true"`, which keeps a bare `autofocus`): focus lands on the field in error.
 */
const defaultFocus = 'autofocus=""';
const invalidMarker = 'aria-invalid="true"';

export function field(form: FormContext, spec: FieldSpec): Html {
  const { id, name = id, label, hint, type = 'text', autocomplete, inputmode, value, required = false, autofocus = false, minlength, maxlength } = spec;
  const invalid = form.error?.field === id;
  const errorId = `${id}-error`;
  return html`<label for="${id}">${label}${hint ? html` <span class="hint">${hint}</span>` : ''}</label>
    <input
      id="${id}"
      name="${name}"
      type="${type}"
      autocomplete="${autocomplete}"
      ${inputmode ? html`inputmode="${inputmode}"` : ''}
      ${value !== undefined && type !== 'password' ? html`value="${value}"` : ''}
      ${minlength !== undefined ? html`minlength="${minlength}"` : ''}
      ${maxlength !== undefined ? html`maxlength="${maxlength}"` : ''}
      ${required ? html`required` : ''}
      ${invalid ? new Html(`${invalidMarker} aria-describedby="${errorId}" autofocus`) : autofocus ? new Html(defaultFocus) : ''}
    />
    ${invalid ? html`<p class="field-error" id="${errorId}" ${form.error?.lang ? html` lang="${form.error.lang}"` : ''}>${form.error?.text}</p>` : ''}`;
}

/** A field for a 6-digit code: digits on a phone's keypad, filled from an SMS, and a pasted "123 456" is taken whole. */
export const codeField = (form: FormContext, { id = 'code', label, autofocus = true }: { id?: string; label?: string; autofocus?: boolean } = {}) =>
  field(form, {
    id,
    name: 'code',
    label: label ?? form.t.t('field.code'),
    hint: form.t.t('hint.code'),
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    maxlength: 16,
    required: true,
    autofocus,
  });

/** A form that posts to `action` under the interaction, with its CSRF token. */
export const form = (context: FormContext, action: string, content: Html) =>
  html`<form method="post" action="${context.base}${action}">${csrfField(context.csrf)} ${content}</form>`;

/** The quiet way out of an interaction. */
export const cancelForm = (context: FormContext) =>
  form(context, '/abort', html`<button type="submit" class="secondary">${context.t.t('action.cancel')}</button>`);

/** A message with one value in markup (`to continue to <strong>…</strong>`). */
export function withMarkup(t: Translator, key: MessageKey, placeholder: string, value: Html, values?: Record<string, string>): Html {
  const [before, after] = t.parts(key, placeholder, values);
  return html`${before}${value}${after}`;
}

export interface Frame {
  title: string;
  lead?: string | undefined;
  /** Loads the passkey scripts (served from our origin; no inline script). */
  passkeys?: boolean;
}

/** The logo: the application's (with its dark variant) over the operator's, described by whose it is. */
function logo({ branding, application }: PageContext): Html {
  if (application?.logoUrl) {
    const image = html`<img src="${application.logoUrl}" alt="${application.name}" />`;
    return application.darkLogoUrl
      ? html`<picture
          ><source srcset="${application.darkLogoUrl}" media="(prefers-color-scheme: dark)" />
          ${image}</picture
        >`
      : image;
  }
  return branding.logoUrl ? html`<img src="${branding.logoUrl}" alt="${branding.productName}" />` : html``;
}

export function page(
  context: PageContext & { error?: PageError | undefined; notice?: string | undefined },
  { title, lead, passkeys }: Frame,
  content: Html,
): string {
  const { branding, application, t } = context;
  // An error about a field is said beside it (page content); any other at the top, as an alert.
  const tied = content.markup.includes(invalidMarker);
  const error = context.error && !tied ? context.error : undefined;
  const colors = application?.colors ?? { primaryColor: branding.primaryColor };
  const markup = html`<html lang="${t.locale}">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>${title} · ${application?.name ?? branding.productName}</title>
      <link rel="stylesheet" href="${stylesheetHref(colors, { primaryColor: branding.primaryColor })}" />
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
          ${logo(context)}
          <p class="product">${branding.productName}</p>
          <h1>${title}</h1>
          ${application ? html`<p class="application">${withMarkup(t, 'frame.continueTo', 'application', html`<strong>${application.name}</strong>`)}</p>` : ''}
          ${lead ? html`<p class="lead">${lead}</p>` : ''}
        </header>
        ${error ? html`<p class="error" role="alert" ${error.lang ? html` lang="${error.lang}"` : ''}>${error.text}</p>` : ''}
        ${context.notice ? html`<p class="notice" role="status">${context.notice}</p>` : ''} ${content}
      </main>
    </body>
  </html>`.markup;
  // Focus goes to the field in error, so no other field keeps its autofocus.
  return `<!doctype html>${tied ? markup.replaceAll(` ${defaultFocus}`, '') : markup}`;
}
