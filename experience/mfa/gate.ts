import { ApiError, assertThat } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { factorTypesOf, type MfaFactor, type MfaVerification } from '../../lib/mfa/model.js';
import type { UserDocument } from '../../lib/store/models.js';
import { mfaPolicyPrompts, mfaPolicySkippable, type SignInSettings } from '../../sign-in/settings.js';
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
  /** Whether signing in to this application takes a second factor whatever the policy (the admin console's). */
  const applicationRequiresMfa = (applicationId: string | undefined) => applicationId !== undefined && deps.mfaRequiredBy?.(applicationId) === true;
  /** Whether the policy lets `user` (undefined: an account to create) go on without a factor, signing in to `applicationId`. */
  const maySkip = async (mfa: SignInSettings['mfa'], user: UserDocument | undefined, applicationId: string | undefined) =>
    mfaPolicySkippable(mfa.policy) && !applicationRequiresMfa(applicationId) && !(await organizationRequiresMfa(mfa.organizationRequiredMfaPolicy, user));
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
      const held = secondFactorsFor(experience, userId, user);
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
     * Logto's `POST /profile/mfa/mfa-skipped`: this account goes on without enrolling a factor,
     * where the policy lets it (422 `session.mfa.mfa_policy_not_user_controlled` otherwise, and
     * for a member of an organization that requires MFA). A user with factors proves one first
     * (403), as for binding. The submit keeps the skip on the account.
     */
    async skip(experience: ExperienceDocument, applicationId: string | undefined) {
      const settings = await deps.signInSettings();
      const { userId, user } = await subjectOf(experience);
      if (user && usableFactors(settings, user).length > 0) {
        assertThat(secondFactorsFor(experience, userId, user).amr.length, () => requireMfaVerification(usableFactors(settings, user)));
      }
      assertThat(
        await maySkip(settings.mfa, user, applicationId),
        () => new ApiError('session.mfa.mfa_policy_not_user_controlled', `the MFA policy (${settings.mfa.policy}) does not let this account skip enrolling`),
      );
      assertThat(await store.skipFactors(experience._id, userId), identityChanged);
    },

    /** Whether the policy lets this interaction's account skip enrolling now (for a page to offer it). */
    async skippable(experience: ExperienceDocument, applicationId: string | undefined): Promise<boolean> {
      const { user } = await subjectOf(experience);
      return maySkip((await deps.signInSettings()).mfa, user, applicationId);
    },

    /**
     * What the submit requires (Logto's order): a user with factors the settings offer proves one
     * (403 `session.mfa.require_mfa_verification`); an account without a factor enrols one when
     * the policy asks at this kind of submit (`mfaPolicies`) and it has not skipped (422
     * `user.missing_mfa`, `skippable` where it may), or always as a member of an organization that
     * requires MFA under `organizationRequiredMfaPolicy: Mandatory`, or for an application that
     * requires it (`mfaRequiredBy`: the admin console); backup codes too when they are offered
     * (422 `session.mfa.backup_code_required`). Passes when MFA is off (no factors offered).
     */
    async assertSatisfied(experience: ExperienceDocument, userId: string, user: UserDocument | undefined, applicationId?: string) {
      const settings = await deps.signInSettings();
      const usable = usableFactors(settings, user);
      const held = boundFor(experience, userId, user);
      // A passkey sign-in is itself the strong factor (a key bound to a device, and the device's own check of the person).
      const passkey = experience.amr?.includes('hwk') ?? false;
      if (usable.length > 0 && !passkey) assertThat(held.amr.length, () => requireMfaVerification(usable));
      if (settings.mfa.factors.length === 0) return;
      const { policy } = settings.mfa;
      const required = applicationRequiresMfa(applicationId) || (await organizationRequiresMfa(settings.mfa.organizationRequiredMfaPolicy, user));
      const skippable = !required && mfaPolicySkippable(policy);
      if (!required && !mfaPolicyPrompts(policy, experience.event === 'Register' ? 'Register' : 'SignIn')) return;
      // A skip counts for the account it was made for, in this interaction or an earlier one (kept on the account).
      if (skippable && (held.skipped || user?.mfaSkipped === true)) return;
      const pending = held.bind.map((id) => factorOfRecord(experience.verifications[id]!.type));
      const linked = new Set([...factorTypesOf(user?.mfaVerifications), ...pending]);
      const enrollable = settings.mfa.factors.filter((factor) => factor !== 'BackupCode');
      assertThat(
        enrollable.some((factor) => linked.has(factor)),
        () =>
          new ApiError('user.missing_mfa', 'this account needs a second factor before it continues', {
            availableFactors: enrollable,
            ...(skippable && { skippable: true }),
          }),
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

    /** Whether `userId` skipped enrolling in this interaction (the submit keeps it on the account). */
    skipped: (experience: ExperienceDocument, userId: string): boolean => boundFor(experience, userId).skipped,

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
function boundFor(experience: ExperienceDocument, userId: string, user?: UserDocument) {
  const { amr, bind, skipped } = secondFactorsFor(experience, userId, user);
  const own = (id: string) => {
    const record = Object.hasOwn(experience.verifications, id) ? experience.verifications[id] : undefined;
    return record !== undefined && 'userId' in record && record.userId === userId;
  };
  return { amr, bind: bind.filter(own), skipped };
}

const factorOfRecord = (type: string): MfaFactor => (type === 'totp' ? 'Totp' : type === 'backupCode' ? 'BackupCode' : 'WebAuthn');

/** Logto's 403: the user has factors and has proved none in this interaction. */
export const requireMfaVerification = (availableFactors: MfaFactor[]) =>
  new ApiError('session.mfa.require_mfa_verification', 'prove a second factor first', { availableFactors });
