import { html } from '../experience/views/markup.js';
import { mfaFactors } from '../lib/mfa/model.js';
import { mfaPolicies, signInIdentifiers } from '../sign-in/settings.js';
import { checkbox, consoleLayout, postForm, type ConsolePage } from './views.js';

/** The parts of the sign-in settings the console edits, as its form holds them. */
export interface SettingsDraft {
  signUpIdentifiers: string[];
  signUpPassword: boolean;
  signUpVerify: boolean;
  /** Per identifier: signs in with a password, with a code (not a username). */
  passwordSignIn: string[];
  codeSignIn: string[];
  mfaFactors: string[];
  mfaPolicy: string;
  passkeySignIn: boolean;
}

/** The draft as query parameters: the preview frame's address, and how a draft travels between the form and the preview. */
export function draftQuery(draft: SettingsDraft, language: string): string {
  const query = new URLSearchParams({ lang: language, mfaPolicy: draft.mfaPolicy });
  for (const name of ['signUpIdentifiers', 'passwordSignIn', 'codeSignIn', 'mfaFactors'] as const) for (const value of draft[name]) query.append(name, value);
  for (const name of ['signUpPassword', 'signUpVerify', 'passkeySignIn'] as const) if (draft[name]) query.set(name, 'yes');
  return query.toString();
}

/** A draft from a form or a query: only the values the settings know (anything else is left out). */
export function draftOf(fields: URLSearchParams): SettingsDraft {
  const among = (name: string, allowed: readonly string[]) => [...new Set(fields.getAll(name).filter((value) => allowed.includes(value)))];
  const policy = fields.get('mfaPolicy') ?? '';
  return {
    signUpIdentifiers: among('signUpIdentifiers', signInIdentifiers),
    signUpPassword: fields.get('signUpPassword') === 'yes',
    signUpVerify: fields.get('signUpVerify') === 'yes',
    passwordSignIn: among('passwordSignIn', signInIdentifiers),
    codeSignIn: among('codeSignIn', ['email', 'phone']),
    mfaFactors: among('mfaFactors', mfaFactors),
    mfaPolicy: (mfaPolicies as readonly string[]).includes(policy) ? policy : 'UserControlled',
    passkeySignIn: fields.get('passkeySignIn') === 'yes',
  };
}

/**
 * The sign-in settings: how people sign up and sign in, second factors and passkeys; beside it, a
 * preview of the real sign-in page as these settings draw it (a frame of the console's own origin,
 * with no forms or scripts). Preview shows a draft without saving it.
 */
export function signInSettingsPage(
  page: ConsolePage,
  {
    draft,
    language,
    saved,
    notice,
    error,
  }: { draft: SettingsDraft; language: string; saved: boolean; notice?: string | undefined; error?: string | undefined },
): string {
  const { t, base } = page;
  const identifierName = (identifier: string) => t.t(`field.${identifier as 'username' | 'email' | 'phone'}`);
  const content = html`<div class="settings">
    ${postForm(
      page,
      '/sign-in-settings',
      html`<fieldset>
          <legend>${t.t('console.settings.signUp')}</legend>
          ${signInIdentifiers.map((identifier) => checkbox('signUpIdentifiers', identifier, identifierName(identifier), draft.signUpIdentifiers.includes(identifier)))}
          ${checkbox('signUpPassword', 'yes', t.t('console.settings.signUpPassword'), draft.signUpPassword)}
          ${checkbox('signUpVerify', 'yes', t.t('console.settings.signUpVerify'), draft.signUpVerify)}
        </fieldset>
        <fieldset>
          <legend>${t.t('console.settings.passwordSignIn')}</legend>
          ${signInIdentifiers.map((identifier) => checkbox('passwordSignIn', identifier, identifierName(identifier), draft.passwordSignIn.includes(identifier)))}
        </fieldset>
        <fieldset>
          <legend>${t.t('console.settings.codeSignIn')}</legend>
          ${(['email', 'phone'] as const).map((identifier) => checkbox('codeSignIn', identifier, identifierName(identifier), draft.codeSignIn.includes(identifier)))}
          ${checkbox('passkeySignIn', 'yes', t.t('console.settings.passkeySignIn'), draft.passkeySignIn)}
        </fieldset>
        <fieldset>
          <legend>${t.t('console.settings.mfa')}</legend>
          ${mfaFactors.map((factor) => checkbox('mfaFactors', factor, t.t(`console.settings.factor.${factor}`), draft.mfaFactors.includes(factor)))}
          <label for="mfaPolicy">${t.t('console.settings.mfaPolicy')}</label>
          <select id="mfaPolicy" name="mfaPolicy">
            ${mfaPolicies.map((policy) => html`<option value="${policy}" ${draft.mfaPolicy === policy ? html`selected` : ''}>${t.t(`console.settings.policy.${policy}`)}</option>`)}
          </select>
        </fieldset>
        <label for="lang">${t.t('console.settings.previewLanguage')}</label>
        <select id="lang" name="lang">
          ${(['en', 'de', 'ja'] as const).map((code) => html`<option value="${code}" ${language === code ? html`selected` : ''}>${t.t(`console.settings.language.${code}`)}</option>`)}
        </select>
        <div class="actions">
          <button type="submit" name="intent" value="save">${t.t('console.look.save')}</button>
          <button type="submit" name="intent" value="preview" class="secondary">${t.t('console.settings.preview')}</button>
        </div>`,
    )}
    <section aria-labelledby="preview-title">
      <h2 id="preview-title">${t.t(saved ? 'console.settings.previewSaved' : 'console.settings.previewDraft')}</h2>
      <iframe
        class="preview"
        title="${t.t('console.settings.previewFrame')}"
        sandbox="allow-same-origin"
        src="${base}/sign-in-settings/preview?${draftQuery(draft, language)}"
      ></iframe>
    </section>
  </div>`;
  return consoleLayout({ ...page, section: 'sign-in-settings' }, { title: t.t('console.settings.title'), notice, error }, content);
}
