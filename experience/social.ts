import * as client from 'openid-client';

import { ApiError, assertThat } from '../lib/errors.js';
import { generateId } from '../lib/ids.js';
import type { ConnectorStore } from '../social/connectors.js';
import { socialClientOf, type Upstream } from '../social/upstream.js';
import type { ExperienceDocument, ExperienceStore, Verification } from './state.js';

export interface ExperienceSocialDeps {
  store: ExperienceStore;
  connectors: ConnectorStore;
  upstream: Upstream;
  /** Our public origin: the only place an upstream provider may send the browser back to. */
  origin: string;
}

type SocialRecord = Extract<Verification, { type: 'social' }>;

/**
 * Sign-in with a social connector, as Logto's Experience API steps it: an authorization URL for
 * this interaction (PKCE, `state`, `nonce`, kept here, never sent to the browser but in the URL),
 * then the callback's parameters checked once (`verify`), leaving who the provider says it is.
 */
export function createExperienceSocial(deps: ExperienceSocialDeps) {
  const { store, connectors, upstream } = deps;

  return {
    async authorizationUri(experience: ExperienceDocument, connectorId: string, { state, redirectUri }: { state: string; redirectUri: string }) {
      const connector = await connectors.get(connectorId);
      // The provider sends the code where we say; only our own pages may receive it.
      assertThat(
        URL.canParse(redirectUri) && new URL(redirectUri).origin === deps.origin,
        () => new ApiError('guard.invalid_input', `redirectUri must be a URL on this service (${deps.origin})`, { field: 'body.redirectUri' }),
      );
      const record: SocialRecord = {
        type: 'social',
        connectorId,
        target: connector.metadata.target,
        redirectUri,
        state,
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
        verified: false,
      };
      const authorizationUri = await upstream.authorizationUri(socialClientOf(connector, connectors), record);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, record);
      return { authorizationUri, verificationId };
    },

    /** The callback's parameters (`connectorData`: `code`, `state`, and `iss` when the provider sends it), checked once. */
    async verify(experience: ExperienceDocument, connectorId: string, verificationId: string, connectorData: Record<string, unknown>) {
      const stored = Object.hasOwn(experience.verifications, verificationId) ? experience.verifications[verificationId] : undefined;
      assertThat(
        stored?.type === 'social' && stored.connectorId === connectorId,
        () => new ApiError('session.verification_session_not_found', 'no social verification of this interaction has that id'),
      );
      const record = stored as SocialRecord;
      assertThat(!record.verified, () => new ApiError('connector.general', 'this sign-in with the provider was completed already'));
      const parameters = Object.fromEntries(
        Object.entries(connectorData).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0] !== 'redirectUri'),
      );
      // A social identity keeps only what the provider verified.
      const { claimedEmail: _unverified, ...person } = await upstream.verify(socialClientOf(await connectors.get(connectorId), connectors), parameters, record);
      // Once: a replayed callback finds the verification completed.
      assertThat(
        await store.completeVerification(experience._id, verificationId, { verified: false }, { verified: true, upstream: person }),
        () => new ApiError('connector.general', 'this sign-in with the provider was completed already'),
      );
      return verificationId;
    },
  };
}

export type ExperienceSocial = ReturnType<typeof createExperienceSocial>;
