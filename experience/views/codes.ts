import { codeField, field, form, page, type FormContext } from './frame.js';
import { html } from './markup.js';
import { fieldsFor, type SentCode } from './fields.js';

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
