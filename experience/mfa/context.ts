import { ApiError, assertThat } from '../../lib/errors.js';
import { addressKey } from '../../lib/http/client-address.js';
import { generateId } from '../../lib/ids.js';
import { factorTypesOf, type MfaFactor, type MfaVerification } from '../../lib/mfa/model.js';
import type { SecretBox } from '../../lib/mfa/secret-box.js';
import { type RelyingParty } from '../../lib/mfa/webauthn.js';
import type { UserDocument } from '../../lib/store/models.js';
import type { Queries } from '../../lib/store/queries/index.js';
import type { Counters } from '../../sign-in/counters.js';
import type { SignInSettings } from '../../sign-in/settings.js';
import { type ExperienceDocument, type ExperienceStore, type MfaVerificationRecord } from '../state.js';

export interface ExperienceMfaDeps {
  queries: Queries;
  store: ExperienceStore;
  counters: Counters;
  signInSettings(): Promise<SignInSettings>;
  box: SecretBox;
  rp: RelyingParty;
  productName: string;
  /** Whether signing in to this application takes a second factor whatever the policy (the admin console's). */
  mfaRequiredBy?: (applicationId: string) => boolean;
  now?: () => number;
}

/** RFC 8176 `amr` values: a one-time code (TOTP, a backup code), a hardware-bound key (WebAuthn). */
export const amrOfFactor: Record<MfaFactor, string> = { Totp: 'otp', BackupCode: 'otp', WebAuthn: 'hwk' };

export const invalidTotp = () => new ApiError('session.mfa.invalid_totp_code', 'the code is wrong, expired or used already');
export const invalidBackupCode = () => new ApiError('session.mfa.invalid_backup_code', 'the backup code is wrong or used already');
export const webAuthnFailed = () => new ApiError('session.mfa.webauthn_verification_failed', 'the passkey could not be verified; try again');
export const recordNotFound = () => new ApiError('session.verification_session_not_found', 'no MFA verification of this interaction has that id');
export const identityChanged = () => new ApiError('session.identity_conflict', 'the interaction now names another account; prove the factor again');
/** The account locked by failed attempts (its passwords and second factors count together): Logto's sentinel answer, with when to try again. */
export const accountBlocked = (retryAfter: number) =>
  new ApiError('session.verification_blocked_too_many_attempts', 'too many failed attempts for this account; try again later', { retryAfter });

/** The sealed-secret context of a TOTP secret before it belongs to a user: the interaction. */
export const pendingContext = (experience: ExperienceDocument) => `experience:${experience._id}`;

/** A person's name for an authenticator app's list or a passkey prompt. */
export const labelOf = (user: Pick<UserDocument, 'username' | 'primaryEmail' | 'primaryPhone'> | undefined, fallback: string) =>
  user?.username ?? user?.primaryEmail ?? (user?.primaryPhone ? `+${user.primaryPhone}` : fallback);

/** What every MFA step reads and shares: the dependencies, the clock, and the checks each step makes. */
export function createMfaContext(deps: ExperienceMfaDeps) {
  const { queries, store, box, rp } = deps;
  const now = deps.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();

  /** The factors of `user` the settings offer: the ones a sign-in asks for. */
  const usableFactors = (settings: SignInSettings, user: UserDocument | undefined) =>
    factorTypesOf(user?.mfaVerifications).filter((type) => settings.mfa.factors.includes(type));

  async function requireEnabled(type: MfaFactor) {
    const settings = await deps.signInSettings();
    const offered = settings.mfa.factors.includes(type) || (type === 'WebAuthn' && settings.passkeySignIn.enabled);
    assertThat(offered, () => new ApiError('session.mfa.mfa_factor_not_enabled', `${type} is not an MFA factor of this service`));
  }

  /**
   * Who a factor is for: at sign-in the identified user, at registration the account to create
   * (its id fixed now, as a passkey names its user). 422 before identification, as Logto's.
   */
  async function subjectOf(experience: ExperienceDocument): Promise<{ userId: string; user?: UserDocument; label: string }> {
    if (experience.event === 'SignIn') {
      assertThat(experience.userId, () => new ApiError('session.identifier_not_found', 'identify first, then MFA'));
      const user = await queries.users.findByIdOrThrow(experience.userId!);
      return { userId: user._id, user, label: labelOf(user, user._id) };
    }
    assertThat(experience.event === 'Register', () => new ApiError('session.invalid_event', 'MFA belongs to a sign-in or a registration'));
    const userId = experience.newUserId ?? (await store.setNewUserId(experience._id, generateId(12)));
    const { username, email, phone } = experience.profile;
    return { userId, label: labelOf({ username: username ?? null, primaryEmail: email ?? null, primaryPhone: phone ?? null }, 'new account') };
  }

  /** A verification of this interaction of that type, for this subject; 404 otherwise. */
  function recordOf<T extends MfaVerificationRecord['type']>(experience: ExperienceDocument, id: string, type: T, userId: string | null) {
    const record = Object.hasOwn(experience.verifications, id) ? experience.verifications[id] : undefined;
    assertThat(record?.type === type && (record as MfaVerificationRecord).userId === userId, recordNotFound);
    return record as Extract<MfaVerificationRecord, { type: T }>;
  }

  /** Counts a try at the account's second factor toward its lockout (the same count as its passwords), before it is checked. */
  async function countTry(userId: string, ip: string) {
    const key = `account:${userId}|${addressKey(ip)}`;
    const attempt = await deps.counters.hit('failedPassword', key);
    if (attempt.over) throw accountBlocked(attempt.retryAfter);
    return { refund: () => deps.counters.refund('failedPassword', key), attempt };
  }

  /**
   * Records that a factor of `userId` was proved in this interaction, only while it still names
   * that user: a proof made as another account was being identified counts for nobody (409).
   */
  async function proved(experience: ExperienceDocument, userId: string, type: MfaFactor, factorId: string) {
    assertThat(await store.proveFactor(experience._id, userId, amrOfFactor[type], factorId), identityChanged);
  }

  /**
   * Replaces one factor of `user` (its use recorded), only while the user's factors are exactly as
   * read: a compare-and-set on the whole list, so that two uses of one code, or one counter, cannot
   * both pass. Answers how many users it changed (0 or 1).
   */
  async function replaceFactor(user: UserDocument, factor: MfaVerification): Promise<number> {
    const current = user.mfaVerifications ?? [];
    const next = current.map((candidate) => (candidate.id === factor.id ? factor : candidate));
    const { modifiedCount } = await queries.users.collection.updateOne({ _id: user._id, mfaVerifications: current }, { $set: { mfaVerifications: next } });
    return modifiedCount;
  }
  return { deps, queries, store, box, rp, now, iso, usableFactors, requireEnabled, subjectOf, recordOf, countTry, proved, replaceFactor };
}

export type MfaContext = ReturnType<typeof createMfaContext>;
