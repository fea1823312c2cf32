import { ApiError } from '../../lib/errors.js';
import { email as emailSchema } from '../../lib/identifiers.js';
import { phoneInput } from '../../lib/phone.js';
import { en, type MessageKey } from '../../i18n/en.js';
import type { Translator } from '../../i18n/index.js';
import type { CodeTarget } from '../../sign-in/codes.js';
import { usernamePattern } from '../../sign-in/schemas.js';
import type { Identifier } from '../service.js';
import * as views from '../views/pages.js';
import type { PageRequest } from './request.js';

// The forms accept what the JSON API's schemas accept.
export const usernameFormat = new RegExp(usernamePattern);
const emailFormat = new RegExp(emailSchema.pattern);
const validEmail = (email: string) => email.length <= emailSchema.maxLength && emailFormat.test(email);
const phoneLike = new RegExp(phoneInput.pattern);

/** A sentence for the page: the API's message, capitalized. */
const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;

/** A refusal of the pages' own checks: its code, the message from the catalog, and the field it is about. */
export const formError = (
  code: 'guard.invalid_input' | 'user.missing_profile' | 'user.sign_in_method_not_enabled' | 'session.invalid_credentials',
  key: MessageKey,
  field?: string,
) => new ApiError(code, en[key].replace(/\.$/, ''), { messageKey: key, ...(field && { pageField: field }) });

/** The field (an input's id) each kind of error is about, where the code says it. */
const fieldOfError: Partial<Record<string, string>> = {
  'session.invalid_credentials': 'password',
  'verification_code.code_mismatch': 'code',
  'verification_code.expired': 'code',
  'verification_code.exceed_max_try': 'code',
  'verification_code.not_found': 'code',
  'session.mfa.invalid_totp_code': 'totp',
  'session.mfa.invalid_backup_code': 'backup-code',
  'password.rejected': 'password',
  'user.same_password': 'password',
  'user.username_already_in_use': 'username',
  'user.email_already_in_use': 'email',
  'session.email_blocklist.email_not_allowed': 'email',
  'session.email_blocklist.email_subaddressing_not_allowed': 'email',
  'user.phone_already_in_use': 'phone',
  'user.invalid_phone': 'phone',
};

/**
 * What an error says on a page, in the page's language: the pages' own checks and the errors a
 * person can cause have catalog messages (a wait said in minutes or seconds); anything else keeps
 * the API's English message, marked as English for screen readers.
 */
export function pageErrorOf(error: ApiError, t: Translator): views.PageError {
  const data = error.data ?? {};
  const field = typeof data.pageField === 'string' ? data.pageField : fieldOfError[error.code];
  const wait = typeof data.retryAfter === 'number' ? t.duration(data.retryAfter) : '';
  const key =
    typeof data.messageKey === 'string'
      ? data.messageKey
      : error.code === 'password.rejected' && typeof data.rule === 'string'
        ? `error.password.${data.rule}`
        : `error.${error.code}`;
  if (key in en) return { text: t.t(key as MessageKey, { wait, min: Number(data.min ?? 0), max: Number(data.max ?? 0) }), field };
  return { text: sentence(error.message), field, ...(t.locale !== 'en' && { lang: 'en' }) };
}

/** Runs `work`; an error it throws is said beside the field `id` (the one field its form has, whatever the error names). */
export async function aboutField<T>(id: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      throw new ApiError(error.code, error.message, { ...error.data, pageField: id }, error.status);
    }
    throw error;
  }
}

/** A code as a person types or pastes it ("123 456", "123-456"): the digits. */
export const digitsOf = (code: string) => code.replace(/[\s-]/g, '');

export const withError = (request: PageRequest, error?: views.PageError) => ({ ...request.page, error });
/** A form field as typed, trimmed; empty when the form has none. */
export const field = (request: PageRequest, name: string) => (request.form.get(name) ?? '').trim();
export const clientOf = (request: PageRequest): string => String(request.details.params.client_id);
/** What a person typed where an email or a phone number goes: an address has an `@`. */
export const contactOf = (value: string): CodeTarget => (value.includes('@') ? { type: 'email', value } : { type: 'phone', value });
/** What a person typed to sign in: an address, a phone number (digits, `+`, spaces and punctuation), or a username. */
export const identifierOf = (value: string): Identifier =>
  value.includes('@') ? { type: 'email', value } : phoneLike.test(value) ? { type: 'phone', value } : { type: 'username', value };
export const checkEmail = (email: string, id = 'email') => {
  if (!validEmail(email)) throw formError('guard.invalid_input', 'error.emailFormat', id);
};

/** The code a form carries back: its target (an `email` or `phone` field) and verification id. */
export const sentCodeOf = (request: PageRequest): views.SentCode => {
  const phone = field(request, 'phone');
  return {
    ...(phone ? { type: 'phone', value: phone } : { type: 'email', value: field(request, 'email') }),
    verificationId: field(request, 'verificationId'),
  };
};

/** OIDC Core §3.1.2.1 `login_hint`: the identifier the application says the user will likely use. */
const loginHintOf = (request: PageRequest): string => {
  const hint = request.details.params.login_hint;
  return typeof hint === 'string' && hint.length <= 256 ? hint : '';
};

/** The sign-in page; `after` prefills the identifier and says what just happened (a reset). */
export const renderSignIn = (request: PageRequest, error?: views.PageError, after?: { identifier: string; notice: string }) => {
  const { methods } = request.settings.signIn;
  return views.signInPage(
    { ...withError(request, error), ...(after && { notice: after.notice }) },
    {
      identifier: after ? after.identifier : request.form.has('identifier') ? field(request, 'identifier') : loginHintOf(request),
      password: methods.filter((method) => method.password).map(({ identifier }) => identifier),
      code: methods.filter((method) => method.verificationCode && method.identifier !== 'username').map(({ identifier }) => identifier as 'email' | 'phone'),
      passkey: request.settings.passkeySignIn.enabled,
      social: request.social,
      sso: request.sso,
    },
  );
};
