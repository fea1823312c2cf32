import type { Db } from 'mongodb';
import * as client from 'openid-client';

import { ApiError, assertThat } from '../lib/errors.js';
import { generateId, generateSecret, sha256 } from '../lib/ids.js';
import type { Upstream } from '../social/upstream.js';
import type { UpstreamUser } from '../lib/store/identities.js';
import { ssoClientOf, type SsoConnectorDocument, type SsoConnectorStore } from '../sso/connectors.js';
import { samlRequestTtlMs, type SamlServiceProvider, type SsoUser } from '../sso/saml.js';
import { emailDomainKey } from '../sso/domains.js';
import type { ExperienceDocument, ExperienceStore, Verification } from './state.js';

export interface ExperienceSsoDeps {
  db: Db;
  store: ExperienceStore;
  ssoConnectors: SsoConnectorStore;
  upstream: Upstream;
  saml: SamlServiceProvider;
  /** Our public origin: the only place the browser is sent back to. */
  origin: string;
}

type SsoRecord = Extract<Verification, { type: 'enterpriseSso' }>;

/** A SAML sign-in waiting for its response: the RelayState (hashed) names the interaction and the verification. */
interface SsoSession {
  _id: string;
  experienceId: string;
  verificationId: string;
  connectorId: string;
  expiresAt: Date;
}

const notFound = () => new ApiError('session.verification_session_not_found', 'no enterprise SSO verification of this interaction has that id');
const failed = (reason: string) => new ApiError('connector.general', `the sign-in with the identity provider failed: ${reason}`);
const domainOf = (email: string) => emailDomainKey(email) ?? email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** A connector with a configuration it can sign in with: 400 `connector.invalid_config` otherwise. */
function assertReady(connector: SsoConnectorDocument) {
  const ready = connector.providerName === 'SAML' ? Boolean(connector.idp) : Boolean(connector.config.issuer && connector.sealedSecret);
  assertThat(ready, () => new ApiError('connector.invalid_config', `the SSO connector \`${connector._id}\` is not configured yet`));
}

/**
 * The email an enterprise IdP gives, when it can be taken as the person's: one in a domain the
 * connector is declared for (the administrator says that IdP speaks for those addresses). Nothing
 * else, not even an OIDC `email_verified`: a multi-tenant IdP, or a customer's own, could otherwise
 * name any address and be linked to its account.
 */
function trustedEmail(connector: SsoConnectorDocument, person: { email?: string; claimedEmail?: string }): string | undefined {
  return [person.email, person.claimedEmail].find((email): email is string => Boolean(email) && connector.domains.includes(domainOf(email!)));
}

/** Who an OIDC IdP's callback names, as an SSO user. */
function ssoUserOf(connector: SsoConnectorDocument, person: UpstreamUser): SsoUser {
  const email = trustedEmail(connector, person);
  const { claimedEmail: _claimed, ...detail } = person;
  return {
    issuer: String(connector.config.issuer),
    identityId: person.id,
    ...(email && { email }),
    ...(person.name && { name: person.name }),
    ...(person.avatar && { avatar: person.avatar }),
    detail,
  };
}

/**
 * Enterprise SSO in the Experience API, as Logto's (`/verification/sso/...`): email-domain
 * discovery; an authorization URI (OIDC: PKCE, `state`, `nonce`; SAML: an AuthnRequest whose id
 * the response must answer, and a RelayState that names this verification); the SAML response
 * taken at the assertion consumer URL; then `verify`, once, leaving who the IdP says it is.
 */
export function createExperienceSso(deps: ExperienceSsoDeps) {
  const { store, ssoConnectors, upstream, saml } = deps;
  const sessions = deps.db.collection<SsoSession>('sso_sessions');

  const recordOf = (experience: ExperienceDocument, connectorId: string, verificationId: string) => {
    const stored = Object.hasOwn(experience.verifications, verificationId) ? experience.verifications[verificationId] : undefined;
    assertThat(stored?.type === 'enterpriseSso' && stored.connectorId === connectorId, notFound);
    return stored as SsoRecord;
  };

  return {
    /** The connectors that sign in people of this email's domain (Logto's `GET /api/experience/sso-connectors`). */
    async discover(email: string): Promise<Array<{ id: string; name: string }>> {
      const found = await ssoConnectors.forDomain(domainOf(email));
      return found
        .filter((connector) => (connector.providerName === 'SAML' ? connector.idp : connector.sealedSecret))
        .map((connector) => ({ id: connector._id, name: connector.branding.displayName ?? connector.connectorName }));
    },

    async authorizationUri(experience: ExperienceDocument, connectorId: string, { state, redirectUri }: { state: string; redirectUri: string }) {
      const connector = await ssoConnectors.get(connectorId);
      assertReady(connector);
      assertThat(
        URL.canParse(redirectUri) && new URL(redirectUri).origin === deps.origin,
        () => new ApiError('guard.invalid_input', `redirectUri must be a URL on this service (${deps.origin})`, { field: 'body.redirectUri' }),
      );
      const verificationId = generateId();
      if (connector.providerName === 'OIDC') {
        const record: SsoRecord = {
          type: 'enterpriseSso',
          connectorId,
          providerName: 'OIDC',
          redirectUri,
          state,
          nonce: client.randomNonce(),
          codeVerifier: client.randomPKCECodeVerifier(),
          verified: false,
        };
        const authorizationUri = await upstream.authorizationUri(ssoClientOf(connector, ssoConnectors), {
          redirectUri,
          state,
          nonce: record.nonce!,
          codeVerifier: record.codeVerifier!,
        });
        await store.addVerification(experience._id, verificationId, record);
        return { authorizationUri, verificationId };
      }
      const relayState = generateSecret();
      const { authorizationUri, requestId } = await saml.authorizationUri(connector, relayState);
      const now = Date.now();
      const record: SsoRecord = {
        type: 'enterpriseSso',
        connectorId,
        providerName: 'SAML',
        redirectUri,
        state,
        samlRequestId: requestId,
        requestedAt: now,
        verified: false,
      };
      await store.addVerification(experience._id, verificationId, record);
      await sessions.insertOne({
        _id: sha256(relayState),
        experienceId: experience._id,
        verificationId,
        connectorId,
        expiresAt: new Date(now + samlRequestTtlMs),
      });
      return { authorizationUri, verificationId };
    },

    /**
     * The IdP's POST to the assertion consumer URL: the response checked against the request this
     * RelayState's sign-in sent, its outcome (the person, or why not) kept with the verification.
     * Answers where the browser goes next: the sign-in's redirect URI, with its `state`.
     */
    async assertionConsumer(connectorId: string, samlResponse: string, relayState: string): Promise<string> {
      const filter = { _id: sha256(relayState), connectorId, expiresAt: { $gt: new Date() } };
      const session = await sessions.findOne(filter);
      // One answer per sign-in: the session is gone once taken.
      assertThat(session && (await sessions.deleteOne(filter)).deletedCount === 1, () =>
        failed('this sign-in is unknown, has expired, or was answered already (RelayState)'),
      );
      const experience = await store.get(session!.experienceId).catch(() => undefined);
      assertThat(experience, () => failed('this sign-in has expired'));
      const record = recordOf(experience!, connectorId, session!.verificationId);
      let outcome: Pick<SsoRecord, 'upstream' | 'samlError'>;
      try {
        const connector = await ssoConnectors.get(connectorId);
        assertReady(connector);
        const person = await saml.validate(connector, samlResponse, { id: record.samlRequestId!, createdAt: record.requestedAt! });
        const email = trustedEmail(connector, person);
        const { email: _given, ...rest } = person;
        outcome = { upstream: { ...rest, ...(email && { email }) } };
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        outcome = { samlError: error.message };
      }
      await store.completeVerification(
        experience!._id,
        session!.verificationId,
        { verified: false, samlAnswered: { $ne: true } },
        { samlAnswered: true, ...outcome },
      );
      const back = new URL(record.redirectUri);
      back.searchParams.set('state', record.state);
      return back.href;
    },

    /** The callback (OIDC: its parameters; SAML: the response the assertion consumer took), checked once. */
    async verify(experience: ExperienceDocument, connectorId: string, verificationId: string, connectorData: Record<string, unknown>) {
      const record = recordOf(experience, connectorId, verificationId);
      const done = () => failed('this sign-in with the identity provider was completed already');
      assertThat(!record.verified, done);
      let person: SsoUser;
      if (record.providerName === 'OIDC') {
        const connector = await ssoConnectors.get(connectorId);
        assertReady(connector);
        const parameters = Object.fromEntries(
          Object.entries(connectorData).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0] !== 'redirectUri'),
        );
        person = ssoUserOf(connector, await upstream.verify(ssoClientOf(connector, ssoConnectors), parameters, record as Required<SsoRecord>));
      } else {
        assertThat(!record.samlError, () => new ApiError('connector.general', record.samlError!));
        assertThat(record.upstream, () => failed('the identity provider has not answered this sign-in'));
        // The browser that comes back names the sign-in it started.
        assertThat(connectorData.state === undefined || connectorData.state === record.state, () => failed('the state does not match this sign-in'));
        person = record.upstream!;
      }
      assertThat(await store.completeVerification(experience._id, verificationId, { verified: false }, { verified: true, upstream: person }), done);
      return verificationId;
    },
  };
}

export type ExperienceSso = ReturnType<typeof createExperienceSso>;
