import type { InteractionKind } from '../hooks/catalog.js';
import { ApiError, assertThat } from '../lib/errors.js';
import type { AccountLookup } from '../sign-in/accounts.js';
import { suspended } from '../sign-in/accounts.js';
import { addressProofOf, assertStillProves, passwordChanged, type Proof } from '../sign-in/proofs.js';
import type { CodeTarget, Codes } from '../sign-in/codes.js';
import type { SignInSettings } from '../sign-in/settings.js';
import type { ExperienceDocument, ExperienceStore, Identified, Verification } from './state.js';
import { generateId } from '../lib/ids.js';
import { identityKey, ssoIdentityKey, type SsoIdentity } from '../lib/store/identities.js';
import type { ConnectorStore } from '../social/connectors.js';
import type { SsoConnectorStore } from '../sso/connectors.js';
import type { UserDocument } from '../lib/store/models.js';

const notFound = () => new ApiError('session.verification_session_not_found', 'no verification of this interaction has that id');

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
  connectors,
  ssoConnectors,
}: {
  store: ExperienceStore;
  codes: Codes;
  accounts: AccountLookup;
  settings: () => Promise<SignInSettings>;
  connectors: ConnectorStore;
  ssoConnectors: SsoConnectorStore;
}) {
  /** As Logto's, the settings decide at identification what a verification may do. */
  const requireEnabled = async (check: (settings: SignInSettings) => boolean, error: ApiError) => assertThat(check(await settings()), error);

  /** A code, spent: the email address or phone number it proved. */
  const spentCode = async (experience: ExperienceDocument, verificationId: string, event: InteractionKind) => {
    const target = await codes.spend(experience._id, verificationId, event);
    assertThat(target !== undefined, notFound);
    return target!;
  };

  /**
   * A code's address or number, checked by `check` before the code is spent: a refusal (an address
   * taken, or without an account) leaves the person the code, to go on as Logto lets them (a
   * registration that finds the address taken switches to a sign-in with the same code, and back).
   */
  async function checkedCode<T>(experience: ExperienceDocument, verificationId: string, event: InteractionKind, check: (target: CodeTarget) => Promise<T>) {
    const proved = await codes.provedBy(experience._id, verificationId, event);
    // Not spendable: spending it says why (unknown, not verified, spent, expired).
    if (!proved) return check(await spentCode(experience, verificationId, event));
    const result = await check(proved);
    await spentCode(experience, verificationId, event);
    return result;
  }

  const rules: {
    password: Partial<Record<InteractionKind, Rule<Extract<Verification, { type: 'password' }>>>>;
    newPasswordIdentity: Partial<Record<InteractionKind, Rule<Extract<Verification, { type: 'newPasswordIdentity' }>>>>;
    code: Partial<Record<InteractionKind, Rule<string>>>;
  } = {
    password: {
      // Only while the account still has the password that was checked (not changed since by a reset, another session or an administrator).
      SignIn: async (_experience, { userId, passwordProof }) => {
        const proof: Proof | undefined = passwordProof === undefined ? undefined : { kind: 'password', value: passwordProof };
        if (proof) {
          const user = await accounts.findUserById(userId);
          assertThat(user, passwordChanged);
          assertStillProves(user!, proof);
        }
        return { userId, amr: ['pwd'], ...(proof && { proof }) };
      },
    },
    newPasswordIdentity: {
      async Register(_experience, { username, passwordHash }) {
        await accounts.assertAvailable({ username });
        return { profile: { username, passwordHash } };
      },
    },
    code: {
      // Sign-in by code, when the settings allow it (a sign-in code may also have been asked for to link the
      // address, so the settings are checked here, where it is used); an address without an account identifies nobody.
      SignIn: (experience, verificationId) =>
        checkedCode(experience, verificationId, 'SignIn', async (target) => {
          await requireEnabled(
            ({ signIn }) => signIn.methods.some(({ identifier, verificationCode }) => identifier === target.type && verificationCode),
            new ApiError('user.sign_in_method_not_enabled', `signing in by ${target.type} with a code is not enabled`),
          );
          const user = await accounts.findUser(target);
          assertThat(user, new ApiError('user.user_not_exist', 'no account has this email address or phone number', { identifier: target.value }));
          assertThat(!user.isSuspended, suspended);
          return { userId: user._id, amr: ['otp'], proof: { kind: 'address', value: addressProofOf(target) } };
        }),
      Register: (experience, verificationId) =>
        checkedCode(experience, verificationId, 'Register', async ({ type, value }) => {
          await requireEnabled(
            ({ signUp }) => signUp.identifiers.includes(type),
            new ApiError('user.sign_up_method_not_enabled', `signing up with an ${type} is not enabled`),
          );
          await accounts.assertAvailable({ [type]: value });
          return { profile: { [type]: value } };
        }),
      ForgotPassword: (experience, verificationId) =>
        checkedCode(experience, verificationId, 'ForgotPassword', async (target) => {
          const user = await accounts.findUser(target);
          // A reset code is only sent where an account is, so a verified one has its user.
          assertThat(user, new ApiError('user.user_not_exist', 'no account has this email address or phone number', { identifier: target.value }));
          // As at sign-in: a suspended account is not signed in, and its password is not changed.
          assertThat(!user.isSuspended, suspended);
          return { userId: user._id, proof: { kind: 'address', value: addressProofOf(target) } };
        }),
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
      // As Logto's: a new account does not get an address the settings' email policy refuses.
      if (email) await accounts.assertEmailAllowed(email);
      return { profile: { socialIdentity, ...(email && { email }) } };
    }
    assertThat(event === 'SignIn', notFound);
    if (owner) {
      assertThat(!owner.isSuspended, suspended);
      const connector = await connectors.collection.findOne({ _id: record.connectorId });
      const changes = connector?.syncProfile ? await synced(owner, upstream) : undefined;
      return {
        userId: owner._id,
        amr: [],
        proof: { kind: 'identity', value: identityKey(record.target, upstream.id) },
        ...(changes && { profile: { synced: changes } }),
      };
    }
    const related = upstream.email ? await accounts.findUser({ type: 'email', value: upstream.email }) : null;
    assertThat(
      related && link,
      () => new ApiError('user.identity_not_exist', 'no user has this account of the provider', related ? { relatedUser: upstream.email } : undefined),
    );
    assertThat(!related!.isSuspended, suspended);
    // Linked at submit to the account that has the address the provider vouched for: only while it still has it.
    return {
      userId: related!._id,
      amr: [],
      proof: { kind: 'address', value: addressProofOf({ type: 'email', value: upstream.email! }) },
      profile: { socialIdentity },
    };
  }

  /** What a connector with `syncProfile` updates at sign-in: the name and avatar, and the email unless another account has it. */
  async function synced(user: UserDocument, person: { name?: string; avatar?: string; email?: string }) {
    const holder = person.email && person.email !== user.primaryEmail ? await accounts.findUser({ type: 'email', value: person.email }) : null;
    const changes = {
      ...(person.name && person.name !== user.name && { name: person.name }),
      ...(person.avatar && person.avatar !== user.avatar && { avatar: person.avatar }),
      ...(person.email && person.email !== user.primaryEmail && !holder && { email: person.email }),
    };
    // Nothing new: nothing to write, and nothing to announce.
    return Object.keys(changes).length > 0 ? changes : undefined;
  }

  /**
   * An enterprise SSO verification (Logto's): the user with this identity (unique per issuer and
   * subject), else the user with the email the IdP speaks for (its connector's domains), linked at
   * submit; else 404 `user.identity_not_exist`, for the interaction to go on as a registration. At
   * registration, a new account with the identity (422 if another user has it).
   */
  async function enterpriseSso(event: InteractionKind, record: Extract<Verification, { type: 'enterpriseSso' }>): Promise<Identified> {
    assertThat(record.verified && record.upstream, notFound);
    const person = record.upstream!;
    const owner = await accounts.findUserByIdentity(ssoIdentityKey(person.issuer, person.identityId));
    const now = Date.now();
    const existing = owner?.ssoIdentities?.find(({ issuer, identityId }) => issuer === person.issuer && identityId === person.identityId);
    const ssoIdentity: SsoIdentity = {
      id: existing?.id ?? generateId(),
      ssoConnectorId: record.connectorId,
      issuer: person.issuer,
      identityId: person.identityId,
      detail: { ...person.detail, ...(person.email && { email: person.email }), ...(person.name && { name: person.name }) },
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    if (event === 'Register') {
      assertThat(!owner, () => new ApiError('user.identity_already_in_use', 'this account of the identity provider belongs to another user already'));
      const email = person.email && !(await accounts.findUser({ type: 'email', value: person.email })) ? person.email : undefined;
      return {
        profile: {
          ssoIdentity,
          ...(email && { email }),
          synced: { ...(person.name && { name: person.name }), ...(person.avatar && { avatar: person.avatar }) },
        },
      };
    }
    assertThat(event === 'SignIn', notFound);
    const user = owner ?? (person.email ? await accounts.findUser({ type: 'email', value: person.email }) : null);
    assertThat(user, () => new ApiError('user.identity_not_exist', 'no user has this account of the identity provider'));
    assertThat(!user!.isSuspended, suspended);
    const connector = await ssoConnectors.collection.findOne({ _id: record.connectorId });
    const changes = connector?.syncProfile ? await synced(user!, person) : undefined;
    // The identity is written when it is new or the IdP now says something else of the person.
    const renewed = !existing || existing.ssoConnectorId !== record.connectorId || JSON.stringify(existing.detail) !== JSON.stringify(ssoIdentity.detail);
    // The identity the account has, or (linked at submit) the address the IdP vouched for: only while the account still has it.
    const proof: Proof = owner
      ? { kind: 'identity', value: ssoIdentityKey(person.issuer, person.identityId) }
      : { kind: 'address', value: addressProofOf({ type: 'email', value: person.email! }) };
    return { userId: user!._id, amr: [], proof, profile: { ...(renewed && { ssoIdentity }), ...(changes && { synced: changes }) } };
  }

  /**
   * A one-time token spent: at sign-in the account with its email address (404 `user.user_not_exist`
   * when there is none, for the interaction to go on as a registration), at registration a new
   * account with it (the address proved). Either way the account joins the token's organizations at submit.
   */
  async function oneTimeToken(event: InteractionKind, { email, jitOrganizationIds }: Extract<Verification, { type: 'oneTimeToken' }>): Promise<Identified> {
    const joins = jitOrganizationIds.length > 0 ? { jitOrganizationIds } : {};
    if (event === 'Register') {
      await accounts.assertAvailable({ email });
      return { profile: { email, ...joins } };
    }
    assertThat(event === 'SignIn', notFound);
    const user = await accounts.findUser({ type: 'email', value: email });
    assertThat(user, () => new ApiError('user.user_not_exist', 'no account has this email address'));
    assertThat(!user!.isSuspended, suspended);
    return { userId: user!._id, amr: ['otp'], proof: { kind: 'address', value: addressProofOf({ type: 'email', value: email }) }, profile: joins };
  }

  return async function identify(
    experience: ExperienceDocument,
    event: InteractionKind,
    verificationId: string,
    { linkSocialIdentity = false } = {},
  ): Promise<void> {
    const stored = Object.hasOwn(experience.verifications, verificationId) ? experience.verifications[verificationId] : undefined;
    // As Logto's: a reset identifies by a code only (a password, an upstream account or a passkey proves nothing of the address to reset).
    assertThat(
      event !== 'ForgotPassword' || stored === undefined,
      () => new ApiError('session.not_supported_for_forgot_password', 'a password reset identifies by a code only', undefined, 422),
    );
    let identified: Identified;
    if (stored?.type === 'password') {
      const rule = rules.password[event];
      assertThat(rule, notFound);
      identified = await rule(experience, stored);
    } else if (stored?.type === 'social') {
      identified = await social(event, stored, linkSocialIdentity);
    } else if (stored?.type === 'enterpriseSso') {
      identified = await enterpriseSso(event, stored);
    } else if (stored?.type === 'webAuthn' && stored.firstFactor) {
      // Passkey sign-in (when the settings allow it): the verified assertion named the user.
      assertThat(event === 'SignIn' && stored.verified && stored.userId, notFound);
      const user = await accounts.findUserById(stored.userId!);
      assertThat(user && !user.isSuspended, suspended);
      // Only while the account still has the passkey that answered.
      const proof: Proof | undefined = stored.credentialId ? { kind: 'passkey', value: stored.credentialId } : undefined;
      if (proof) assertStillProves(user!, proof);
      identified = { userId: stored.userId!, amr: ['hwk'], ...(proof && { proof }) };
    } else if (stored?.type === 'oneTimeToken') {
      identified = await oneTimeToken(event, stored);
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
    // One write, only while the interaction still names whom this request read: identifying someone
    // else forgets the second factors and the profile gathered for the account before, in that same write.
    assertThat(
      await store.identify(experience._id, experience.userId, identified),
      () => new ApiError('session.identity_conflict', 'the interaction changed while this step ran; identify again'),
    );
  };
}
