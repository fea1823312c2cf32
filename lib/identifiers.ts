/**
 * The one comparison of email addresses, everywhere one is looked up, made unique, counted or
 * mailed: Unicode NFKC (so that a full-width or ligature spelling is the same address) and then
 * case folding (upper then lower case folds `ß` to `ss` as Unicode's full folding does).
 * Usernames are ASCII by their schema and compared as written, as Logto does.
 */
export function emailKey(email: string): string {
  return email.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}
