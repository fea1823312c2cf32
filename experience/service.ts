import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

import type { MfaFactor } from '../lib/mfa/model.js';
import { createAccountLookup } from '../sign-in/accounts.js';
import { budgetedHashing } from '../sign-in/hash-gate.js';
import type { Caller, ExperienceServiceDeps } from './deps.js';
import { createIdentification } from './identify.js';
import { createInteraction } from './interaction.js';
import { profileSteps } from './profile.js';
import type { ExperienceDocument } from './state.js';
import { submitStep } from './submit.js';
import { codeSteps } from './verifications/codes.js';
import { oneTimeTokenSteps } from './verifications/one-time-token.js';
import { passwordSteps, type HashFor } from './verifications/password.js';

export type { Caller, ExperienceResult, ExperienceServiceDeps } from './deps.js';
export type { Identifier, IdentifierType } from '../sign-in/accounts.js';

/**
 * The sign-in experience's flows, as Logto's Experience API steps them: start an interaction
 * (SignIn, Register, ForgotPassword), verify (a password, a code, a second factor, an upstream
 * account), identify, complete the profile, submit. The JSON API and the pages are two faces of
 * these functions; each kind of step is a module of its own.
 */
export function createExperienceService(deps: ExperienceServiceDeps) {
  const accounts = createAccountLookup(deps.queries, async () => (await deps.signInSettings()).emailBlocklistPolicy);
  const interaction = createInteraction(deps);
  const { mfaStep } = interaction;
  // Every password hash goes through the address's budget, then the process's cap.
  const gatedHash = budgetedHashing(deps.counters, deps.hashing);
  const hashFor: HashFor = (caller, work) => gatedHash(caller.ip, work);
  const identification = createIdentification({
    store: deps.store,
    codes: deps.codes,
    accounts,
    settings: deps.signInSettings,
    connectors: deps.connectors,
    ssoConnectors: deps.ssoConnectors,
  });
  const { mfa, social, sso } = deps;

  return {
    open: interaction.open,
    start: interaction.start,
    switchEvent: interaction.switchEvent,
    pendingSocial: interaction.pendingSocial,
    pendingSso: interaction.pendingSso,
    abort: interaction.abort,
    finish: interaction.finish,
    ...passwordSteps(deps, interaction, accounts, hashFor),
    ...codeSteps(deps, interaction, accounts),
    ...oneTimeTokenSteps(deps, interaction),
    ...profileSteps(deps, interaction, accounts, identification, hashFor),
    submit: submitStep(deps, interaction, accounts),

    /** The social connectors and single sign-on the sign-in page offers, from the per-process cache. */
    offeredConnectors: () => deps.offeredConnectors(),

    /** How people may sign up and sign in now (the pages draw their forms from it). */
    settings: () => deps.signInSettings(),

    /** The MFA steps (Logto's `/verification/totp`, `/web-authn`, `/backup-code`, `/profile/mfa`), in a sign-in or a registration. */
    mfa: {
      totpSecret: async (given: ExperienceDocument) => mfa.totpSecret(await mfaStep(given)),
      totpVerify: async (given: ExperienceDocument, code: string, verificationId: string | undefined, caller: Caller) =>
        mfa.totpVerify(await mfaStep(given), code, verificationId, caller.ip),
      backupCodesGenerate: async (given: ExperienceDocument) => mfa.backupCodesGenerate(await mfaStep(given)),
      backupCodeVerify: async (given: ExperienceDocument, code: string, caller: Caller) => mfa.backupCodeVerify(await mfaStep(given), code, caller.ip),
      webAuthnRegistration: async (given: ExperienceDocument) => mfa.webAuthnRegistration(await mfaStep(given)),
      webAuthnRegistrationVerify: async (given: ExperienceDocument, verificationId: string, payload: RegistrationResponseJSON, caller: Caller) =>
        mfa.webAuthnRegistrationVerify(await mfaStep(given), verificationId, payload, caller.userAgent ?? ''),
      webAuthnAuthentication: async (given: ExperienceDocument) => mfa.webAuthnAuthentication(await mfaStep(given)),
      webAuthnAuthenticationVerify: async (given: ExperienceDocument, verificationId: string, payload: AuthenticationResponseJSON, caller: Caller) =>
        mfa.webAuthnAuthenticationVerify(await mfaStep(given), verificationId, payload, caller.ip),
      bind: async (given: ExperienceDocument, type: MfaFactor, verificationId: string) => mfa.bind(await mfaStep(given), type, verificationId),
      skip: async (given: ExperienceDocument, applicationId: string | undefined) => mfa.skip(await mfaStep(given), applicationId),
      skippable: async (given: ExperienceDocument, applicationId: string | undefined) => mfa.skippable(await mfaStep(given), applicationId),
      /** What the settings and the account allow and require now, for a page to offer. */
      async state(given: ExperienceDocument) {
        const experience = await deps.store.get(given._id);
        const settings = await deps.signInSettings();
        const user = experience.userId ? ((await deps.queries.users.findById(experience.userId)) ?? undefined) : undefined;
        return { settings, usable: mfa.usableFactors(settings, user), experience };
      },
    },

    /** Social sign-in (Logto's `/verification/social/:connectorId/...`), in a sign-in or a registration. */
    social: {
      authorizationUri: async (given: ExperienceDocument, connectorId: string, body: { state: string; redirectUri: string }) =>
        social.authorizationUri(await mfaStep(given), connectorId, body),
      verify: async (given: ExperienceDocument, connectorId: string, verificationId: string, connectorData: Record<string, unknown>) =>
        social.verify(await mfaStep(given), connectorId, verificationId, connectorData),
    },

    /** Enterprise SSO (Logto's `/verification/sso/:connectorId/...` and domain discovery), in a sign-in or a registration. */
    sso: {
      discover: (email: string) => sso.discover(email),
      authorizationUri: async (given: ExperienceDocument, connectorId: string, body: { state: string; redirectUri: string }) =>
        sso.authorizationUri(await mfaStep(given), connectorId, body),
      verify: async (given: ExperienceDocument, connectorId: string, verificationId: string, connectorData: Record<string, unknown>) =>
        sso.verify(await mfaStep(given), connectorId, verificationId, connectorData),
      assertionConsumer: (connectorId: string, samlResponse: string, relayState: string) => sso.assertionConsumer(connectorId, samlResponse, relayState),
    },
  };
}

export type ExperienceService = ReturnType<typeof createExperienceService>;
