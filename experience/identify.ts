import type { InteractionKind } from '../hooks/catalog.js';
import { ApiError, assertThat } from '../lib/errors.js';
import type { AccountLookup } from './accounts.js';
import { suspended } from './accounts.js';
import type { Codes } from './codes.js';
import type { SignInSettings } from './sign-in-settings.js';
import type { ExperienceDocument, ExperienceStore, Profile, Verification } from './state.js';
import { identityKey } from '../social/identities.js';

const notFound = () => new ApiError('session.verification_not_found', 'no verification of this interaction has that id');

/**
 * What identifying establishes: the user to sign in (or reset) and how they proved it (`amr`, RFC 8176:
 * `pwd` a password, `otp` a one-time code), or the profile of the account to create.
 */
type Identified = { userId: string; amr?: string[]; profile?: Profile } | { profile: Profile };

type Rule<V> = (experience: ExperienceDocument, verification: V) => Promise<Identified>;

/**
 * Identification, as a table keyed by the interaction's kind and the verification's type: which
 * verification identifies whom in which interaction. A pair not in the table identifies nobody.
 */
export function createIdentification({
  store,
  codes,
  accounts,
  settings,
}: {
  store: ExperienceStore;
  codes: Codes;
  accounts: AccountLookup;
  settings: () => Promise<SignInSettings>;
}) {
  /** As Logto's, the settings decide at identification what a verification may do. */
  const requireEnabled = async (check: (settings: SignInSettings) => boolean, error: ApiError) => assertThat(check(await settings()), error);

  /** A code, spent: the email address or phone number it proved. */
  const spentCode = async (experience: ExperienceDocument, verificationId: string, event: InteractionKind) => {
    const target = await codes.spend(experience._id, verificationId, event);
    assertThat(target !== undefined, notFound);
    return target!;
  };

  const rules: {
    password: Partial<Record<InteractionKind, Rule<Extract<Verification, { type: 'password' }>>>>;
    newPasswordIdentity: Partial<Record<InteractionKind, Rule<Extract<Verification, { type: 'newPasswordIdentity' }>>>>;
    code: Partial<Record<InteractionKind, Rule<string>>>;
  } = {
    password: {
      SignIn: async (_experience, { userId }) => ({ userId, amr: ['pwd'] }),
    },
    newPasswordIdentity: {
      async Register(_experience, { username, passwordHash }) {
        await accounts.assertUnused({ username });
        return { profile: { username, passwordHash } };
      },
    },
    code: {
      // Sign-in by code, when the settings allow it (a sign-in code may also have been asked for to link the
      // address, so the settings are checked here, where it is used); an address without an account identifies nobody.
      async SignIn(experience, verificationId) {
        const target = await spentCode(experience, verificationId, 'SignIn');
        await requireEnabled(
          ({ signIn }) => signIn.methods.some(({ identifier, verificationCode }) => identifier === target.type && verificationCode),
          new ApiError('user.sign_in_method_not_enabled', `signing in by ${target.type} with a code is not enabled`),
        );
        const user = await accounts.findUser(target);
        assertThat(user, new ApiError('session.identifier_not_found', 'no account has this email address or phone number'));
        assertThat(!user.isSuspended, suspended);
        return { userId: user._id, amr: ['otp'] };
      },
      async Register(experience, verificationId) {
        const { type, value } = await spentCode(experience, verificationId, 'Register');
        await requireEnabled(
          ({ signUp }) => signUp.identifiers.includes(type),
          new ApiError('user.sign_up_method_not_enabled', `signing up with an ${type} is not enabled`),
        );
        await accounts.assertUnused({ [type]: value });
        return { profile: { [type]: value } };
      },
      async ForgotPassword(experience, verificationId) {
        const target = await spentCode(experience, verificationId, 'ForgotPassword');
        const user = await accounts.findUser(target);
        // A reset code is only sent where an account is, so a verified one has its user.
        assertThat(user, new ApiError('verification_code.invalid', 'the verification code is wrong or has expired'));
        // As at sign-in: a suspended account is not signed in, and its password is not changed.
        assertThat(!user.isSuspended, suspended);
        return { userId: user._id };
      },
    },
  };

  /**
   * A social verification (Logto's): at sign-in the user the upstream account is linked to; or, on
   * request (`linkSocialIdentity`), the user whose email the provider verified, the identity linked
   * at submit; else 404 `user.identity_not_exist` (naming that email, now proved). At registration,
   * a new account with the identity (422 `user.identity_already_in_use` if another user has it).
   */
  async function social(event: InteractionKind, record: Extract<Verification, { type: 'social' }>, link: boolean): Promise<Identified> {
    assertThat(record.verified && record.upstream, notFound);
    const upstream = record.upstream!;
    const socialIdentity = { target: record.target, id: upstream.id, details: upstream };
    const owner = await accounts.findUserByIdentity(identityKey(record.target, upstream.id));
    if (event === 'Register') {
      assertThat(!owner, () => new ApiError('user.identity_already_in_use', 'this account of the provider belongs to another user already'));
      const email = upstream.email && !(await accounts.findUser({ type: 'email', value: upstream.email })) ? upstream.email : undefined;
      return { profile: { socialIdentity, ...(email && { email }) } };
    }
    assertThat(event === 'SignIn', notFound);
    if (owner) {
      assertThat(!owner.isSuspended, suspended);
      return { userId: owner._id, amr: [] };
    }
    const related = upstream.email ? await accounts.findUser({ type: 'email', value: upstream.email }) : null;
    assertThat(
      related && link,
      () => new ApiError('user.identity_not_exist', 'no user has this account of the provider', related ? { relatedUser: upstream.email } : undefined),
    );
    assertThat(!related!.isSuspended, suspended);
    return { userId: related!._id, amr: [], profile: { socialIdentity } };
  }

  return async function identify(
    experience: ExperienceDocument,
    event: InteractionKind,
    verificationId: string,
    { linkSocialIdentity = false } = {},
  ): Promise<void> {
    const stored = Object.hasOwn(experience.verifications, verificationId) ? experience.verifications[verificationId] : undefined;
    let identified: Identified;
    if (stored?.type === 'password') {
      const rule = rules.password[event];
      assertThat(rule, notFound);
      identified = await rule(experience, stored);
    } else if (stored?.type === 'social') {
      identified = await social(event, stored, linkSocialIdentity);
    } else if (stored?.type === 'webAuthn' && stored.firstFactor) {
      // Passkey sign-in (when the settings allow it): the verified assertion named the user.
      assertThat(event === 'SignIn' && stored.verified && stored.userId, notFound);
      const user = await accounts.findUserById(stored.userId!);
      assertThat(user && !user.isSuspended, suspended);
      identified = { userId: stored.userId!, amr: ['hwk'] };
    } else if (stored?.type === 'newPasswordIdentity') {
      const rule = rules.newPasswordIdentity[event];
      assertThat(rule, notFound);
      identified = await rule(experience, stored);
    } else {
      // Not stored with the interaction: a code (kept in `verification_codes`), if anything.
      const rule = rules.code[event];
      assertThat(rule, notFound);
      identified = await rule(experience, verificationId);
    }
    // A second factor proved for one user is nothing to another: identifying someone else forgets it.
    if ('userId' in identified && identified.userId !== experience.userId) await store.forgetMfa(experience._id);
    await store.set(experience._id, identified);
  };
}
