import { ApiError } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';

/**
 * What a password proof is bound to: the stored password hash it was checked against, hashed
 * again, so that a copy of the proofs' collections holds no password hash. A proof (a sign-in's
 * password step, an Account API step-up) counts only while the account's stored hash is still
 * that one: a new password, set by anyone and by any route, voids every proof of the old one.
 */
export function passwordProofOf(passwordHash: string): string {
  return sha256(`password-proof:${passwordHash}`);
}

/** The proof a password checked now would give for this account; undefined for an account without a password. */
export function currentPasswordProof(user: { passwordHash: string | null }): string | undefined {
  return user.passwordHash === null ? undefined : passwordProofOf(user.passwordHash);
}

/** A sign-in whose password was changed after it was checked: as a wrong password, the same answer (422). */
export const passwordChanged = () => new ApiError('session.invalid_credentials', 'the password was changed after it was checked: enter the new one');
