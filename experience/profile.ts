import type { InteractionKind } from '../hooks/catalog.js';
import { ApiError, assertThat } from '../lib/errors.js';
import type { AccountLookup } from '../sign-in/accounts.js';
import { requireSignUpIdentifier } from '../sign-in/methods.js';
import { assertPasswordAllowed } from '../sign-in/password-policy.js';
import { heldBy, newAccountProfile } from '../sign-in/profile.js';
import { missingProfile, type MissingProfile } from '../sign-in/settings.js';
import type { Caller, ExperienceServiceDeps } from './deps.js';
import type { createIdentification } from './identify.js';
import type { InteractionSteps } from './interaction.js';
import type { ExperienceDocument } from './state.js';
import type { HashFor } from './verifications/password.js';

/**
 * Who the interaction is about, and what is added to the account it signs in or creates: Logto's
 * `identification` and `profile` steps. Nothing reaches an account before the submit.
 */
export function profileSteps(
  deps: Pick<ExperienceServiceDeps, 'queries' | 'store' | 'codes' | 'signInSettings' | 'passwords'>,
  interaction: Pick<InteractionSteps, 'requireEvent' | 'setProfile'>,
  accounts: AccountLookup,
  identification: ReturnType<typeof createIdentification>,
  hashFor: HashFor,
) {
  const { queries, store, codes } = deps;
  const { requireEvent, setProfile } = interaction;

  /** At sign-in, the identified account, which may gain only what it lacks (Logto's `user.*_exists_in_profile`). */
  async function accountLacking(experience: ExperienceDocument, field: 'username' | 'email' | 'phone' | 'password') {
    assertThat(experience.userId, new ApiError('session.identifier_not_found', 'identify first, then add to the profile'));
    const user = await queries.users.findByIdOrThrow(experience.userId);
    const has = { username: user.username, email: user.primaryEmail, phone: user.primaryPhone, password: user.passwordHash }[field];
    const what = field === 'email' ? 'an email address' : field === 'phone' ? 'a phone number' : `a ${field}`;
    assertThat(!has, () => new ApiError(`user.${field}_exists_in_profile`, `the account has ${what} already`));
    return user;
  }

  return {
    /** Decides who the interaction is about, from a verification of this interaction. */
    async identify(given: ExperienceDocument, verificationId: string | undefined, options: { linkSocialIdentity?: boolean } = {}): Promise<InteractionKind> {
      const experience = await store.get(given._id);
      const event = requireEvent(experience, 'SignIn', 'Register', 'ForgotPassword');
      if (verificationId !== undefined) {
        await identification(experience, event, verificationId, options);
        return event;
      }
      // Without a verification, only a registration, from the profile given so far.
      assertThat(event === 'Register', new ApiError('guard.invalid_input', 'verificationId is missing', { field: 'body.verificationId' }));
      await newAccountProfile(experience.profile, accounts, await deps.signInSettings());
      return event;
    },

    /**
     * Sign-in or registration: adds an email address or phone number that a code of this interaction
     * proved (Logto's `POST /profile {type, verificationId}`). At sign-in, to the identified user, who
     * gets it at submit (announced as `User.Data.Updated`) when the account has none; at registration,
     * to the account to create. One another account has is 422 naming it; nothing is written until the submit.
     */
    async linkIdentifier(given: ExperienceDocument, type: 'email' | 'phone', verificationId: string): Promise<void> {
      const experience = await store.get(given._id);
      const event = requireEvent(experience, 'SignIn', 'Register');
      if (event === 'SignIn') await accountLacking(experience, type);
      const target = await codes.spend(experience._id, verificationId, event);
      assertThat(target, new ApiError('session.verification_session_not_found', 'no verification of this interaction has that id'));
      assertThat(
        target.type === type,
        new ApiError('guard.invalid_input', `the verification is for an ${target.type}, not an ${type}`, { field: 'body.type' }),
      );
      if (target.type === 'email') await accounts.assertEmailAllowed(target.value);
      const owner = await accounts.findUser(target);
      assertThat(!owner || owner._id === experience.userId, () =>
        type === 'email'
          ? new ApiError('user.email_already_in_use', 'this email address already has an account')
          : new ApiError('user.phone_already_in_use', 'this phone number already has an account'),
      );
      await setProfile(experience, { [type]: target.value });
    },

    /**
     * Adds a username or a password: at registration, to the account to create; at sign-in, to the
     * identified account when it has none (the settings may require one: Logto's profile fulfilment).
     */
    async addProfile(given: ExperienceDocument, type: 'username' | 'password', value: string, caller: Caller): Promise<void> {
      const experience = await store.get(given._id);
      const event = requireEvent(experience, 'Register', 'SignIn');
      const user = event === 'SignIn' ? await accountLacking(experience, type) : undefined;
      if (type === 'username') {
        if (event === 'Register') requireSignUpIdentifier(await deps.signInSettings(), 'username');
        await accounts.assertAvailable({ username: value });
        await setProfile(experience, { username: value });
      } else {
        assertPasswordAllowed(value, [user?.username ?? experience.profile.username, user?.primaryEmail ?? experience.profile.email]);
        await setProfile(experience, { passwordHash: await hashFor(caller, () => deps.passwords.hash(value)) });
      }
    },

    /** ForgotPassword: the new password, checked against the policy and the account's identifiers. */
    async resetPassword(given: ExperienceDocument, password: string, caller: Caller): Promise<void> {
      const experience = await store.get(given._id);
      requireEvent(experience, 'ForgotPassword');
      assertThat(experience.userId, new ApiError('session.identifier_not_found', 'verify the email code and identify first'));
      const user = await queries.users.findByIdOrThrow(experience.userId);
      assertPasswordAllowed(password, [user.username, user.primaryEmail]);
      // As Logto's: a reset to the password the account has is refused (the check is a hash, from the address's budget).
      const current = user.passwordHash;
      const unchanged = current !== null && (await hashFor(caller, () => deps.passwords.verify(password, current)));
      assertThat(!unchanged, new ApiError('user.same_password', 'the new password is the one the account has; choose another'));
      await setProfile(experience, { passwordHash: await hashFor(caller, () => deps.passwords.hash(password)) });
    },

    /** What the settings still require before this interaction can be submitted (empty when nothing). */
    async missingProfile(given: ExperienceDocument): Promise<MissingProfile[]> {
      const experience = await store.get(given._id);
      const user = experience.userId ? await queries.users.findById(experience.userId) : undefined;
      // Only a sign-in with its account, or a registration, has a profile to complete.
      if (experience.event === null || experience.event === 'ForgotPassword' || (experience.event === 'SignIn' && !user)) return [];
      return missingProfile(await deps.signInSettings(), heldBy(experience.profile, user ?? undefined));
    },
  };
}
