import { builtInCatalogs, createCatalogs, negotiate, requestedLanguages } from '../../i18n/index.js';
import { en } from '../../i18n/en.js';
import { contrast, readableOn, textOn } from '../../experience/views/colors.js';

const placeholders = (template: string) => [...template.matchAll(/\{(\w+)\}/g)].map(([, name]) => name).sort();

describe('the pages’ languages', () => {
  it.each(Object.keys(builtInCatalogs))('the %s catalog has every message, with the same placeholders as English', (language) => {
    const catalog = builtInCatalogs[language]!;
    expect(Object.keys(catalog).sort()).toEqual(Object.keys(en).sort());
    for (const [key, template] of Object.entries(en)) expect([key, placeholders(catalog[key as keyof typeof en])]).toEqual([key, placeholders(template)]);
  });

  it('reads ui_locales in order (OIDC Core §3.1.2.1), then Accept-Language by weight (RFC 9110 §12.5.4), skipping q=0 and anything not a tag', () => {
    expect(requestedLanguages('ja fr', 'de;q=0.5, en-GB, fr;q=0, *;q=0.1, <script>')).toEqual(['ja', 'fr', 'en-gb', 'de']);
    expect(negotiate(['fr-ca', 'de-at'], ['en', 'de', 'ja'])).toBe('de');
    expect(negotiate(['pt-br'], ['en', 'de'])).toBe('en');
    expect(negotiate(requestedLanguages(undefined, 'en-US,en;q=0.9'), ['en', 'de'])).toBe('en');
  });

  it('lets a host correct one message of a built-in language and add a language of its own, English filling its gaps', () => {
    const catalogs = createCatalogs({ de: { 'signIn.title': 'Einloggen' }, 'pt-BR': { 'signIn.title': 'Entrar' } });
    expect(catalogs.forRequest('de', undefined).t('signIn.title')).toBe('Einloggen');
    expect(catalogs.forRequest('de', undefined).t('signIn.submit')).toBe('Anmelden');
    const portuguese = catalogs.forRequest(undefined, 'pt-BR');
    expect([portuguese.locale, portuguese.t('signIn.title'), portuguese.t('signIn.submit')]).toEqual(['pt-br', 'Entrar', 'Sign in']);
    expect(() => createCatalogs({ 'not a tag': {} })).toThrow(TypeError);
  });

  it('says a wait and a list as each language does', () => {
    const catalogs = createCatalogs();
    expect(catalogs.forLocale('en').duration(14 * 60)).toBe('14 minutes');
    expect(catalogs.forLocale('de').duration(30)).toBe('30 Sekunden');
    expect(catalogs.forLocale('ja').or(['ユーザー名', 'メールアドレス', '電話番号'])).toBe('ユーザー名、メールアドレスまたは電話番号');
    expect(catalogs.forLocale('en').or(['username', 'email', 'phone'])).toBe('username, email or phone');
  });
});

describe('brand colours (WCAG 2.2 1.4.3)', () => {
  // Colours over the whole cube, the light ones included, that an operator or an application may choose.
  const colours = Array.from({ length: 216 }, (_, index) => {
    const channel = (value: number) => (value * 51).toString(16).padStart(2, '0');
    return `#${channel(Math.floor(index / 36))}${channel(Math.floor(index / 6) % 6)}${channel(index % 6)}`;
  });

  it('puts text that reads at 4.5:1 on a primary button of any colour', () => {
    expect(colours.filter((colour) => contrast(textOn(colour), colour) < 4.5)).toEqual([]);
  });

  it('draws links in the brand colour, darkened on the light card or lightened on the dark one until they read at 4.5:1', () => {
    expect(colours.filter((colour) => contrast(readableOn(colour, '#ffffff'), '#ffffff') < 4.5)).toEqual([]);
    expect(colours.filter((colour) => contrast(readableOn(colour, '#181b21'), '#181b21') < 4.5)).toEqual([]);
    expect(readableOn('#0b6e4f', '#ffffff')).toBe('#0b6e4f');
  });
});
