import { ApiError } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';
import { emailKey } from '../lib/identifiers.js';
import type { UserDocument } from '../lib/store/models.js';
import type { CodeTarget } from './codes.js';

/**
 * What a proof of who someone is stays bound to, so that it counts only while the account still
 * has what it proved: a password (checked), an email address or phone number (a code sent to it,
 * a magic link). Whoever changes it (the owner in another session, an administrator, a reset), a
 * holder of the old one can no longer finish what they began with it.
 */

/**
 * A password proof: the stored hash it was checked against, hashed again, so that a copy of the
 * proofs' collections holds no password hash.
 */
export function passwordProofOf(passwordHash: string): string {
  return sha256(`password-proof:${passwordHash}`);
}

/** The proof a password checked now would give for this account; undefined for an account without a password. */
export function currentPasswordProof(user: Pick<UserDocument, 'passwordHash'>): string | undefined {
  return user.passwordHash === null ? undefined : passwordProofOf(user.passwordHash);
}

/** An address proof: the address as accounts are looked up by it (an email's key, a phone number's stored form). */
export function addressProofOf({ type, value }: CodeTarget): string {
  return type === 'email' ? `email:${emailKey(value)}` : `phone:${value}`;
}

/** Whether the account still has the address a proof names. */
export function hasAddress(user: Pick<UserDocument, 'emailKey' | 'primaryPhone'>, proof: string): boolean {
  const [type, value] = [proof.slice(0, proof.indexOf(':')), proof.slice(proof.indexOf(':') + 1)];
  return type === 'email' ? user.emailKey === value : type === 'phone' && user.primaryPhone === value;
}

/** A filter that matches the account only while it still has the address (for a conditional write). */
export function addressFilter(proof: string): { emailKey: string } | { primaryPhone: string } {
  const value = proof.slice(proof.indexOf(':') + 1);
  return proof.startsWith('email:') ? { emailKey: value } : { primaryPhone: value };
}

/** A sign-in whose password was changed after it was checked: as a wrong password, the same answer (422). */
export const passwordChanged = () => new ApiError('session.invalid_credentials', 'the password was changed after it was checked: enter the new one');

/** A sign-in or reset whose address left the account after it was proved (400, Logto's code for a verification that does not hold). */
export const addressChanged = () =>
  new ApiError('session.verification_failed', 'the account no longer has the email address or phone number that was verified: start again');
