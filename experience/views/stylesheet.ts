import { readableOn, textOn } from './colors.js';

export const stylesheetPath = '/interaction-assets/style.css';

/** The colours a stylesheet is drawn in: the operator's, or an application's own over them. */
export interface BrandColors {
  /** A CSS hex colour, `#rrggbb`. */
  primaryColor: string;
  /** The primary colour in the dark scheme (default: the primary colour). */
  darkPrimaryColor?: string | undefined;
}

const hexColor = /^#[0-9a-f]{6}$/i;
export const isHexColor = (value: unknown): value is string => typeof value === 'string' && hexColor.test(value);

/** A hex colour as the stylesheet draws it, `#rrggbb`: a short one (`#rgb`, which Logto accepts) doubled out; anything else none. */
export function asHexColor(value: unknown): string | undefined {
  if (isHexColor(value)) return value;
  if (typeof value !== 'string' || !/^#[0-9a-f]{3}$/i.test(value)) return undefined;
  return `#${[...value.slice(1)].map((digit) => digit + digit).join('')}`;
}

/**
 * Where the stylesheet for these colours is: the operator's at the plain path; an application's
 * own with its colours in the query (`?primary=…&dark=…`, checked again when served), so that the
 * CSP's `style-src 'self'` holds and no page carries an inline style.
 */
export function stylesheetHref(colors: BrandColors, operator: BrandColors): string {
  const primary = colors.primaryColor.toLowerCase();
  const dark = (colors.darkPrimaryColor ?? colors.primaryColor).toLowerCase();
  if (primary === operator.primaryColor.toLowerCase() && dark === (operator.darkPrimaryColor ?? operator.primaryColor).toLowerCase()) return stylesheetPath;
  return `${stylesheetPath}?${new URLSearchParams({ primary: primary.slice(1), dark: dark.slice(1) })}`;
}

/** The colours a stylesheet URL's query asks for, when both are colours; otherwise none (the operator's stylesheet). */
export function colorsOfQuery(query: URLSearchParams): BrandColors | undefined {
  const primary = `#${query.get('primary') ?? ''}`;
  const dark = `#${query.get('dark') ?? ''}`;
  return isHexColor(primary) && isHexColor(dark) ? { primaryColor: primary, darkPrimaryColor: dark } : undefined;
}

const lightCard = '#ffffff';
const darkCard = '#181b21';

/**
 * The pages' stylesheet in these colours, served from our origin. The brand colour fills the
 * primary button, with white or black text on it (whichever reads at 4.5:1), and draws links,
 * darkened or lightened until they read on the card in each scheme.
 */
export function stylesheet({ primaryColor, darkPrimaryColor = primaryColor }: BrandColors): string {
  return `
:root { --primary: ${primaryColor}; --on-primary: ${textOn(primaryColor)}; --link: ${readableOn(primaryColor, lightCard)};
  --text: #1d2129; --muted: #5c6370; --line: #d0d4da; --control: #6b7280; --focus: #1d2129;
  --page: #f4f5f7; --card: ${lightCard}; --field: #fff; --error: #b42318; --error-bg: #fef3f2; --error-line: #fecdca;
  --notice: #0b5c36; --notice-bg: #ecfdf3; --notice-line: #a6f4c5; color-scheme: light dark; }
/* Dark, when the person's system asks for it: the same contrasts (text 4.5:1, borders and the focus ring 3:1). */
@media (prefers-color-scheme: dark) {
  :root { --primary: ${darkPrimaryColor}; --on-primary: ${textOn(darkPrimaryColor)}; --link: ${readableOn(darkPrimaryColor, darkCard)};
    --text: #e6e8eb; --muted: #aab1bc; --line: #3a3f47; --control: #8d95a3; --focus: #e6e8eb; --page: #0f1115; --card: ${darkCard}; --field: #0f1115;
    --error: #fda29b; --error-bg: #2a1514; --error-line: #7a271a; --notice: #75e0a7; --notice-bg: #0d2a1c; --notice-line: #155b3a; }
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--page); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Hiragino Sans", "Noto Sans JP", sans-serif; }
main { width: min(100% - 2rem, 24rem); margin: 2rem 0; padding: 2rem; background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
header { text-align: center; margin-bottom: 1.5rem; }
header img { max-height: 48px; max-width: 100%; }
header .product { margin: .25rem 0 0; color: var(--muted); font-size: .9rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 0; }
h2 { font-size: 1rem; margin: 1rem 0 .25rem; }
p.lead { color: var(--muted); margin: .25rem 0 1rem; }
p.application { margin: .25rem 0 0; color: var(--muted); }
p.application strong { color: var(--text); }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
label .hint { font-weight: 400; color: var(--muted); font-size: .85rem; }
/* A field's border and the focus ring stand out from the card at 3:1 at least (WCAG 2.2, 1.4.11 and 2.4.13). */
input[type=text], input[type=email], input[type=tel], input[type=password] { width: 100%; min-height: 44px; padding: .6rem .7rem; font: inherit; color: var(--text); background: var(--field); border: 1px solid var(--control); border-radius: 8px; }
input[aria-invalid=true] { border: 2px solid var(--error); }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button { width: 100%; min-height: 44px; margin-top: 1.5rem; padding: .7rem; font: inherit; font-weight: 600; color: var(--on-primary); background: var(--primary); border: 0; border-radius: 8px; cursor: pointer; }
/* The way out is quiet beside the way in: no fill, the text's own colour. */
button.secondary { margin-top: .75rem; color: var(--text); background: transparent; border: 1px solid var(--control); font-weight: 400; }
button.link { width: auto; min-height: 24px; margin: 0; padding: 0; color: var(--link); background: none; border: 0; font-weight: 400; text-decoration: underline; }
a.button { display: block; box-sizing: border-box; width: 100%; min-height: 44px; margin-top: .75rem; padding: .7rem; text-align: center; font-weight: 600; text-decoration: none; border-radius: 8px; color: var(--on-primary); background: var(--primary); }
a.button.secondary { color: var(--text); background: transparent; border: 1px solid var(--control); font-weight: 400; }
.error, .notice { margin: 0 0 1rem; padding: .6rem .8rem; border-radius: 8px; }
.error { color: var(--error); background: var(--error-bg); border: 1px solid var(--error-line); }
.notice { color: var(--notice); background: var(--notice-bg); border: 1px solid var(--notice-line); }
p.field-error { margin: .35rem 0 0; color: var(--error); font-size: .9rem; }
nav { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .25rem 1rem; margin-top: 1.25rem; font-size: .9rem; }
nav a, p.resend a { display: inline-block; padding: .35rem 0; white-space: nowrap; }
a { color: var(--link); }
ul.scopes { padding-left: 1.2rem; margin: .25rem 0; }
ul.scopes li { margin: .15rem 0; }
p.policies { font-size: .9rem; color: var(--muted); }
p.or { margin: 1.5rem 0 0; text-align: center; color: var(--muted); font-size: .9rem; }
p.resend { margin: 1rem 0 0; font-size: .9rem; color: var(--muted); }
.qr svg { display: block; width: 12rem; height: 12rem; margin: .5rem auto; padding: .5rem; background: #fff; border-radius: 8px; } /* scannable in dark mode too */
ul.codes { columns: 2; padding-left: 1.2rem; font-size: 1.05rem; }
p.hint { color: var(--muted); font-size: .9rem; word-break: break-all; }
/* A phone: one column from the top, the card edge to edge, each link on a line of its own. */
@media (max-width: 480px) {
  body { place-items: start center; }
  main { width: 100%; margin: 0; padding: 1.5rem 1.25rem; border-width: 0 0 1px; border-radius: 0; }
  nav { flex-direction: column; align-items: center; }
}
`;
}
