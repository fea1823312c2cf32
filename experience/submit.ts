import type { InteractionKind } from '../hooks/catalog.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import { newUser, userChanges, userToApi } from '../lib/store/models.js';
import { assignDefaultRoles } from '../lib/store/default-roles.js';
import type { Origin } from '../lib/store/unit-of-work.js';
import { suspended, type AccountLookup } from './accounts.js';
import type { ExperienceServiceDeps } from './service.js';
import type { ExperienceDocument } from './state.js';
import type { SignInSettings } from './sign-in-settings.js';

type Submitter = (experience: ExperienceDocument, origin: Origin) => Promise<string>;

/**
 * What submitting each kind of interaction does with what it established: sign the user in,
 * create the account, or change the password. Each answers the user to hand to oidc-provider.
 */
/**
 * A registration's profile, checked: a username, a verified email or a verified phone number, a
 * password unless the settings make sign-up passwordless, and no identifier taken. Answers its parts.
 */
export async function newAccountProfile(experience: ExperienceDocument, accounts: AccountLookup, settings: SignInSettings) {
  const { username, email, phone, passwordHash } = experience.profile;
  assertThat(
    username || email || phone,
    new ApiError('session.missing_profile', 'a username, a verified email address or a verified phone number is needed', {
      missing: ['username', 'email', 'phone'],
    }),
  );
  assertThat(passwordHash || !settings.signUp.password, new ApiError('session.missing_profile', 'a password is needed', { missing: ['password'] }));
  await accounts.assertUnused({ username, email, phone });
  return { username, email, phone, passwordHash };
}

export function createSubmitters(
  deps: Pick<ExperienceServiceDeps, 'queries' | 'write' | 'revokeAccount' | 'signInSettings'>,
  accounts: AccountLookup,
): Record<InteractionKind, Submitter> {
  const { queries } = deps;
  return {
    async SignIn(experience, origin) {
      assertThat(experience.userId, new ApiError('session.identifier_not_found', 'verify a password and identify first'));
      const userId = experience.userId!;
      const { email, phone } = experience.profile;
      if (!email && !phone) {
        // Conditional: a user suspended (or deleted) since the password was checked is not signed in.
        const { matchedCount } = await queries.users.collection.updateOne({ _id: userId, isSuspended: false }, { $set: { lastSignInAt: Date.now() } });
        assertThat(matchedCount === 1, suspended);
        return userId;
      }
      // An email or phone proved in this sign-in joins the account: a change, announced with the interaction.
      // One taken meanwhile by another account is 422 (the unique index, through `update`), and nothing is written.
      await deps.write(origin, async ({ session, intend, record }) => {
        await intend({ entity: 'User', action: 'updated', id: userId });
        const before = await queries.users.findByIdOrThrow(userId, session);
        assertThat(!before.isSuspended, suspended);
        const now = Date.now();
        const updated = await queries.users.update(
          userId,
          {
            ...(email && { primaryEmail: email, emailKey: emailKey(email) }),
            ...(phone && { primaryPhone: phone }),
            lastSignInAt: now,
            updatedAt: now,
          },
          session,
        );
        record({ entity: 'User', action: 'updated', id: userId, data: userToApi(updated), changes: userChanges(before, updated) });
      });
      return userId;
    },

    async Register(experience, origin) {
      const { username, email, phone, passwordHash } = await newAccountProfile(experience, accounts, await deps.signInSettings());
      const now = Date.now();
      const user = newUser({ username, primaryEmail: email, primaryPhone: phone, passwordHash, lastSignInAt: now }, now);
      await deps.write(origin, async ({ session, intend, record }) => {
        await intend({ entity: 'User', action: 'created', id: user._id });
        await queries.users.insert(user, session);
        record({ entity: 'User', action: 'created', id: user._id, data: userToApi(user) });
        await assignDefaultRoles(queries, { session, record }, user._id);
      });
      return user._id;
    },

    async ForgotPassword(experience, origin) {
      assertThat(experience.userId, new ApiError('session.identifier_not_found', 'verify the email code and identify first'));
      assertThat(experience.profile.passwordHash, new ApiError('session.missing_profile', 'a new password is needed', { missing: ['password'] }));
      const userId = experience.userId;
      const now = Date.now();
      await deps.write(origin, async ({ session, intend, record }) => {
        await intend({ entity: 'User', action: 'updated', id: userId });
        const before = await queries.users.findByIdOrThrow(userId, session);
        const updated = await queries.users.update(userId, { passwordHash: experience.profile.passwordHash, updatedAt: now, lastSignInAt: now }, session);
        record({ entity: 'User', action: 'updated', id: userId, data: userToApi(updated), changes: userChanges(before, updated) });
        // Whoever held the old password may hold a session: every session, grant and token ends.
        await deps.revokeAccount(userId, session);
      });
      return userId;
    },
  };
}
