import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

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
  const parsed = parsePhoneNumberFromString(digits.startsWith('+') ? digits : `+${digits}`);
  return parsed?.isPossible() ? parsed.number.slice(1) : undefined;
}
