import type Provider from 'oidc-provider';

import type { InteractionKind } from '../hooks/catalog.js';
import { generateId } from '../lib/ids.js';
import type { MfaVerification } from '../lib/mfa/model.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import { emailDomainKey } from '../sso/domains.js';
import { newUser, userChanges, userToApi } from '../lib/store/models.js';
import { assignDefaultRoles } from '../lib/store/default-roles.js';
import { joinOrganizations } from '../lib/store/jit-organizations.js';
import type { Origin } from '../lib/store/changes.js';
import { suspended, type AccountLookup } from '../sign-in/accounts.js';
import { assertStillProves, stillProvesFilter } from '../sign-in/proofs.js';
import type { Caller, ExperienceResult, ExperienceServiceDeps } from './deps.js';
import type { InteractionSteps } from './interaction.js';
import { signInRecordOf } from './sign-in-record.js';
import type { ExperienceDocument } from './state.js';
import { assertIdentitiesFree, withIdentity, withSsoIdentity } from '../lib/store/identities.js';
import { assertProfileComplete, heldBy, newAccountProfile } from '../sign-in/profile.js';

type Interaction = InstanceType<Provider['Interaction']>;
type Submitter = (experience: ExperienceDocument, origin: Origin) => Promise<string>;

/** The user's factors with `added`: a new set of backup codes replaces the old one. */
function withFactors(existing: MfaVerification[] | undefined, added: MfaVerification[]): MfaVerification[] {
  const replaced = new Set(added.filter(({ type }) => type === 'BackupCode').map(({ type }) => type));
  return [...(existing ?? []).filter(({ type }) => !replaced.has(type)), ...added];
}

/**
 * What submitting each kind of interaction does with what it established: sign the user in,
 * create the account, or change the password. Each answers the user to hand to oidc-provider.
 */
export function createSubmitters(
  deps: Pick<ExperienceServiceDeps, 'queries' | 'write' | 'revokeAccount' | 'signInSettings' | 'mfa'>,
  accounts: AccountLookup,
): Record<InteractionKind, Submitter> {
  const { queries } = deps;
  /** The organizations a person joins by the SSO connector an identity came through (just-in-time, as Logto's `jit/sso-connectors`). */
  const ssoOrganizations = async (connectorId: string | undefined) => (connectorId ? queries.links.organizationJitSsoConnectors.leftsOf(connectorId) : []);
  return {
    async SignIn(experience, origin) {
      assertThat(experience.userId, new ApiError('session.identifier_not_found', 'verify a password and identify first'));
      const userId = experience.userId!;
      const { profile } = experience;
      const user = await queries.users.findById(userId);
      assertThat(user && !user.isSuspended, suspended);
      // Only while the account still has what identified it (a change since voids the sign-in).
      assertStillProves(user!, experience.identifiedBy);
      // An account without what the settings now require completes its profile first (Logto's profile fulfilment).
      assertProfileComplete(await deps.signInSettings(), heldBy(profile, user!));
      // A user with a second factor proves it; mandatory MFA enrols one (Logto's 403 and 422).
      await deps.mfa.assertSatisfied(experience, userId, user!, origin.interaction?.applicationId);
      const factors = deps.mfa.pendingFactors(experience, userId);
      const skipped = deps.mfa.skipped(experience, userId) && user!.mfaSkipped !== true;
      const nothingNew =
        !profile.email &&
        !profile.phone &&
        !profile.username &&
        !profile.passwordHash &&
        !profile.socialIdentity &&
        !profile.ssoIdentity &&
        !profile.jitOrganizationIds?.length;
      if (nothingNew && !profile.synced && factors.length === 0 && !skipped) {
        // Conditional: a user suspended (or deleted) since the password was checked is not signed in, nor one that no longer has what identified it.
        const { matchedCount } = await queries.users.collection.updateOne(
          { _id: userId, isSuspended: false, ...(experience.identifiedBy && stillProvesFilter(user!, experience.identifiedBy)) },
          { $set: { lastSignInAt: Date.now() } },
        );
        if (matchedCount === 0) {
          const now = await queries.users.findById(userId);
          assertThat(now && !now.isSuspended, suspended);
          assertStillProves(now!, experience.identifiedBy);
          throw new ApiError('session.identity_conflict', 'the account changed while this sign-in was submitted; submit again');
        }
        return userId;
      }
      // What was added in this sign-in joins the account: a change, announced with the interaction. An
      // identifier taken meanwhile by another account is 422 (the unique index, through `update`), and nothing is written.
      await deps.write(origin, async ({ intend, record }) => {
        await intend({ entity: 'User', action: 'updated', id: userId });
        const before = await queries.users.findByIdOrThrow(userId);
        assertThat(!before.isSuspended, suspended);
        assertStillProves(before, experience.identifiedBy);
        const social = profile.socialIdentity && withIdentity(before, profile.socialIdentity);
        const sso = profile.ssoIdentity && withSsoIdentity({ ...before, ...social }, profile.ssoIdentity);
        const linked = { ...social, ...sso };
        await assertIdentitiesFree(queries.users.collection, userId, linked.identityKeys ?? []);
        // A connector with `syncProfile`: what the provider now says (an email another account took meanwhile is 422, through the index).
        const { synced } = profile;
        const email = profile.email ?? synced?.email;
        const now = Date.now();
        const updated = await queries.users.update(userId, {
          ...(email && { primaryEmail: email, emailKey: emailKey(email) }),
          ...(synced?.name && { name: synced.name }),
          ...(synced?.avatar && { avatar: synced.avatar }),
          ...(profile.phone && { primaryPhone: profile.phone }),
          ...(profile.username && { username: profile.username }),
          ...(profile.passwordHash && { passwordHash: profile.passwordHash }),
          ...(factors.length > 0 && { mfaVerifications: withFactors(before.mfaVerifications, factors) }),
          ...(skipped && { mfaSkipped: true }),
          ...linked,
          lastSignInAt: now,
          updatedAt: now,
        });
        record({ entity: 'User', action: 'updated', id: userId, data: userToApi(updated), changes: userChanges(before, updated) });
        await joinOrganizations(queries, { intend, record }, userId, [
          ...(profile.jitOrganizationIds ?? []),
          ...(await ssoOrganizations(profile.ssoIdentity?.ssoConnectorId)),
        ]);
      });
      return userId;
    },

    async Register(experience, origin) {
      /**
       * The organizations a new account joins by its email's domain (just-in-time): only for an
       * address this interaction proved, by a code (the settings' `signUp.verify`) or a one-time
       * token; never one an upstream provider merely said.
       */
      const domainOrganizations = async ({ profile, verifications }: ExperienceDocument, address: string | undefined) => {
        if (!address) return [];
        const byToken = Object.values(verifications).some((verification) => verification.type === 'oneTimeToken' && verification.email === emailKey(address));
        const byCode = (await deps.signInSettings()).signUp.verify && !profile.socialIdentity && !profile.ssoIdentity;
        const domain = emailDomainKey(address);
        return (byToken || byCode) && domain ? queries.links.organizationJitEmailDomains.leftsOf(domain) : [];
      };
      const { username, email, phone, passwordHash } = await newAccountProfile(experience.profile, accounts, await deps.signInSettings());
      // The id a passkey registered in this interaction names, when there is one.
      const id = experience.newUserId ?? generateId(12);
      await deps.mfa.assertSatisfied(experience, id, undefined, origin.interaction?.applicationId);
      const now = Date.now();
      const mfaVerifications = deps.mfa.pendingFactors(experience, id);
      const { socialIdentity, ssoIdentity } = experience.profile;
      const details = socialIdentity?.details ?? experience.profile.synced;
      const user = newUser(
        {
          username,
          primaryEmail: email,
          primaryPhone: phone,
          passwordHash,
          lastSignInAt: now,
          mfaVerifications,
          ...(deps.mfa.skipped(experience, id) && { mfaSkipped: true }),
          ...(details?.name && { name: details.name }),
          ...(details?.avatar && { avatar: details.avatar }),
        },
        now,
        id,
      );
      if (socialIdentity) Object.assign(user, withIdentity(user, socialIdentity));
      if (ssoIdentity) Object.assign(user, withSsoIdentity(user, ssoIdentity));
      await deps.write(origin, async ({ intend, record }) => {
        await intend({ entity: 'User', action: 'created', id: user._id });
        await assertIdentitiesFree(queries.users.collection, user._id, user.identityKeys ?? []);
        await queries.users.insert(user);
        record({ entity: 'User', action: 'created', id: user._id, data: userToApi(user) });
        await assignDefaultRoles(queries, { intend, record }, user._id);
        await joinOrganizations(queries, { intend, record }, user._id, [
          ...(experience.profile.jitOrganizationIds ?? []),
          ...(await domainOrganizations(experience, email)),
          ...(await ssoOrganizations(ssoIdentity?.ssoConnectorId)),
        ]);
      });
      return user._id;
    },

    async ForgotPassword(experience, origin) {
      assertThat(experience.userId, new ApiError('session.identifier_not_found', 'verify the email code and identify first'));
      assertThat(experience.profile.passwordHash, new ApiError('user.new_password_required_in_profile', 'a new password is needed'));
      const userId = experience.userId;
      const now = Date.now();
      await deps.write(origin, async ({ intend, record }) => {
        await intend({ entity: 'User', action: 'updated', id: userId });
        const before = await queries.users.findByIdOrThrow(userId);
        // The address the code went to must still be the account's: one changed since resets nothing.
        assertStillProves(before, experience.identifiedBy);
        // Nobody signs in here: the person signs in next, with the new password and any second factor.
        const updated = await queries.users.update(userId, { passwordHash: experience.profile.passwordHash, updatedAt: now });
        record({ entity: 'User', action: 'updated', id: userId, data: userToApi(updated), changes: userChanges(before, updated) });
        // Whoever held the old password may hold a session: every session, grant and token ends.
        await deps.revokeAccount(userId, 'password_reset');
      });
      return userId;
    },
  };
}

/**
 * The submit: makes the change the interaction was for (`createSubmitters`). A sign-in or a
 * registration then signs the user in and answers the URL to send the browser to. A password reset
 * signs nobody in (as Logto's): the interaction starts over, so that the person signs in with the new
 * password and, when the account has one, its second factor; it answers undefined.
 */
export function submitStep(
  deps: Pick<ExperienceServiceDeps, 'queries' | 'write' | 'revokeAccount' | 'signInSettings' | 'mfa' | 'store' | 'reportInteraction' | 'logger' | 'codes'>,
  interaction: Pick<InteractionSteps, 'requireEvent' | 'originOf' | 'finish'>,
  accounts: AccountLookup,
) {
  const { store } = deps;
  const submitters = createSubmitters(deps, accounts);

  /**
   * Announces a password reset (PostResetPassword): nobody signs in, so the provider's end of an
   * interaction does not; the interaction is the event's session. Recorded after the change commits;
   * a failure is logged, and the reset stands.
   */
  async function reportReset(experience: ExperienceDocument, userId: string, clientId: string | undefined, caller: Caller) {
    const report = {
      event: 'PostResetPassword' as const,
      userId,
      ...(clientId && { applicationId: clientId }),
      sessionId: experience._id,
      ip: caller.ip,
      ...(caller.userAgent && { userAgent: caller.userAgent }),
    };
    await deps.reportInteraction(report).catch((error: unknown) => deps.logger.error('The PostResetPassword event could not be recorded', error));
  }

  /** `loaded`: the provider's interaction as this request read it, if it did. */
  return async function submit(given: ExperienceDocument, clientId: string | undefined, caller: Caller, loaded?: Interaction): Promise<string | undefined> {
    const experience = await store.get(given._id);
    const event = interaction.requireEvent(experience, 'SignIn', 'Register', 'ForgotPassword');
    if (!(await store.claimSubmit(experience))) {
      const now = await store.get(experience._id);
      throw now.submittedAt !== null
        ? new ApiError('session.already_submitted', 'this interaction has been submitted')
        : new ApiError('session.identity_conflict', 'the interaction changed while it was being submitted; submit again');
    }
    let accountId: string;
    try {
      accountId = await submitters[event](experience, interaction.originOf(caller, experience, event, clientId));
    } catch (error) {
      await store.releaseSubmit(experience._id);
      throw error;
    }
    if (event === 'ForgotPassword') {
      await store.startOver(experience._id);
      await reportReset(experience, accountId, clientId, caller);
      return undefined;
    }
    try {
      // What the sign-in proved, kept with its session for the JWT customizer's `interaction` context.
      const signIn = await signInRecordOf(experience, event, accountId, () => deps.queries.users.findByIdOrThrow(accountId), deps.codes);
      const result: ExperienceResult = { identityEvent: event, signIn };
      // A new account proved a password, a code, or both; a sign-in, what identified it; then the
      // second factors proved for this very account (a proof names the account it is for).
      // A registration proved a code, a password, or (through a connector) none of RFC 8176's kinds.
      const upstream = experience.profile.socialIdentity ?? experience.profile.ssoIdentity;
      const first = experience.amr ?? (event === 'Register' ? (upstream ? [] : experience.profile.passwordHash ? ['pwd'] : ['otp']) : ['pwd']);
      const amr = [...new Set([...first, ...deps.mfa.amrOf(experience, accountId)])];
      return await interaction.finish(experience._id, { login: { accountId, ...(amr.length > 0 && { amr }) }, ...result }, loaded);
    } catch (error) {
      await store.releaseSubmit(experience._id);
      throw error;
    }
  };
}
