import { de } from './de.js';
import { en, type MessageKey, type Messages } from './en.js';
import { ja } from './ja.js';

export type { MessageKey, Messages } from './en.js';

/** A language's messages: every key for a built-in one; a host's may give only some (the rest fall back to English). */
export type Catalog = Partial<Messages>;

/** The languages the pages and the mail speak out of the box, each complete (a test checks). */
export const builtInCatalogs: Record<string, Messages> = { en, de, ja };

export const defaultLocale = 'en';

/** A language tag as the catalogs are keyed: lower case, `-` between subtags (`pt-br`). */
const normalize = (tag: string) => tag.trim().replaceAll('_', '-').toLowerCase();
/** Tags as a header or a parameter gives them: letters and digits between hyphens, nothing else reaches a lookup. */
const languageTag = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/;

/**
 * The languages a request asks for, best first: OIDC Core §3.1.2.1 `ui_locales` (space-separated,
 * in order of preference) before the browser's `Accept-Language` (RFC 9110 §12.5.4, by weight; a
 * weight of 0 means "not this one").
 */
export function requestedLanguages(uiLocales: unknown, acceptLanguage: string | undefined): string[] {
  const fromParameter = typeof uiLocales === 'string' ? uiLocales.split(' ').filter(Boolean).slice(0, 20).map(normalize) : [];
  const fromHeader = (acceptLanguage ?? '')
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag = '', ...parameters] = part.split(';');
      const weight = parameters.map((parameter) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(parameter)?.[1]).find(Boolean);
      return { tag: normalize(tag), q: weight === undefined ? 1 : Number(weight), index };
    })
    .filter(({ tag, q }) => q > 0 && tag !== '*')
    // A stable sort: equal weights keep the header's order.
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map(({ tag }) => tag);
  return [...fromParameter, ...fromHeader].filter((tag) => languageTag.test(tag));
}

/** The first requested language a catalog has, trying each tag and then its shorter prefixes (`de-at` → `de`). */
export function negotiate(requested: string[], available: Iterable<string>, fallback = defaultLocale): string {
  const have = new Set(available);
  for (const tag of requested) {
    const parts = tag.split('-');
    for (let length = parts.length; length > 0; length -= 1) {
      const candidate = parts.slice(0, length).join('-');
      if (have.has(candidate)) return candidate;
    }
  }
  return fallback;
}

/** What a template's `{name}` placeholders are filled with. */
export type MessageValues = Record<string, string | number>;

/** Messages of one language, with English under them for anything a host catalog leaves out. */
export interface Translator {
  /** The language tag (`en`, `de`, `ja`, or a host's), for `<html lang>` and the formats below. */
  readonly locale: string;
  /** The message `key`, its placeholders filled. */
  t(key: MessageKey, values?: MessageValues): string;
  /** The message split at one placeholder, for markup around a value (`to continue to <strong>…</strong>`). */
  parts(key: MessageKey, placeholder: string, values?: MessageValues): [before: string, after: string];
  /** "username, email or phone": a list joined as the language joins alternatives. */
  or(items: string[]): string;
  /** A wait in whole minutes (or seconds, under one), as the language says it: "14 minutes". */
  duration(seconds: number): string;
}

const fill = (template: string, values: MessageValues = {}) =>
  template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));

/**
 * The catalogs of a deployment: the built-in ones, with a host's merged over them key by key (a
 * host may correct one message of a built-in language, or add a language of its own).
 */
export function createCatalogs(host: Record<string, Catalog> = {}) {
  const catalogs = new Map<string, Catalog>(Object.entries(builtInCatalogs));
  for (const [tag, messages] of Object.entries(host)) {
    const key = normalize(tag);
    if (!languageTag.test(key)) throw new TypeError(`experience.catalogs: "${tag}" is not a language tag`);
    catalogs.set(key, { ...catalogs.get(key), ...messages });
  }
  const english = catalogs.get(defaultLocale) as Messages;

  function translator(locale: string): Translator {
    const messages = catalogs.get(locale) ?? english;
    const template = (key: MessageKey) => messages[key] ?? english[key];
    return {
      locale,
      t: (key, values) => fill(template(key), values),
      parts(key, placeholder, values) {
        const [before = '', after = ''] = fill(template(key), values).split(`{${placeholder}}`);
        return [before, after];
      },
      or(items) {
        if (items.length < 2) return items[0] ?? '';
        return `${items.slice(0, -1).join(template('list.separator'))}${template('list.or')}${items.at(-1)}`;
      },
      duration(seconds) {
        const [value, unit] = seconds < 60 ? [Math.max(1, Math.ceil(seconds)), 'second'] : [Math.ceil(seconds / 60), 'minute'];
        try {
          return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(value);
        } catch {
          // A host's tag that ICU does not take as a locale: the number in English units.
          return new Intl.NumberFormat(defaultLocale, { style: 'unit', unit, unitDisplay: 'long' }).format(value);
        }
      },
    };
  }

  return {
    languages: () => [...catalogs.keys()],
    /** The translator for a request: `ui_locales` first, then `Accept-Language`, then English. */
    forRequest(uiLocales: unknown, acceptLanguage: string | undefined): Translator {
      return translator(negotiate(requestedLanguages(uiLocales, acceptLanguage), catalogs.keys()));
    },
    forLocale: (locale: string | undefined) => translator(locale && catalogs.has(locale) ? locale : defaultLocale),
  };
}

export type Catalogs = ReturnType<typeof createCatalogs>;
