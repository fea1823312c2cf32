import { cancelForm, field, form, page, type FieldSpec, type FormContext } from './frame.js';
import { html } from './markup.js';
import { fieldsFor, identifierList } from './fields.js';

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
