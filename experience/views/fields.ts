import type { Translator } from '../../i18n/index.js';
import { type FieldSpec, type FormContext } from './frame.js';
import { html } from './markup.js';

/** Where a code went, as a form carries it back: `email` or `phone` with its value as the person typed it. */
export interface SentCode {
  type: 'email' | 'phone';
  value: string;
  verificationId: string;
}

/** "Username, email or phone": the identifiers a form takes, as a label (its first letter up, where the language has case). */
export function identifierLabel(t: Translator, types: ReadonlyArray<'username' | 'email' | 'phone'>): string {
  const list = identifierList(t, types);
  return `${list.charAt(0).toLocaleUpperCase(t.locale)}${list.slice(1)}`;
}
export const identifierList = (t: Translator, types: ReadonlyArray<'username' | 'email' | 'phone'>) => t.or(types.map((type) => t.t(`identifier.${type}`)));

/** The input type and hints for an email address, a phone number, or either. */
export const contactInput = (types: ReadonlyArray<'email' | 'phone'>) =>
  types.length === 1 && types[0] === 'phone'
    ? ({ type: 'tel', inputmode: 'tel', autocomplete: 'tel' } as const)
    : types.length === 1
      ? ({ type: 'email', autocomplete: 'email' } as const)
      : ({ type: 'text', autocomplete: 'username' } as const);

/** The fields several pages ask for, each with its label, type and `autocomplete` in one place. */
export const fieldsFor = (t: Translator, minPasswordLength: number) =>
  ({
    username: { id: 'username', label: t.t('field.username'), hint: t.t('hint.username'), autocomplete: 'username' },
    email: { id: 'email', label: t.t('field.email'), type: 'email', autocomplete: 'email' },
    phone: { id: 'phone', label: t.t('field.phone'), type: 'tel', inputmode: 'tel', autocomplete: 'tel' },
    newPassword: {
      id: 'password',
      label: t.t('field.password'),
      hint: t.t('hint.password', { min: minPasswordLength }),
      type: 'password',
      autocomplete: 'new-password',
      minlength: minPasswordLength,
      required: true,
    },
  }) satisfies Record<string, FieldSpec>;

/** Whether `value` is something a code can go to: an address where email codes are offered, a number where phone codes are. */
export const reachableBy = (value: string, types: ReadonlyArray<'email' | 'phone'>) =>
  (types.includes('email') && value.includes('@')) || (types.includes('phone') && /^\+?[\d\s().-]{6,}$/.test(value));

/** A button the passkey script drives (`register`, `authenticate` or `sign-in`), and where it says what went wrong, in the page's language. */
export const passkeyButton = (context: FormContext, mode: 'register' | 'authenticate' | 'sign-in', label: string) =>
  html`<button
      type="button"
      class="secondary"
      data-passkey="${mode}"
      data-base="${context.base}"
      data-not-used="${context.t.t('passkey.notUsed')}"
      data-failed="${context.t.t('passkey.failed')}"
    >
      ${label}
    </button>
    <p class="error" id="passkey-status" role="alert" hidden></p>`;
