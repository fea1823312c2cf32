import type Provider from 'oidc-provider';

import type { InteractionKind } from '../hooks/catalog.js';
import type { ExceptionReport } from '../hooks/outbox.js';
import { ApiError, assertThat } from '../lib/errors.js';
import type { Origin } from '../lib/store/changes.js';
import type { Caller, ExperienceServiceDeps } from './deps.js';
import type { ExperienceDocument, Profile } from './state.js';

type Interaction = InstanceType<Provider['Interaction']>;

const expired = () => new ApiError('session.not_found', 'this sign-in has expired; start again from the application');
const alreadySubmitted = () => new ApiError('session.already_submitted', 'this interaction has been submitted');

/**
 * One interaction of the sign-in experience as every step sees it: opening it, its kind (and the
 * steps each kind allows), what it writes on the way, and handing its result to oidc-provider.
 */
export function createInteraction(deps: Pick<ExperienceServiceDeps, 'provider' | 'store' | 'reportException' | 'logger'>) {
  const { provider, store } = deps;

  /** The interaction's kind, when it is one of `allowed`; 400 otherwise. */
  function requireEvent(experience: ExperienceDocument, ...allowed: InteractionKind[]): InteractionKind {
    const { event } = experience;
    assertThat(
      event !== null && allowed.includes(event),
      new ApiError('session.invalid_event', `this step belongs to ${allowed.join(' or ')}; start that interaction first (PUT /api/experience)`),
    );
    return event!;
  }

  /**
   * Hands oidc-provider the interaction's result, as `interactionResult` does; answers where the
   * browser goes next. `loaded`: the interaction as this request read it (nothing else in a request
   * writes it), so that it is not read again.
   */
  async function finish(uid: string, result: Record<string, unknown>, loaded?: Interaction): Promise<string> {
    const interaction = loaded?.uid === uid ? loaded : await provider.Interaction.find(uid);
    assertThat(interaction, expired);
    interaction.result = { ...interaction.lastSubmission, ...result };
    await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
    return interaction.returnTo;
  }

  /** The verification of this interaction of `type` (social or SSO) waiting for the callback with `state`, if any. */
  async function pending(given: ExperienceDocument, type: 'social' | 'enterpriseSso', connectorId: string, state: string): Promise<string | undefined> {
    const experience = await store.get(given._id);
    return Object.entries(experience.verifications).find(
      ([, verification]) => verification.type === type && verification.connectorId === connectorId && verification.state === state && !verification.verified,
    )?.[0];
  }

  return {
    requireEvent,
    finish,

    /** The experience as it now is, for an MFA or connector step: a sign-in or a registration, not yet submitted. */
    async mfaStep(given: ExperienceDocument): Promise<ExperienceDocument> {
      const experience = await store.get(given._id);
      // Logto's refusal in a password reset (its integration-tests experience-api/bind-mfa/sad-path.test.ts).
      assertThat(
        experience.event !== 'ForgotPassword',
        () => new ApiError('session.not_supported_for_forgot_password', 'a password reset has no second factors to add or skip'),
      );
      requireEvent(experience, 'SignIn', 'Register');
      return experience;
    },

    /** Adds to the profile, only while the interaction is still about the account `experience` was read with. */
    async setProfile(experience: ExperienceDocument, profile: Profile) {
      assertThat(
        await store.setProfile(experience._id, experience.userId, profile),
        () => new ApiError('session.identity_conflict', 'the interaction changed while this step ran; try again'),
      );
    },

    /** The interaction behind a write: its event and application, as Logto's data hooks name them. */
    originOf: (caller: Caller, experience: ExperienceDocument, event: string, clientId: string | undefined): Origin => ({
      method: caller.method,
      path: caller.path,
      ip: caller.ip,
      ...(caller.userAgent && { userAgent: caller.userAgent }),
      ...(clientId && { clientId }),
      interaction: { event, sessionId: experience._id, ...(clientId && { applicationId: clientId }) },
    }),

    /** Announces an exception event of this interaction; one that cannot be stored is logged, and the answer is the same. */
    async announce(experience: ExperienceDocument, caller: Caller, event: ExceptionReport['event'], fields: Record<string, string>) {
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
    },

    /**
     * The interaction's experience document, from its uid (401 when oidc-provider no longer knows
     * it) or from the interaction itself when the caller has loaded it already.
     */
    async open(interactionOrUid: string | Interaction): Promise<{
      experience: ExperienceDocument;
      interaction: Interaction;
      clientId: string | undefined;
      redirectUri: string | undefined;
      uiLocales: unknown;
    }> {
      const interaction = typeof interactionOrUid === 'string' ? await provider.Interaction.find(interactionOrUid) : interactionOrUid;
      assertThat(interaction, expired);
      const experience = await store.open(interaction.uid, new Date(interaction.exp * 1000), interaction.params.ui_locales);
      return {
        experience,
        interaction: interaction!,
        clientId: interaction.params.client_id as string | undefined,
        redirectUri: interaction.params.redirect_uri as string | undefined,
        uiLocales: interaction.params.ui_locales,
      };
    },

    /** Starts (or restarts) the interaction as `event`; answers the experience as it now is. */
    async start(experience: ExperienceDocument, event: InteractionKind): Promise<ExperienceDocument> {
      assertThat(experience.submittedAt === null, alreadySubmitted);
      const started = await store.start(experience, event);
      assertThat(started, alreadySubmitted);
      return started!;
    },

    /** Changes the kind of interaction, keeping what was verified (a social sign-in that finds no account goes on as a registration). */
    async switchEvent(experience: ExperienceDocument, event: InteractionKind): Promise<ExperienceDocument> {
      assertThat(experience.submittedAt === null, alreadySubmitted);
      // As Logto's: a reset is its own interaction; nothing proved for it carries to a sign-in or a registration, nor back.
      assertThat(
        experience.event !== 'ForgotPassword' && event !== 'ForgotPassword',
        () => new ApiError('session.not_supported_for_forgot_password', 'a password reset is started with PUT /api/experience, not switched to or from'),
      );
      await store.switchEvent(experience._id, event);
      return store.get(experience._id);
    },

    /** The social verification of this interaction waiting for the callback with `state`, if any. */
    pendingSocial: (given: ExperienceDocument, connectorId: string, state: string) => pending(given, 'social', connectorId, state),
    /** The enterprise SSO verification of this interaction waiting for the callback with `state`, if any. */
    pendingSso: (given: ExperienceDocument, connectorId: string, state: string) => pending(given, 'enterpriseSso', connectorId, state),

    /** Ends the interaction with `access_denied`: the person declined. */
    abort: (experience: ExperienceDocument): Promise<string> =>
      finish(experience._id, { error: 'access_denied', error_description: 'the end-user declined the request' }),
  };
}

export type InteractionSteps = ReturnType<typeof createInteraction>;
