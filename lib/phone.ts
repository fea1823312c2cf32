import { createRequire } from 'node:module';

import { ApiError } from './errors.js';

/**
 * libphonenumber-js with full metadata, loaded at the first number parsed (its metadata is a
 * tenth of a start's loading otherwise); synchronously, as the callers validate synchronously.
 */
let library: typeof import('libphonenumber-js/max') | undefined;
const phoneLibrary = () => (library ??= createRequire(import.meta.url)('libphonenumber-js/max') as typeof import('libphonenumber-js/max'));

/**
 * Phone numbers as Logto stores them: E.164 digits without the `+` (`61412345678`). Whatever a
 * person types for one number is one stored form: `+61 412 345 678`, `61412345678` and
 * `610412345678` (the national trunk `0` after the country code) are all `61412345678`; so is
 * uniqueness decided. The country code is required (there is no default region to guess from).
 * A number that cannot exist (too short or too long for its country, an unknown country code)
 * is undefined. Parsed by libphonenumber-js, Google's libphonenumber rules with full metadata.
 */
export function normalizePhone(input: string): string | undefined {
  const digits = input.replace(/[\s().-]/g, '');
  if (!/^\+?[0-9]{3,20}$/.test(digits)) return undefined;
  const parsed = phoneLibrary().parsePhoneNumberFromString(digits.startsWith('+') ? digits : `+${digits}`);
  return parsed?.isPossible() ? parsed.number.slice(1) : undefined;
}

/** A phone number as a person types one (digits, an optional `+`, spaces, dots, dashes, parentheses), before `normalizePhone`. */
export const phoneInput = { type: 'string', minLength: 3, maxLength: 32, pattern: '^\\+?[0-9 ().-]+$' } as const;

/** The stored form of a typed number, or 422 `user.invalid_phone` (naming `field`) for one that cannot exist. */
export function requirePhone(input: string, field?: string): string {
  const normalized = normalizePhone(input);
  if (normalized === undefined) {
    throw new ApiError('user.invalid_phone', `\`${input}\` is not a possible phone number (give it with its country code)`, field ? { field } : undefined);
  }
  return normalized;
}
