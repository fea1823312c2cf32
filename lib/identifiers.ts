/**
 * Identifiers, in one place for the Management API, the Experience API and the sign-in pages:
 * the rules for usernames and email addresses (Logto's), and the one comparison of addresses.
 */

/** A username starts with a letter or `_`, then letters, digits and `_`; compared as written, as Logto does. */
export const username = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } as const;
/** An email address: something, `@`, a domain with a dot. */
export const email = { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' } as const;

/**
 * The one comparison of email addresses, everywhere one is looked up, made unique, counted or
 * mailed: Unicode NFKC (so that a full-width or ligature spelling is the same address) and then
 * case folding (upper then lower case folds `ß` to `ss` as Unicode's full folding does).
 * Usernames are ASCII by their schema and compared as written, as Logto does.
 */
export function emailKey(email: string): string {
  return email.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}
