import { ApiError, assertThat } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { factorTypesOf, type MfaFactor, type MfaVerification } from '../../lib/mfa/model.js';
import type { UserDocument } from '../../lib/store/models.js';
import { secondFactorsFor, type ExperienceDocument, type MfaVerificationRecord } from '../state.js';
import { identityChanged, pendingContext, type MfaContext } from './context.js';

/**
 * The gate of MFA: binding a new factor (`POST /profile/mfa`), what the submit requires, the
 * factors it adds, and the `amr` it reports, each for the one account the interaction signs in.
 */
export function mfaGate(context: MfaContext) {
  const { deps, store, box, iso, usableFactors, requireEnabled, subjectOf, recordOf, queries } = context;

  /** Whether the settings make a member of an organization that requires MFA enrol (Logto's `organizationRequiredMfaPolicy`), and this user is one. */
  async function organizationRequiresMfa(policy: string | undefined, user: UserDocument | undefined) {
    if (policy !== 'Mandatory' || !user) return false;
    const organizations = await queries.organizations.findByIds(await queries.links.organizationUsers.leftsOf(user._id));
    return organizations.some(({ isMfaRequired }) => isMfaRequired === true);
  }
  return {
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
     * (403 `session.mfa.require_mfa_verification`); under mandatory MFA (or, with
     * `organizationRequiredMfaPolicy: Mandatory`, for a member of an organization that requires it)
     * an account without a factor enrols one (422 `user.missing_mfa`), and backup codes too when
     * they are offered (422 `session.mfa.backup_code_required`). Passes when MFA is off (no factors offered).
     */
    async assertSatisfied(experience: ExperienceDocument, userId: string, user: UserDocument | undefined) {
      const settings = await deps.signInSettings();
      const usable = usableFactors(settings, user);
      const held = boundFor(experience, userId);
      // A passkey sign-in is itself the strong factor (a key bound to a device, and the device's own check of the person).
      const passkey = experience.amr?.includes('hwk') ?? false;
      if (usable.length > 0 && !passkey) assertThat(held.amr.length, () => requireMfaVerification(usable));
      if (settings.mfa.factors.length === 0) return;
      if (settings.mfa.policy !== 'Mandatory' && !(await organizationRequiresMfa(settings.mfa.organizationRequiredMfaPolicy, user))) return;
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
