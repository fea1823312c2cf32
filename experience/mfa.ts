import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import QRCode from 'qrcode';

import { ApiError, assertThat } from '../lib/errors.js';
import { addressKey } from '../lib/http/client-address.js';
import { generateId } from '../lib/ids.js';
import { hashBackupCode, matchBackupCode, newBackupCodes } from '../lib/mfa/backup-codes.js';
import { factorTypesOf, type MfaFactor, type MfaVerification, type WebAuthnFactor } from '../lib/mfa/model.js';
import type { SecretBox } from '../lib/mfa/secret-box.js';
import { newTotpSecret, totpStepOf, totpUri } from '../lib/mfa/totp.js';
import {
  authenticationOptions as webAuthnAuthenticationOptions,
  challengeTtlMs,
  registrationOptions as webAuthnRegistrationOptions,
  verifiedAssertion,
  verifiedRegistration,
  type RelyingParty,
} from '../lib/mfa/webauthn.js';
import type { UserDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Counters } from '../sign-in/counters.js';
import type { SignInSettings } from '../sign-in/settings.js';
import { secondFactorsFor, type ExperienceDocument, type ExperienceStore, type MfaVerificationRecord } from './state.js';

export interface ExperienceMfaDeps {
  queries: Queries;
  store: ExperienceStore;
  counters: Counters;
  signInSettings(): Promise<SignInSettings>;
  box: SecretBox;
  rp: RelyingParty;
  productName: string;
  now?: () => number;
}

/** RFC 8176 `amr` values: a one-time code (TOTP, a backup code), a hardware-bound key (WebAuthn). */
const amrOf: Record<MfaFactor, string> = { Totp: 'otp', BackupCode: 'otp', WebAuthn: 'hwk' };

const invalidTotp = () => new ApiError('session.mfa.invalid_totp_code', 'the code is wrong, expired or used already');
const invalidBackupCode = () => new ApiError('session.mfa.invalid_backup_code', 'the backup code is wrong or used already');
const webAuthnFailed = () => new ApiError('session.mfa.webauthn_verification_failed', 'the passkey could not be verified; try again');
const recordNotFound = () => new ApiError('session.verification_session_not_found', 'no MFA verification of this interaction has that id');
const identityChanged = () => new ApiError('session.identity_conflict', 'the interaction now names another account; prove the factor again');
const tooManyAttempts = (retryAfter: number) => new ApiError('session.too_many_attempts', 'too many attempts; try again later', { retryAfter });

/** The sealed-secret context of a TOTP secret before it belongs to a user: the interaction. */
const pendingContext = (experience: ExperienceDocument) => `experience:${experience._id}`;

/** A person's name for an authenticator app's list or a passkey prompt. */
const labelOf = (user: Pick<UserDocument, 'username' | 'primaryEmail' | 'primaryPhone'> | undefined, fallback: string) =>
  user?.username ?? user?.primaryEmail ?? (user?.primaryPhone ? `+${user.primaryPhone}` : fallback);

/**
 * MFA in the sign-in experience, as Logto's Experience API steps it: verifications that prove a
 * factor the user has (a TOTP code, a backup code, a passkey), verifications that make a new one
 * (a TOTP secret, backup codes, a passkey registration), binding a new one (`POST /profile/mfa`),
 * and the gate the submit passes (a user with factors proves one; mandatory MFA enrols one).
 */
export function createExperienceMfa(deps: ExperienceMfaDeps) {
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
    if (attempt.over) throw tooManyAttempts(attempt.retryAfter);
    return { refund: () => deps.counters.refund('failedPassword', key), attempt };
  }

  /**
   * Records that a factor of `userId` was proved in this interaction, only while it still names
   * that user: a proof made as another account was being identified counts for nobody (409).
   */
  async function proved(experience: ExperienceDocument, userId: string, type: MfaFactor) {
    assertThat(await store.proveFactor(experience._id, userId, amrOf[type]), identityChanged);
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

  return {
    usableFactors,

    /** A new TOTP secret and its QR code (a data: URL of a PNG), for an authenticator app; kept sealed until bound. */
    async totpSecret(experience: ExperienceDocument) {
      await requireEnabled('Totp');
      const { userId, label } = await subjectOf(experience);
      const secret = newTotpSecret();
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, {
        type: 'totp',
        userId,
        secret: box.seal(secret, pendingContext(experience)),
        verified: false,
      });
      const uri = totpUri(secret, { issuer: deps.productName, label });
      return { verificationId, secret, secretQrCode: await QRCode.toDataURL(uri), secretQrSvg: await QRCode.toString(uri, { type: 'svg', margin: 1 }) };
    },

    /**
     * A TOTP code: for a new secret of this interaction (`verificationId`), to prove the app has it;
     * otherwise for the user's own, once per time step (a replayed code is refused), counted toward the lockout.
     */
    async totpVerify(experience: ExperienceDocument, code: string, verificationId: string | undefined, ip: string): Promise<string> {
      const { userId, user } = await subjectOf(experience);
      if (verificationId !== undefined) {
        const record = recordOf(experience, verificationId, 'totp', userId);
        assertThat(record.secret, recordNotFound);
        assertThat(await totpStepOf(box.open(record.secret!, pendingContext(experience)), code, { now: now() }), invalidTotp);
        await store.completeVerification(experience._id, verificationId, {}, { verified: true });
        return verificationId;
      }
      const factor = user?.mfaVerifications?.find((candidate) => candidate.type === 'Totp');
      // Without a TOTP factor the answer is a wrong code, as for any other.
      assertThat(user && factor?.type === 'Totp', invalidTotp);
      const totp = factor as Extract<MfaVerification, { type: 'Totp' }>;
      const counted = await countTry(userId, ip);
      const step = await totpStepOf(box.open(totp.key, userId), code, {
        now: now(),
        ...(totp.lastUsedTimeStep !== undefined && { afterTimeStep: totp.lastUsedTimeStep }),
      });
      assertThat(step !== undefined, invalidTotp);
      // Stored only while the factors are as read: of two requests with one code, one wins.
      const modifiedCount = await replaceFactor(user!, { ...totp, lastUsedTimeStep: step!, lastUsedAt: iso() });
      assertThat(modifiedCount === 1, invalidTotp);
      await counted.refund();
      const id = generateId();
      await store.addVerification(experience._id, id, { type: 'totp', userId, verified: true });
      await proved(experience, userId, 'Totp');
      return id;
    },

    /** Ten new backup codes, shown this once; their hashes wait in the interaction until bound. */
    async backupCodesGenerate(experience: ExperienceDocument) {
      await requireEnabled('BackupCode');
      const { userId } = await subjectOf(experience);
      const codes = newBackupCodes();
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, { type: 'backupCode', userId, codes: codes.map(hashBackupCode), verified: true });
      return { verificationId, codes };
    },

    /** One of the user's backup codes, spent (a conditional update: one use, across processes); counted toward the lockout. */
    async backupCodeVerify(experience: ExperienceDocument, code: string, ip: string): Promise<string> {
      const { userId, user } = await subjectOf(experience);
      const factor = user?.mfaVerifications?.find((candidate) => candidate.type === 'BackupCode');
      assertThat(user && factor?.type === 'BackupCode', invalidBackupCode);
      const counted = await countTry(userId, ip);
      const codes = (factor as Extract<MfaVerification, { type: 'BackupCode' }>).codes;
      const index = matchBackupCode(codes, code);
      assertThat(index >= 0, invalidBackupCode);
      const spent = codes.map((entry, position) => (position === index ? { ...entry, usedAt: iso() } : entry));
      const modifiedCount = await replaceFactor(user!, { ...(factor as Extract<MfaVerification, { type: 'BackupCode' }>), codes: spent, lastUsedAt: iso() });
      assertThat(modifiedCount === 1, invalidBackupCode);
      await counted.refund();
      const id = generateId();
      await store.addVerification(experience._id, id, { type: 'backupCode', userId, verified: true });
      await proved(experience, userId, 'BackupCode');
      return id;
    },

    /** Options to register a passkey for the subject (none of its own again); the challenge answers once, within 5 minutes. */
    async webAuthnRegistration(experience: ExperienceDocument) {
      await requireEnabled('WebAuthn');
      const { userId, user, label } = await subjectOf(experience);
      const own = (user?.mfaVerifications ?? []).filter((factor): factor is WebAuthnFactor => factor.type === 'WebAuthn');
      const registrationOptions = await webAuthnRegistrationOptions(rp, { id: userId, name: label }, own);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, {
        type: 'webAuthn',
        userId,
        mode: 'registration',
        challenge: registrationOptions.challenge,
        expiresAt: now() + challengeTtlMs,
        verified: false,
      });
      return { verificationId, registrationOptions };
    },

    async webAuthnRegistrationVerify(experience: ExperienceDocument, verificationId: string, payload: RegistrationResponseJSON, agent: string) {
      const { userId } = await subjectOf(experience);
      const record = recordOf(experience, verificationId, 'webAuthn', userId);
      assertThat(record.mode === 'registration' && !record.verified && record.expiresAt > now(), webAuthnFailed);
      const credential = await verifiedRegistration(rp, record.challenge, payload, agent);
      assertThat(credential, webAuthnFailed);
      // The challenge answers once: a second answer finds the record verified and fails.
      assertThat(await store.completeVerification(experience._id, verificationId, { verified: false }, { verified: true, credential }), webAuthnFailed);
      return verificationId;
    },

    /**
     * Options to prove a passkey: the identified user's, or (passkey sign-in, when the settings
     * allow it, before identification) any discoverable one of this service.
     */
    async webAuthnAuthentication(experience: ExperienceDocument) {
      let userId: string | null = null;
      let allowed: WebAuthnFactor[] = [];
      if (experience.userId || experience.event !== 'SignIn') {
        const subject = await subjectOf(experience);
        userId = subject.userId;
        allowed = (subject.user?.mfaVerifications ?? []).filter((factor): factor is WebAuthnFactor => factor.type === 'WebAuthn');
      } else {
        assertThat(
          (await deps.signInSettings()).passkeySignIn.enabled,
          () => new ApiError('user.sign_in_method_not_enabled', 'passkey sign-in is not enabled'),
        );
      }
      const authenticationOptions = await webAuthnAuthenticationOptions(rp, allowed);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, {
        type: 'webAuthn',
        userId,
        mode: 'authentication',
        ...(userId === null && { firstFactor: true }),
        challenge: authenticationOptions.challenge,
        expiresAt: now() + challengeTtlMs,
        verified: false,
      });
      return { verificationId, authenticationOptions };
    },

    /**
     * A passkey's answer: signed by the credential the user registered, for our origin and RP id,
     * within 5 minutes, once, with its counter moving forward. For a passkey sign-in, the credential
     * names the user (and its user handle must agree); the verification then identifies them.
     */
    async webAuthnAuthenticationVerify(experience: ExperienceDocument, verificationId: string, payload: AuthenticationResponseJSON, ip: string) {
      const stored = Object.hasOwn(experience.verifications, verificationId) ? experience.verifications[verificationId] : undefined;
      assertThat(stored?.type === 'webAuthn' && stored.mode === 'authentication', recordNotFound);
      const record = stored as Extract<MfaVerificationRecord, { type: 'webAuthn' }>;
      // A second factor's challenge belongs to this interaction's user; a passkey sign-in's to whoever answers it.
      if (!record.firstFactor) assertThat(experience.userId === record.userId || experience.newUserId === record.userId, recordNotFound);
      assertThat(!record.verified && record.expiresAt > now(), webAuthnFailed);
      const user = !record.firstFactor
        ? await queries.users.findById(record.userId!)
        : await queries.users.collection.findOne({ mfaVerifications: { $elemMatch: { type: 'WebAuthn', credentialId: payload.id } } });
      const factor = user?.mfaVerifications?.find(
        (candidate): candidate is WebAuthnFactor => candidate.type === 'WebAuthn' && candidate.credentialId === payload.id,
      );
      assertThat(user && factor, webAuthnFailed);
      if (record.firstFactor) {
        // A discoverable credential reports whose it is; it must be the user the credential was registered to.
        const handle = payload.response.userHandle ? Buffer.from(payload.response.userHandle, 'base64url').toString('utf8') : undefined;
        assertThat(handle === user!._id, webAuthnFailed);
      }
      const counted = await countTry(user!._id, ip);
      const verified = await verifiedAssertion(rp, record.challenge, payload, factor!);
      assertThat(verified, webAuthnFailed);
      assertThat(await store.completeVerification(experience._id, verificationId, { verified: false }, { verified: true, userId: user!._id }), webAuthnFailed);
      // The counter moves only from the value just checked: a cloned authenticator racing the real one loses.
      const modifiedCount = await replaceFactor(user!, { ...factor!, counter: verified!.newCounter, lastUsedAt: iso() });
      assertThat(modifiedCount === 1, webAuthnFailed);
      await counted.refund();
      if (!record.firstFactor) await proved(experience, user!._id, 'WebAuthn');
      return verificationId;
    },

    /**
     * Logto's `POST /profile/mfa {type, verificationId}`: a new factor of this interaction to add at
     * submit. At sign-in, a user who has factors proves one first (403); one TOTP per user (422
     * `user.totp_already_in_use`); backup codes only beside another factor (422).
     */
    async bind(experience: ExperienceDocument, type: MfaFactor, verificationId: string) {
      await requireEnabled(type);
      const settings = await deps.signInSettings();
      const { userId, user } = await subjectOf(experience);
      const recordType = ({ Totp: 'totp', WebAuthn: 'webAuthn', BackupCode: 'backupCode' } as const)[type];
      const record = recordOf(experience, verificationId, recordType, userId);
      const isNew = record.type === 'totp' ? Boolean(record.secret) : record.type === 'backupCode' ? Boolean(record.codes) : Boolean(record.credential);
      assertThat(record.verified && isNew, () => new ApiError('session.mfa.pending_info_not_found', `verify the new ${type} first`));
      const held = secondFactorsFor(experience, userId);
      if (user && usableFactors(settings, user).length > 0) {
        assertThat(held.amr.length, () => requireMfaVerification(usableFactors(settings, user)));
      }
      const pending = held.bind.filter((id) => experience.verifications[id]?.type !== recordType || recordType === 'webAuthn');
      const has = new Set([...factorTypesOf(user?.mfaVerifications), ...pending.map((id) => factorOfRecord(experience.verifications[id]!.type))]);
      if (type === 'Totp')
        assertThat(
          !factorTypesOf(user?.mfaVerifications).includes('Totp'),
          () => new ApiError('user.totp_already_in_use', 'this account has an authenticator app already'),
        );
      if (type === 'BackupCode') {
        assertThat(
          [...has].some((factor) => factor !== 'BackupCode'),
          () => new ApiError('session.mfa.backup_code_can_not_be_alone', 'add another factor before backup codes'),
        );
      }
      assertThat(await store.bindFactors(experience._id, userId, [...pending, verificationId]), identityChanged);
    },

    /**
     * What the submit requires (Logto's order): a user with factors the settings offer proves one
     * (403 `session.mfa.require_mfa_verification`); under mandatory MFA an account without a factor
     * enrols one (422 `user.missing_mfa`), and backup codes too when they are offered (422
     * `session.mfa.backup_code_required`). Passes when MFA is off (no factors offered).
     */
    async assertSatisfied(experience: ExperienceDocument, userId: string, user: UserDocument | undefined) {
      const settings = await deps.signInSettings();
      const usable = usableFactors(settings, user);
      const held = boundFor(experience, userId);
      // A passkey sign-in is itself the strong factor (a key bound to a device, and the device's own check of the person).
      const passkey = experience.amr?.includes('hwk') ?? false;
      if (usable.length > 0 && !passkey) assertThat(held.amr.length, () => requireMfaVerification(usable));
      if (settings.mfa.policy !== 'Mandatory' || settings.mfa.factors.length === 0) return;
      const pending = held.bind.map((id) => factorOfRecord(experience.verifications[id]!.type));
      const linked = new Set([...factorTypesOf(user?.mfaVerifications), ...pending]);
      const enrollable = settings.mfa.factors.filter((factor) => factor !== 'BackupCode');
      assertThat(
        enrollable.some((factor) => linked.has(factor)),
        () => new ApiError('user.missing_mfa', 'this account needs a second factor before it continues', { availableFactors: enrollable }),
      );
      assertThat(
        !settings.mfa.factors.includes('BackupCode') || linked.has('BackupCode'),
        () => new ApiError('session.mfa.backup_code_required', 'save a set of backup codes before you continue'),
      );
    },

    /** The factors this interaction binds for `userId`, as stored (a TOTP secret sealed for its user now). */
    pendingFactors(experience: ExperienceDocument, userId: string): MfaVerification[] {
      const createdAt = iso();
      return boundFor(experience, userId).bind.map((id): MfaVerification => {
        const record = experience.verifications[id] as MfaVerificationRecord;
        if (record.type === 'totp')
          return { id: generateId(), type: 'Totp', key: box.seal(box.open(record.secret!, pendingContext(experience)), userId), createdAt };
        if (record.type === 'backupCode')
          return { id: generateId(), type: 'BackupCode', codes: record.codes!.map((hash) => ({ hash, usedAt: null })), createdAt };
        return { id: generateId(), type: 'WebAuthn', ...record.credential!, createdAt };
      });
    },

    /** The `amr` of the factors proved in this interaction for `userId`, with `mfa` when there were any (RFC 8176). */
    amrOf(experience: ExperienceDocument, userId: string): string[] {
      const { amr } = boundFor(experience, userId);
      return amr.length > 0 ? [...amr, 'mfa'] : [];
    },
  };
}

/**
 * The interaction's second factors that count for `userId`: the ones that name it (`secondFactorsFor`),
 * less any factor to bind whose verification was made for someone else.
 */
function boundFor(experience: ExperienceDocument, userId: string) {
  const { amr, bind } = secondFactorsFor(experience, userId);
  const own = (id: string) => {
    const record = Object.hasOwn(experience.verifications, id) ? experience.verifications[id] : undefined;
    return record !== undefined && 'userId' in record && record.userId === userId;
  };
  return { amr, bind: bind.filter(own) };
}

const factorOfRecord = (type: string): MfaFactor => (type === 'totp' ? 'Totp' : type === 'backupCode' ? 'BackupCode' : 'WebAuthn');

/** Logto's 403: the user has factors and has proved none in this interaction. */
export const requireMfaVerification = (availableFactors: MfaFactor[]) =>
  new ApiError('session.mfa.require_mfa_verification', 'prove a second factor first', { availableFactors });

export type ExperienceMfa = ReturnType<typeof createExperienceMfa>;
