import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { ClientSession } from 'mongodb';
import type Provider from 'oidc-provider';

import { addressKey } from '../lib/http/client-address.js';
import { ApiError, assertThat } from '../lib/errors.js';
import type { UserDocument } from '../lib/store/models.js';
import type { MfaFactor } from '../lib/mfa/model.js';
import { emailKey } from '../lib/identifiers.js';
import { generateId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import { hashPassword, needsRehash, verifyPassword } from '../lib/password.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { Origin } from '../lib/store/changes.js';
import type { Codes } from '../sign-in/codes.js';
import { countCodeSend, rateLimitedFields, tooManyCodes, type Counters } from '../sign-in/counters.js';
import { budgetedHashing, type HashGate } from '../sign-in/hash-gate.js';
import type { EmailConnector } from '../sign-in/email.js';
import type { SmsConnector } from '../sign-in/sms.js';
import { codeTargetOf, type CodeTarget } from '../sign-in/codes.js';
import { codeMessenger } from '../sign-in/messages.js';
import type { Catalogs } from '../i18n/index.js';
import type { ExperienceMfa } from './mfa.js';
import type { ExperienceSocial } from './social.js';
import { missingProfile, type MissingProfile, type SignInSettings } from '../sign-in/settings.js';
import type { ExceptionReport, InteractionReport } from '../hooks/outbox.js';
import { normalizePhone } from '../lib/phone.js';
import type { ChangeKey, InteractionKind } from '../hooks/catalog.js';
import { assertPasswordAllowed } from '../sign-in/password-policy.js';
import type { ExperienceDocument, ExperienceStore, Profile } from './state.js';
import { createAccountLookup, suspended, type Identifier } from '../sign-in/accounts.js';
import { createIdentification } from './identify.js';
import type { ExperienceSso } from './sso.js';
import type { ConnectorStore } from '../social/connectors.js';
import type { SsoConnectorStore } from '../sso/connectors.js';
import { createSubmitters, newAccountProfile } from './submit.js';
import { heldBy } from '../sign-in/profile.js';

type Interaction = InstanceType<Provider['Interaction']>;

export type { Identifier, IdentifierType } from '../sign-in/accounts.js';

/** Who is asking, for limits, audit and the events: the request's address, agent and route. */
export interface Caller {
  ip: string;
  userAgent?: string;
  method: string;
  path: string;
  /** The language the person reads (a catalog's tag): the codes sent for them are written in it. */
  locale?: string;
}

export interface ExperienceServiceDeps {
  provider: Provider;
  queries: Queries;
  write: Writer<ChangeKey>;
  store: ExperienceStore;
  codes: Codes;
  counters: Counters;
  /** The per-process cap on concurrent password hashes. */
  hashing: HashGate;
  email: EmailConnector;
  sms: SmsConnector;
  /** How people may sign up and sign in (`/api/sign-in-exp`), from the per-process cache. */
  signInSettings(): Promise<SignInSettings>;
  /** Announces an exception event to the webhooks (a lockout, a refused code send). */
  reportException(report: ExceptionReport): Promise<void>;
  /** Announces an interaction event no sign-in ends with (a password reset). */
  reportInteraction(report: InteractionReport): Promise<void>;
  productName: string;
  /** The languages a code's message may be written in. */
  catalogs?: Catalogs | undefined;
  logger: Logger;
  /** Ends every session, grant and token the provider keeps for a user. */
  revokeAccount(userId: string, session?: ClientSession): Promise<void>;
  /** MFA: the factors' verifications, binding, and the submit's gate. */
  mfa: ExperienceMfa;
  /** Social sign-in through the connectors. */
  social: ExperienceSocial;
  /** Enterprise SSO through the SSO connectors. */
  sso: ExperienceSso;
  connectors: ConnectorStore;
  ssoConnectors: SsoConnectorStore;
}

/** What the interaction result carries besides the login, for the events to name the flow. */
export interface ExperienceResult {
  identityEvent: InteractionKind;
}

// One answer for an unknown identifier and a wrong password, so that neither tells an account exists.
const invalidCredentials = () => new ApiError('session.invalid_credentials', 'the identifier or the password is wrong');
const tooManyAttempts = (retryAfter: number) => new ApiError('session.too_many_attempts', 'too many attempts; try again later', { retryAfter });

// Verifying against this when there is no account takes as long as a real check.
const unknownUserHash = hashPassword('no account has this password');

const identifierKey = ({ type, value }: Identifier) => `${type}:${type === 'email' ? emailKey(value) : value}`;

/**
 * The sign-in experience's flows, as Logto's Experience API steps them: start an interaction
 * (SignIn, Register, ForgotPassword), verify (a password, an email code), identify, complete the
 * profile, submit. The JSON API and the pages are two faces of these functions.
 */
export function createExperienceService(deps: ExperienceServiceDeps) {
  const { provider, queries, store, codes, counters } = deps;
  const accounts = createAccountLookup(queries);
  const { findUser } = accounts;
  const identification = createIdentification({
    store,
    codes,
    accounts,
    settings: deps.signInSettings,
    connectors: deps.connectors,
    ssoConnectors: deps.ssoConnectors,
  });
  const submitters = createSubmitters(deps, accounts);
  const sendCode = codeMessenger(deps);

  /** Announces an exception event of this interaction; one that cannot be stored is logged, and the answer is the same. */
  async function announce(experience: ExperienceDocument, caller: Caller, event: ExceptionReport['event'], fields: Record<string, string>) {
    try {
      await deps.reportException({
        event,
        fields,
        ...(experience.event && { interactionEvent: experience.event }),
        sessionId: experience._id,
        ip: caller.ip,
        ...(caller.userAgent !== undefined && { userAgent: caller.userAgent }),
      });
    } catch (error) {
      deps.logger.error(`The ${event} event could not be recorded`, error);
    }
  }

  /** Refuses a sign-in by `identifier` with a password (`factor` 'password') or a code, unless the settings have that method. */
  async function requireSignInMethod(identifier: Identifier['type'], factor: 'password' | 'verificationCode') {
    const { methods } = (await deps.signInSettings()).signIn;
    assertThat(
      methods.some((method) => method.identifier === identifier && method[factor]),
      () =>
        new ApiError('user.sign_in_method_not_enabled', `signing in by ${identifier} with ${factor === 'password' ? 'a password' : 'a code'} is not enabled`),
    );
  }

  /** Refuses a new account made with `identifier` unless the settings have it, as an identifier to sign up with or one also required. */
  async function requireSignUpIdentifier(identifier: Identifier['type']) {
    const { signUp } = await deps.signInSettings();
    assertThat(
      signUp.identifiers.includes(identifier) || (signUp.secondaryIdentifiers ?? []).some((secondary) => secondary.identifier === identifier),
      () => new ApiError('user.sign_up_method_not_enabled', `signing up with ${identifier === 'username' ? 'a username' : `an ${identifier}`} is not enabled`),
    );
  }

  /** At sign-in, the identified account, which may gain only what it lacks (Logto's `user.*_exists_in_profile`). */
  async function accountLacking(experience: ExperienceDocument, field: 'username' | 'email' | 'phone' | 'password') {
    assertThat(experience.userId, new ApiError('session.identifier_not_found', 'identify first, then add to the profile'));
    const user = await queries.users.findByIdOrThrow(experience.userId);
    const has = { username: user.username, email: user.primaryEmail, phone: user.primaryPhone, password: user.passwordHash }[field];
    assertThat(
      !has,
      () =>
        new ApiError(
          `user.${field}_exists_in_profile`,
          `the account has ${field === 'email' ? 'an email address' : field === 'phone' ? 'a phone number' : `a ${field}`} already`,
        ),
    );
    return user;
  }

  /**
   * An imported digest (Logto's `passwordDigest`) just proven by its password is replaced by our own
   * hash, unless the stored one changed meanwhile. Best effort: when the hash budget is spent, the
   * next sign-in does it.
   */
  async function rehashImported(user: UserDocument, password: string, caller: Caller) {
    if (!user.passwordHash || !needsRehash(user.passwordHash)) return;
    try {
      const rehashed = await hashFor(caller, () => hashPassword(password));
      await queries.users.updateIf(user._id, { passwordHash: user.passwordHash }, { passwordHash: rehashed });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }

  /** Every password hash goes through the address's budget, then the process's cap (`budgetedHashing`). */
  const gatedHash = budgetedHashing(counters, deps.hashing);
  const hashFor = <T>(caller: Caller, work: () => Promise<T>) => gatedHash(caller.ip, work);

  /** The experience as it now is, for an MFA step: a sign-in or a registration, not yet submitted. */
  async function mfaStep(given: ExperienceDocument): Promise<ExperienceDocument> {
    const experience = await store.get(given._id);
    requireEvent(experience, 'SignIn', 'Register');
    return experience;
  }

  /** Adds to the profile, only while the interaction is still about the account `experience` was read with. */
  async function setProfile(experience: ExperienceDocument, profile: Profile) {
    assertThat(
      await store.setProfile(experience._id, experience.userId, profile),
      () => new ApiError('session.identity_conflict', 'the interaction changed while this step ran; try again'),
    );
  }

  function requireEvent(experience: ExperienceDocument, ...allowed: InteractionKind[]): InteractionKind {
    const { event } = experience;
    assertThat(
      event !== null && allowed.includes(event),
      new ApiError('session.invalid_event', `this step belongs to ${allowed.join(' or ')}; start that interaction first (PUT /api/experience)`),
    );
    return event!;
  }

  /** The interaction behind a write: its event and application, as Logto's data hooks name them. */
  const originOf = (caller: Caller, experience: ExperienceDocument, event: string, clientId: string | undefined): Origin => ({
    method: caller.method,
    path: caller.path,
    ip: caller.ip,
    ...(caller.userAgent && { userAgent: caller.userAgent }),
    ...(clientId && { clientId }),
    interaction: { event, sessionId: experience._id, ...(clientId && { applicationId: clientId }) },
  });

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

  /** Hands oidc-provider the interaction's result, as `interactionResult` does; answers where the browser goes next. */
  async function finish(uid: string, result: Record<string, unknown>): Promise<string> {
    const interaction = await provider.Interaction.find(uid);
    assertThat(interaction, new ApiError('session.not_found', 'this sign-in has expired; start again from the application'));
    interaction.result = { ...interaction.lastSubmission, ...result };
    await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
    return interaction.returnTo;
  }

  return {
    /**
     * The interaction's experience document, from its uid (401 when oidc-provider no longer knows
     * it) or from the interaction itself when the caller has loaded it already.
     */
    async open(
      interactionOrUid: string | Interaction,
    ): Promise<{ experience: ExperienceDocument; clientId: string | undefined; redirectUri: string | undefined; uiLocales: unknown }> {
      const interaction = typeof interactionOrUid === 'string' ? await provider.Interaction.find(interactionOrUid) : interactionOrUid;
      assertThat(interaction, new ApiError('session.not_found', 'this sign-in has expired; start again from the application'));
      const experience = await store.open(interaction.uid, new Date(interaction.exp * 1000), interaction.params.ui_locales);
      return {
        experience,
        clientId: interaction.params.client_id as string | undefined,
        redirectUri: interaction.params.redirect_uri as string | undefined,
        uiLocales: interaction.params.ui_locales,
      };
    },

    /** Answers the experience as it now is. */
    async start(experience: ExperienceDocument, event: InteractionKind): Promise<ExperienceDocument> {
      assertThat(experience.submittedAt === null, new ApiError('session.already_submitted', 'this interaction has been submitted'));
      await store.start(experience._id, event);
      return store.get(experience._id);
    },

    /** Changes the kind of interaction, keeping what was verified (a social sign-in that finds no account goes on as a registration). */
    async switchEvent(experience: ExperienceDocument, event: InteractionKind): Promise<ExperienceDocument> {
      assertThat(experience.submittedAt === null, new ApiError('session.already_submitted', 'this interaction has been submitted'));
      await store.switchEvent(experience._id, event);
      return store.get(experience._id);
    },

    /** The social verification of this interaction waiting for the callback with `state`, if any. */
    async pendingSocial(given: ExperienceDocument, connectorId: string, state: string): Promise<string | undefined> {
      const experience = await store.get(given._id);
      return Object.entries(experience.verifications).find(
        ([, verification]) =>
          verification.type === 'social' && verification.connectorId === connectorId && verification.state === state && !verification.verified,
      )?.[0];
    },

    /**
     * SignIn: checks an identifier and password; answers a verification id. Before any hash:
     * the address's hash budget, its budget of attempts across accounts (spraying), and the
     * account's lockout from this address (an unknown identifier counts for itself).
     */
    async verifyPassword(experience: ExperienceDocument, given: Identifier, password: string, caller: Caller): Promise<string> {
      // A phone number as stored; one that cannot exist names no account, and is answered as any unknown identifier.
      const identifier = given.type === 'phone' ? { type: given.type, value: normalizePhone(given.value) ?? given.value } : given;
      requireEvent(experience, 'SignIn');
      await requireSignInMethod(identifier.type, 'password');
      const address = addressKey(caller.ip);
      const spray = await counters.hit('passwordSpray', address);
      if (spray.over) throw tooManyAttempts(spray.retryAfter);
      const user = await findUser(identifier);
      const lockKey = `${user ? `account:${user._id}` : identifierKey(identifier)}|${address}`;
      const attempt = await counters.hit('failedPassword', lockKey);
      if (attempt.over) throw tooManyAttempts(attempt.retryAfter);

      let matches: boolean;
      try {
        matches = await hashFor(caller, async () => verifyPassword(password, user?.passwordHash ?? (await unknownUserHash)));
      } catch (error) {
        // Refused before any password was checked (the server busy, or the address's hash budget
        // spent): not a guess, so it does not count toward the account's lockout or the spraying budget.
        await Promise.all([counters.refund('failedPassword', lockKey), counters.refund('passwordSpray', address)]);
        throw error;
      }
      if (!user || !matches) {
        if (!attempt.last) throw invalidCredentials();
        // This failure locks the identifier: announced (Logto's Identifier.Lockout, the value as typed).
        await announce(experience, caller, 'Identifier.Lockout', { type: given.type, value: given.value });
        throw tooManyAttempts(attempt.retryAfter);
      }
      // The right password: the attempts of this window were not an attack on it.
      await Promise.all([counters.clear('failedPassword', lockKey), counters.refund('passwordSpray', address)]);
      assertThat(!user.isSuspended, suspended);
      await rehashImported(user, password, caller);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, { type: 'password', userId: user._id });
      return verificationId;
    },

    /** Register: a username and its password, checked against the policy; answers a verification id. */
    async newPasswordIdentity(experience: ExperienceDocument, username: string, password: string, caller: Caller): Promise<string> {
      requireEvent(experience, 'Register');
      await requireSignUpIdentifier('username');
      assertPasswordAllowed(password, [username, experience.profile.email]);
      const passwordHash = await hashFor(caller, () => hashPassword(password));
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, { type: 'newPasswordIdentity', username, passwordHash });
      return verificationId;
    },

    /**
     * Sends a code to an email address or a phone number: in a registration or a sign-in to what was
     * typed (to identify by it, when the settings allow, or to add it to the profile), in a reset only
     * to an account's own. The answer is the same whether or not an account has it. What the code may
     * then do is decided where it is used (identification, profile), as Logto decides it.
     */
    async sendCode(experience: ExperienceDocument, given: CodeTarget, caller: Caller): Promise<string> {
      const event = requireEvent(experience, 'Register', 'SignIn', 'ForgotPassword');
      const target = codeTargetOf(given);
      const over = await countCodeSend(counters, target, caller.ip);
      if (over) {
        await announce(experience, caller, 'Message.RateLimited', rateLimitedFields(target));
        throw tooManyCodes(over);
      }
      const { verificationId, code } = await codes.issue(experience._id, event, target);
      // A reset code goes to the address the account has on file, never to the address as typed:
      // the two compare equal, but only the stored one is known to be the owner's.
      const owner = event === 'ForgotPassword' ? await findUser(target) : undefined;
      const to = event !== 'ForgotPassword' ? target.value : target.type === 'email' ? owner?.primaryEmail : owner?.primaryPhone;
      // Not awaited (see codeMessenger): an answer that waited for the gateway only when an account exists would tell that it exists.
      if (to) sendCode({ type: target.type, value: to }, code, caller.locale);
      return verificationId;
    },

    async verifyCode(experience: ExperienceDocument, verificationId: string, given: CodeTarget, code: string): Promise<string> {
      requireEvent(experience, 'Register', 'SignIn', 'ForgotPassword');
      await codes.verify(experience._id, verificationId, codeTargetOf(given), code);
      return verificationId;
    },

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
      await newAccountProfile(experience, accounts, await deps.signInSettings());
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
      assertThat(target, new ApiError('session.verification_not_found', 'no verification of this interaction has that id'));
      assertThat(
        target.type === type,
        new ApiError('guard.invalid_input', `the verification is for an ${target.type}, not an ${type}`, { field: 'body.type' }),
      );
      const owner = await findUser(target);
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
        if (event === 'Register') await requireSignUpIdentifier('username');
        await accounts.assertUnused({ username: value });
        await setProfile(experience, { username: value });
      } else {
        assertPasswordAllowed(value, [user?.username ?? experience.profile.username, user?.primaryEmail ?? experience.profile.email]);
        await setProfile(experience, { passwordHash: await hashFor(caller, () => hashPassword(value)) });
      }
    },

    /** ForgotPassword: the new password, checked against the policy and the account's identifiers. */
    async resetPassword(given: ExperienceDocument, password: string, caller: Caller): Promise<void> {
      const experience = await store.get(given._id);
      requireEvent(experience, 'ForgotPassword');
      assertThat(experience.userId, new ApiError('session.identifier_not_found', 'verify the email code and identify first'));
      const user = await queries.users.findByIdOrThrow(experience.userId);
      assertPasswordAllowed(password, [user.username, user.primaryEmail]);
      await setProfile(experience, { passwordHash: await hashFor(caller, () => hashPassword(password)) });
    },

    /**
     * Makes the change the interaction was for. A sign-in or a registration then signs the user in
     * and answers the URL to send the browser to. A password reset signs nobody in (as Logto's): the
     * interaction starts over, so that the person signs in with the new password and, when the
     * account has one, its second factor; it answers undefined.
     */
    async submit(given: ExperienceDocument, clientId: string | undefined, caller: Caller): Promise<string | undefined> {
      const experience = await store.get(given._id);
      const event = requireEvent(experience, 'SignIn', 'Register', 'ForgotPassword');
      if (!(await store.claimSubmit(experience))) {
        const now = await store.get(experience._id);
        throw now.submittedAt !== null
          ? new ApiError('session.already_submitted', 'this interaction has been submitted')
          : new ApiError('session.identity_conflict', 'the interaction changed while it was being submitted; submit again');
      }
      let accountId: string;
      try {
        accountId = await submitters[event](experience, originOf(caller, experience, event, clientId));
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
        const result: ExperienceResult = { identityEvent: event };
        // A new account proved a password, a code, or both; a sign-in, what identified it; then the
        // second factors proved for this very account (a proof names the account it is for).
        // A registration proved a code, a password, or (through a connector) none of RFC 8176's kinds.
        const upstream = experience.profile.socialIdentity ?? experience.profile.ssoIdentity;
        const first = experience.amr ?? (event === 'Register' ? (upstream ? [] : experience.profile.passwordHash ? ['pwd'] : ['otp']) : ['pwd']);
        const amr = [...new Set([...first, ...deps.mfa.amrOf(experience, accountId)])];
        return await finish(experience._id, { login: { accountId, ...(amr.length > 0 && { amr }) }, ...result });
      } catch (error) {
        await store.releaseSubmit(experience._id);
        throw error;
      }
    },

    /** The MFA steps (Logto's `/verification/totp`, `/web-authn`, `/backup-code`, `/profile/mfa`), in a sign-in or a registration. */
    mfa: {
      totpSecret: async (given: ExperienceDocument) => deps.mfa.totpSecret(await mfaStep(given)),
      totpVerify: async (given: ExperienceDocument, code: string, verificationId: string | undefined, caller: Caller) =>
        deps.mfa.totpVerify(await mfaStep(given), code, verificationId, caller.ip),
      backupCodesGenerate: async (given: ExperienceDocument) => deps.mfa.backupCodesGenerate(await mfaStep(given)),
      backupCodeVerify: async (given: ExperienceDocument, code: string, caller: Caller) => deps.mfa.backupCodeVerify(await mfaStep(given), code, caller.ip),
      webAuthnRegistration: async (given: ExperienceDocument) => deps.mfa.webAuthnRegistration(await mfaStep(given)),
      webAuthnRegistrationVerify: async (given: ExperienceDocument, verificationId: string, payload: RegistrationResponseJSON, caller: Caller) =>
        deps.mfa.webAuthnRegistrationVerify(await mfaStep(given), verificationId, payload, caller.userAgent ?? ''),
      webAuthnAuthentication: async (given: ExperienceDocument) => deps.mfa.webAuthnAuthentication(await mfaStep(given)),
      webAuthnAuthenticationVerify: async (given: ExperienceDocument, verificationId: string, payload: AuthenticationResponseJSON, caller: Caller) =>
        deps.mfa.webAuthnAuthenticationVerify(await mfaStep(given), verificationId, payload, caller.ip),
      bind: async (given: ExperienceDocument, type: MfaFactor, verificationId: string) => deps.mfa.bind(await mfaStep(given), type, verificationId),
      /** What the settings and the account allow and require now, for a page to offer. */
      async state(given: ExperienceDocument) {
        const experience = await store.get(given._id);
        const settings = await deps.signInSettings();
        const user = experience.userId ? ((await queries.users.findById(experience.userId)) ?? undefined) : undefined;
        return { settings, usable: deps.mfa.usableFactors(settings, user), experience };
      },
    },

    /** Social sign-in (Logto's `/verification/social/:connectorId/...`), in a sign-in or a registration. */
    social: {
      list: () => deps.social.list(),
      authorizationUri: async (given: ExperienceDocument, connectorId: string, body: { state: string; redirectUri: string }) =>
        deps.social.authorizationUri(await mfaStep(given), connectorId, body),
      verify: async (given: ExperienceDocument, connectorId: string, verificationId: string, connectorData: Record<string, unknown>) =>
        deps.social.verify(await mfaStep(given), connectorId, verificationId, connectorData),
    },

    /** Enterprise SSO (Logto's `/verification/sso/:connectorId/...` and domain discovery), in a sign-in or a registration. */
    sso: {
      discover: (email: string) => deps.sso.discover(email),
      /** Whether any enterprise SSO connector is set up (the sign-in page offers single sign-on). */
      offered: async () => (await deps.ssoConnectors.collection.countDocuments({}, { limit: 1 })) > 0,
      authorizationUri: async (given: ExperienceDocument, connectorId: string, body: { state: string; redirectUri: string }) =>
        deps.sso.authorizationUri(await mfaStep(given), connectorId, body),
      verify: async (given: ExperienceDocument, connectorId: string, verificationId: string, connectorData: Record<string, unknown>) =>
        deps.sso.verify(await mfaStep(given), connectorId, verificationId, connectorData),
      assertionConsumer: (connectorId: string, samlResponse: string, relayState: string) => deps.sso.assertionConsumer(connectorId, samlResponse, relayState),
    },

    /** The enterprise SSO verification of this interaction waiting for the callback with `state`, if any. */
    async pendingSso(given: ExperienceDocument, connectorId: string, state: string): Promise<string | undefined> {
      const experience = await store.get(given._id);
      return Object.entries(experience.verifications).find(
        ([, verification]) =>
          verification.type === 'enterpriseSso' && verification.connectorId === connectorId && verification.state === state && !verification.verified,
      )?.[0];
    },

    /** How people may sign up and sign in now (the pages draw their forms from it). */
    settings: () => deps.signInSettings(),

    /** What the settings still require before this interaction can be submitted (empty when nothing). */
    async missingProfile(given: ExperienceDocument): Promise<MissingProfile[]> {
      const experience = await store.get(given._id);
      const user = experience.userId ? await queries.users.findById(experience.userId) : undefined;
      // Only a sign-in with its account, or a registration, has a profile to complete.
      if (experience.event === null || experience.event === 'ForgotPassword' || (experience.event === 'SignIn' && !user)) return [];
      return missingProfile(await deps.signInSettings(), heldBy(experience.profile, user ?? undefined));
    },

    /** Ends the interaction with `access_denied`: the person declined. */
    async abort(experience: ExperienceDocument): Promise<string> {
      return finish(experience._id, { error: 'access_denied', error_description: 'the end-user declined the request' });
    },

    finish,
  };
}

export type ExperienceService = ReturnType<typeof createExperienceService>;
