import { ApiError } from '../lib/errors.js';
import { commonPasswords } from './common-passwords.js';

export const minPasswordLength = 8;
export const maxPasswordLength = 256;

/** The identifiers a password may not be or contain: a username, an email and its local part. */
function identifierForms(identifiers: Array<string | null | undefined>): string[] {
  return identifiers
    .filter((value): value is string => typeof value === 'string' && value.length > 0)
    .flatMap((value) => [value, value.split('@')[0] ?? ''])
    .map((value) => value.toLowerCase())
    .filter((value) => value.length >= 3);
}

/** Each rule and the one-line reason shown when it fails. */
/** Each rule, its name (in the error's `data.rule`, for a page to say it in the person's language) and the one-line reason. */
const rules: Array<{ rule: 'minLength' | 'maxLength' | 'identifier' | 'common'; fails: (password: string, identifiers: string[]) => boolean; reason: string }> =
  [
    {
      rule: 'minLength',
      fails: (password) => [...password].length < minPasswordLength,
      reason: `the password must have at least ${minPasswordLength} characters`,
    },
    { rule: 'maxLength', fails: (password) => password.length > maxPasswordLength, reason: `the password must have at most ${maxPasswordLength} characters` },
    {
      rule: 'identifier',
      fails: (password, identifiers) => identifiers.some((identifier) => password.toLowerCase().includes(identifier)),
      reason: 'the password must not contain your username or email',
    },
    { rule: 'common', fails: (password) => commonPasswords.has(password.toLowerCase()), reason: 'this password is too common; choose another' },
  ];

/** Throws 422 `password.rejected` naming the first rule the password breaks. */
export function assertPasswordAllowed(password: string, identifiers: Array<string | null | undefined>): void {
  const forms = identifierForms(identifiers);
  const broken = rules.find((rule) => rule.fails(password, forms));
  if (broken) throw new ApiError('password.rejected', broken.reason, { field: 'password', rule: broken.rule, min: minPasswordLength, max: maxPasswordLength });
}
