import type { MessageKey, Translator } from '../i18n/index.js';
import type { Branding } from '../experience/views/frame.js';
import { html, type Html } from '../experience/views/markup.js';
import { stylesheetHref } from '../experience/views/stylesheet.js';

/** The console's own stylesheet's path under its base: the layout over the sign-in pages' palette and controls. */
export const consoleStylesheetPath = '/assets/console.css';

/** The parts of the console, in the navigation's order: each is also its path under the console. */
export const consoleSections = [
  'users',
  'applications',
  'resources',
  'roles',
  'organizations',
  'sign-in-settings',
  'connectors',
  'webhooks',
  'keys',
  'jwt-customizers',
  'changes',
  'impersonations',
] as const;
export type ConsoleSection = (typeof consoleSections)[number];
const navLabels: Record<ConsoleSection, MessageKey> = {
  users: 'console.nav.users',
  applications: 'console.nav.applications',
  resources: 'console.nav.resources',
  roles: 'console.nav.roles',
  organizations: 'console.nav.organizations',
  'sign-in-settings': 'console.nav.settings',
  connectors: 'console.nav.connectors',
  webhooks: 'console.nav.webhooks',
  keys: 'console.nav.keys',
  'jwt-customizers': 'console.nav.claims',
  changes: 'console.nav.changes',
  impersonations: 'console.nav.impersonations',
};

/** What every console page is drawn with. */
export interface ConsolePage {
  t: Translator;
  branding: Branding;
  /** Where the console is mounted (`/console`). */
  base: string;
  /** The session's form token, when someone is signed in (the sign-out form and every action carry it). */
  csrf?: string | undefined;
  /** Which part of the console the page belongs to, for the navigation's `aria-current`. */
  section?: ConsoleSection | undefined;
}

/** What the API said was wrong with a form: the field's id on the page, when it names one, and its words. */
export interface FormError {
  field?: string | undefined;
  text: string;
}

export const csrfInput = (page: ConsolePage) => html`<input type="hidden" name="csrf" value="${page.csrf ?? ''}" />`;

/** A field's error, said at the field: the field names its id (`${id}-error`) in `aria-describedby`. */
export const fieldError = (id: string, text: string | undefined) => (text ? html`<p class="field-error" id="${id}-error">${text}</p>` : '');
/** The attributes of the field an error is about (with `fieldError` after it). */
export const invalidAttributes = (id: string, text: string | undefined) => (text ? html`aria-invalid="true" aria-describedby="${id}-error"` : '');

/** The error's words when it is about the field `id`. */
export const errorAt = (error: FormError | undefined, id: string) => (error?.field === id ? error.text : undefined);

/** A text field with its label, its value kept, and its error said at it. */
export function textField(
  id: string,
  name: string,
  label: string,
  {
    value,
    error,
    required = false,
    maxLength = 256,
    type = 'text',
  }: { value: string; error?: FormError | undefined; required?: boolean; maxLength?: number; type?: string },
) {
  const text = errorAt(error, id);
  return html`<label for="${id}">${label}</label>
    <input
      id="${id}"
      name="${name}"
      type="${type}"
      value="${value}"
      maxlength="${maxLength}"
      autocomplete="off"
      ${required ? html`required` : ''}
      ${invalidAttributes(id, text)}
    />
    ${fieldError(id, text)}`;
}

/** A moment as the page's language writes it: a date, and a time to the minute (or to the second). */
export const momentOf = (page: ConsolePage, at: number, { seconds = false } = {}) =>
  new Intl.DateTimeFormat(page.t.locale, { dateStyle: 'medium', timeStyle: seconds ? 'medium' : 'short' }).format(new Date(at));

/** A checkbox with its label beside it (the label is the target too). */
export const checkbox = (name: string, value: string, label: string, checked: boolean) =>
  html`<label class="check"><input type="checkbox" name="${name}" value="${value}" ${checked ? html`checked` : ''} /> <span>${label}</span></label>`;

/** A form's text area that must hold a JSON object: the object, or undefined when it holds anything else (empty is `{}`). */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text.trim() === '' ? '{}' : text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A form that posts to `action` (under the console) with the session's token. */
export const postForm = (page: ConsolePage, action: string, content: Html) =>
  html`<form method="post" action="${page.base}${action}">${csrfInput(page)} ${content}</form>`;

/** The frame of every console page: the service's name, the navigation and the way out, then the page's own content. */
export function consoleLayout(
  page: ConsolePage,
  { title, notice, error }: { title: string; notice?: string | undefined; error?: string | undefined },
  content: Html,
): string {
  const { t, branding, base } = page;
  const navItem = (section: NonNullable<ConsolePage['section']>, key: MessageKey) =>
    html`<a href="${base}/${section}" ${page.section === section ? html`aria-current="page"` : ''}>${t.t(key)}</a>`;
  return `<!doctype html>${
    html`<html lang="${t.locale}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${title} · ${t.t('console.title')} · ${branding.productName}</title>
        <link rel="stylesheet" href="${stylesheetHref({ primaryColor: branding.primaryColor }, { primaryColor: branding.primaryColor })}" />
        <link rel="stylesheet" href="${base}${consoleStylesheetPath}" />
      </head>
      <body class="console">
        <header class="bar">
          <p class="product">${branding.productName} · ${t.t('console.title')}</p>
          ${page.csrf ? html`<nav aria-label="${t.t('console.nav')}">${consoleSections.map((section) => navItem(section, navLabels[section]))}</nav>` : ''}
          ${page.csrf ? postForm(page, '/sign-out', html`<button type="submit" class="link">${t.t('console.signOut')}</button>`) : ''}
        </header>
        <main>
          <h1>${title}</h1>
          ${error ? html`<p class="error" role="alert">${error}</p>` : ''} ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''} ${content}
        </main>
      </body>
    </html>`.markup
  }`;
}

/**
 * A table of rows under their column names (and a caption, if given), or a sentence when there are
 * none. An empty column name is the rows' actions: named for screen readers only.
 */
export function dataTable(page: ConsolePage, head: string[], rows: Html[], empty: string, caption?: string): Html | string {
  if (rows.length === 0) return html`<p>${empty}</p>`;
  const column = (name: string) => html`<th scope="col">${name === '' ? html`<span class="visually-hidden">${page.t.t('console.actions')}</span>` : name}</th>`;
  return html`<div class="table" tabindex="0">
    <table>
      ${
        caption === undefined
          ? ''
          : html`<caption>
              ${caption}
            </caption>`
      }
      <thead>
        <tr>
          ${head.map(column)}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}

/** A caption for a list that shows only its first items: how many of how many (none when it shows them all). */
export const firstOf = (page: ConsolePage, shown: number, total: number) => (total > shown ? page.t.t('console.list.first', { shown, total }) : undefined);

/** The links to a list's neighbouring pages, when it has any. */
export const pager = (page: ConsolePage, label: string, { previous, next }: { previous?: string | undefined; next?: string | undefined }) =>
  previous || next
    ? html`<nav class="pages" aria-label="${label}">
        ${previous ? html`<a href="${previous}">${page.t.t('console.users.previous')}</a>` : ''}
        ${next ? html`<a href="${next}">${page.t.t('console.users.next')}</a>` : ''}
      </nav>`
    : '';

/** The page of a list a query asks for: a whole number from 1, at most 10,000, 1 when it says nothing usable. */
export const pageNumberOf = (value: unknown) => Math.max(1, Math.min(10_000, Number.parseInt(String(value ?? '1'), 10) || 1));

/** A page that only says something (a refusal, the end of a session), with a link onwards. */
export function messagePage(page: ConsolePage, title: string, text: string, link?: { href: string; label: string }): string {
  return consoleLayout(
    page,
    { title },
    html`<p>${text}</p>
      ${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}`,
  );
}

/**
 * The layout over the sign-in pages' stylesheet (its colours, fields and buttons): a bar across the
 * top, a wide column, tables that scroll sideways on a phone instead of the page. Static: the
 * colours are the other stylesheet's variables.
 */
export const consoleStylesheet = `
body.console { display: block; place-items: normal; }
body.console header.bar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; margin: 0; padding: .75rem 1.5rem; text-align: left;
  background: var(--card); border-bottom: 1px solid var(--line); }
body.console header.bar .product { margin: 0; font-weight: 600; color: var(--text); font-size: 1rem; }
body.console header.bar nav { margin: 0; justify-content: flex-start; font-size: 1rem; flex: 1; }
body.console header.bar nav a { padding: .5rem .25rem; }
body.console header.bar nav a[aria-current=page] { font-weight: 700; }
body.console header.bar form { margin: 0; }
body.console main { width: min(100% - 2rem, 72rem); margin: 1.5rem auto; }
body.console button { width: auto; min-width: 8rem; padding: .6rem 1.2rem; }
body.console button.link { min-width: 0; padding: .5rem .25rem; min-height: 44px; }
body.console form.search { display: flex; flex-wrap: wrap; align-items: flex-end; gap: .5rem 1rem; }
body.console form.search label { margin-top: 0; width: 100%; }
body.console form.search input { flex: 1 1 16rem; width: auto; }
body.console form.search button { margin-top: 0; }
.table { overflow-x: auto; margin: 1rem 0; position: relative; }
.table:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
table { width: 100%; border-collapse: collapse; }
caption { text-align: left; color: var(--muted); padding: .25rem 0; }
th, td { text-align: left; vertical-align: top; padding: .6rem .5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; }
dl.facts { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: .4rem 1.5rem; margin: 1rem 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin-top: 1.5rem; }
.actions button, .actions a.button { margin-top: 0; width: auto; display: inline-block; }
nav.pages { justify-content: flex-start; gap: 1.5rem; }
ul.plain { margin: 0; padding: 0; list-style: none; }
select, textarea { width: 100%; min-height: 44px; padding: .6rem .7rem; font: inherit; color: var(--text); background: var(--field); border: 1px solid var(--control); border-radius: 8px; }
select:focus-visible, textarea:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
select[aria-invalid=true], textarea[aria-invalid=true] { border: 2px solid var(--error); }
code.secret { font-size: 1.05rem; overflow-wrap: anywhere; }
body.console a.button { display: inline-block; width: auto; padding: .6rem 1.2rem; margin-top: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; padding: .5rem 1rem 1rem; min-width: 0; }
fieldset.family { margin: .5rem 0; }
legend { font-weight: 600; padding: 0 .25rem; }
label.check { display: flex; gap: .6rem; align-items: center; margin: .25rem 0; font-weight: 400; }
label.check span { min-width: 0; overflow-wrap: anywhere; }
label.check input { width: 1.5rem; height: 44px; margin: 0; flex: none; }
input[type=url], input[type=datetime-local] { width: 100%; min-height: 44px; padding: .6rem .7rem; font: inherit; color: var(--text); background: var(--field);
  border: 1px solid var(--control); border-radius: 8px; }
pre.excerpt { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 10rem; overflow: auto; font-size: .85rem; margin: .25rem 0; padding: .5rem;
  background: var(--field); border: 1px solid var(--line); border-radius: 6px; }
.ranges { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 0 1rem; }
.ranges button { margin-top: 1rem; }
details summary { cursor: pointer; min-height: 24px; }
.settings { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1.5rem; align-items: start; }
iframe.preview { width: 100%; height: 44rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); }
@media (max-width: 480px) {
  body.console main { width: 100%; margin: 0; }
  dl.facts { grid-template-columns: 1fr; }
  fieldset { padding: .5rem .6rem .75rem; }
}
`;
