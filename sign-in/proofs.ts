import { ApiError } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';
import { emailKey } from '../lib/identifiers.js';
import type { UserDocument } from '../lib/store/models.js';
import type { CodeTarget } from './codes.js';

/**
 * What a proof of who someone is stays bound to, so that it counts only while the account still
 * has what it proved. Whoever changes that (the owner in another session, an administrator, a
 * reset), a holder of the old one can no longer finish what they began with it.
 *
 * - `password`: the stored hash it was checked against, hashed again (`passwordProofOf`), so that a
 *   copy of the proofs holds no password hash;
 * - `address`: the email address or phone number a code or a magic link went to, or an upstream
 *   provider vouched for, as accounts are looked up by it (`addressProofOf`);
 * - `identity`: the key of the upstream account (social or enterprise SSO) linked to the account;
 * - `passkey`: the id of the passkey's credential.
 */
export interface Proof {
  kind: 'password' | 'address' | 'identity' | 'passkey';
  value: string;
}

export function passwordProofOf(passwordHash: string): string {
  return sha256(`password-proof:${passwordHash}`);
}

/** The proof a password checked now would give for this account; undefined for an account without a password. */
export function currentPasswordProof(user: Pick<UserDocument, 'passwordHash'>): string | undefined {
  return user.passwordHash === null ? undefined : passwordProofOf(user.passwordHash);
}

export function addressProofOf({ type, value }: CodeTarget): string {
  return type === 'email' ? `email:${emailKey(value)}` : `phone:${value}`;
}

/** The account's field an address proof names, and its value there (`addressProofOf`'s inverse). */
function addressField(proof: string): ['emailKey' | 'primaryPhone', string] {
  const [type, ...rest] = proof.split(':');
  return [type === 'email' ? 'emailKey' : 'primaryPhone', rest.join(':')];
}

/** Whether the account still has what the proof proved. */
export function stillProves(user: UserDocument, { kind, value }: Proof): boolean {
  switch (kind) {
    case 'password':
      return currentPasswordProof(user) === value;
    case 'address': {
      const [field, held] = addressField(value);
      return user[field] === held;
    }
    case 'identity':
      return user.identityKeys?.includes(value) === true;
    case 'passkey':
      return user.mfaVerifications?.some((factor) => factor.type === 'WebAuthn' && factor.credentialId === value) === true;
  }
}

/** A filter that matches the account only while it still has what `user` had for the proof (for a conditional write). */
export function stillProvesFilter(user: UserDocument, { kind, value }: Proof): Record<string, unknown> {
  switch (kind) {
    case 'password':
      return { passwordHash: user.passwordHash };
    case 'address': {
      const [field, held] = addressField(value);
      return { [field]: held };
    }
    case 'identity':
      return { identityKeys: value };
    case 'passkey':
      return { mfaVerifications: { $elemMatch: { type: 'WebAuthn', credentialId: value } } };
  }
}

/** A sign-in whose password was changed after it was checked: as a wrong password, the same answer (422). */
export const passwordChanged = () => new ApiError('session.invalid_credentials', 'the password was changed after it was checked: enter the new one');

/**
 * A sign-in or a reset whose address, upstream account or passkey left the account after it was
 * verified (400, Logto's code for a verification that does not hold).
 */
export const proofGone = () =>
  new ApiError('session.verification_failed', 'the account no longer has what was verified (an address, a linked account or a passkey): start again');

/** Refuses (as the proof's kind answers) when the account no longer has what the proof proved. */
export function assertStillProves(user: UserDocument, proof: Proof | undefined): void {
  if (proof && !stillProves(user, proof)) throw proof.kind === 'password' ? passwordChanged() : proofGone();
}
