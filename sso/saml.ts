import type { CacheProvider, Profile } from '@node-saml/node-saml';
import type { Db } from 'mongodb';

import { ApiError, isDuplicateKeyError } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';
import { onFirstUse } from '../lib/on-first-use.js';
import { serviceProviderOf, type SsoConnectorDocument } from './connectors.js';

/** Who an enterprise identity provider says the person is. */
export interface SsoUser {
  /** The IdP: OIDC issuer, SAML entity id. */
  issuer: string;
  /** Its subject: OIDC `sub`, SAML NameID. */
  identityId: string;
  email?: string;
  name?: string;
  avatar?: string;
  /** The rest of what it said (claims or attributes), never a token. */
  detail: Record<string, unknown>;
}

/** How far an identity provider's clock may be from ours (NotBefore, NotOnOrAfter). */
export const samlClockSkewMs = 60_000;
/** How long an AuthnRequest waits for its response. */
export const samlRequestTtlMs = 10 * 60_000;

/** node-saml, loaded at the first SAML sign-in or metadata request. */
const nodeSaml = onFirstUse(() => import('@node-saml/node-saml'));

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** Where IdPs usually put each field, when the connector's `attributeMapping` does not say. */
const defaultAttributes = {
  email: ['email', 'mail', 'emailAddress', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'],
  name: ['name', 'displayName', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name', 'http://schemas.microsoft.com/identity/claims/displayname'],
  avatar: ['avatar', 'picture'],
} as const;

const failed = (reason: string) => new ApiError('connector.general', `the sign-in with the identity provider failed: ${reason}`);

type Node = { $?: Record<string, string>; _?: string } & Record<string, unknown>;
const children = (node: Node | undefined, name: string) => (node?.[name] as Node[] | undefined) ?? [];
const first = (value: unknown) => (Array.isArray(value) ? value[0] : value);
const text = (value: unknown) => {
  const one = first(value);
  return typeof one === 'string' && one.length > 0 ? one : undefined;
};

/**
 * This service as a SAML 2.0 service provider, on node-saml: the AuthnRequest (HTTP-Redirect),
 * and the response (HTTP-POST) checked by node-saml (a signed assertion from the connector's
 * certificate, one assertion, audience, NotBefore/NotOnOrAfter, InResponseTo) and here (the
 * issuer, a bearer confirmation for our assertion consumer URL and this request, and the
 * assertion's id used once: `saml_assertions`, unique).
 */
export function createSamlServiceProvider({ db, origin }: { db: Db; origin: string }) {
  const assertions = db.collection<{ _id: string; expiresAt: Date }>('saml_assertions');

  /** node-saml for one connector; `requestId` is the only InResponseTo it accepts (the one this sign-in sent). */
  async function samlOf(connector: SsoConnectorDocument, request: { id?: string; createdAt?: number; onCreated?: (id: string) => void }) {
    const { SAML, ValidateInResponseTo } = await nodeSaml();
    const sp = serviceProviderOf(origin, connector._id);
    const idp = connector.idp!;
    const cacheProvider: CacheProvider = {
      async saveAsync(key) {
        request.onCreated?.(key);
        return { createdAt: Date.now(), value: key };
      },
      getAsync: async (key) => (key === request.id && request.createdAt ? new Date(request.createdAt).toISOString() : null),
      removeAsync: async () => null,
    };
    return new SAML({
      issuer: sp.entityId,
      callbackUrl: sp.assertionConsumerServiceUrl,
      entryPoint: idp.signInEndpoint,
      idpIssuer: idp.entityId,
      idpCert: idp.x509Certificates,
      audience: sp.entityId,
      wantAssertionsSigned: true,
      // Many IdPs sign the assertion only; that signature is the one required.
      wantAuthnResponseSigned: false,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: samlRequestTtlMs,
      acceptedClockSkewMs: samlClockSkewMs,
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      cacheProvider,
    });
  }

  return {
    /** The IdP's sign-in URL with our AuthnRequest, and the request's id (the response must answer it). */
    async authorizationUri(connector: SsoConnectorDocument, relayState: string): Promise<{ authorizationUri: string; requestId: string }> {
      let requestId = '';
      const saml = await samlOf(connector, { onCreated: (id) => (requestId = id) });
      const authorizationUri = await saml.getAuthorizeUrlAsync(relayState, undefined, {});
      return { authorizationUri, requestId };
    },

    /** Our service provider metadata for this connector (its entity id and assertion consumer URL). */
    async metadata(connector: SsoConnectorDocument): Promise<string> {
      return (await samlOf(connector, {})).generateServiceProviderMetadata(null, null);
    },

    /** Who the response names, once every check passed; 400 `connector.general` with the reason otherwise. */
    async validate(connector: SsoConnectorDocument, samlResponse: string, request: { id: string; createdAt: number }): Promise<SsoUser> {
      const sp = serviceProviderOf(origin, connector._id);
      let profile: Profile | null;
      try {
        ({ profile } = await (await samlOf(connector, request)).validatePostResponseAsync({ SAMLResponse: samlResponse }));
      } catch (error) {
        throw failed((error as Error).message);
      }
      if (!profile) throw failed('the response holds no assertion');
      const assertion = (profile.getAssertion?.() as { Assertion?: Node } | undefined)?.Assertion;
      if (!assertion) throw failed('the response holds no assertion');
      if (profile.issuer !== connector.idp!.entityId) throw failed('the assertion was not issued by the connector’s identity provider');
      if (profile.inResponseTo !== request.id) throw failed('the response does not answer this sign-in');
      // SAML Profiles §4.1.4.2: a bearer confirmation for our assertion consumer URL, answering our request, with an expiry.
      const confirmed = children(children(assertion, 'Subject')[0], 'SubjectConfirmation').some((confirmation) => {
        const data = children(confirmation, 'SubjectConfirmationData')[0]?.$ ?? {};
        return (
          confirmation.$?.Method === BEARER &&
          data.Recipient === sp.assertionConsumerServiceUrl &&
          data.InResponseTo === request.id &&
          typeof data.NotOnOrAfter === 'string'
        );
      });
      if (!confirmed) throw failed('the assertion has no bearer confirmation for this service’s assertion consumer URL and this request');
      const assertionId = assertion.$?.ID;
      if (!assertionId || !profile.nameID) throw failed('the assertion has no ID or no NameID');
      // Used once: the id of an accepted assertion is kept past the assertion's own expiry.
      const notOnOrAfter = children(assertion, 'Conditions')[0]?.$?.NotOnOrAfter;
      const expiresAt = new Date((notOnOrAfter ? Date.parse(notOnOrAfter) : Date.now() + samlRequestTtlMs) + samlClockSkewMs);
      try {
        await assertions.insertOne({ _id: sha256(`${profile.issuer}\n${assertionId}`), expiresAt });
      } catch (error) {
        if (isDuplicateKeyError(error)) throw failed('the assertion was used already');
        throw error;
      }
      return userOf(connector, profile);
    },
  };
}

/** The person an assertion names, through the connector's `attributeMapping` (or the usual attribute names). */
function userOf(connector: SsoConnectorDocument, profile: Profile): SsoUser {
  const mapping = (connector.config.attributeMapping ?? {}) as Partial<Record<'id' | 'email' | 'name' | 'avatar', string>>;
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const read = (field: keyof typeof defaultAttributes) =>
    mapping[field] ? text(attributes[mapping[field]!]) : defaultAttributes[field].map((name) => text(attributes[name])).find(Boolean);
  const identityId = (mapping.id && text(attributes[mapping.id])) || profile.nameID!;
  const email = read('email') ?? (profile.nameIDFormat === EMAIL_FORMAT ? profile.nameID : undefined);
  const name = read('name');
  const avatar = read('avatar');
  return {
    issuer: profile.issuer!,
    identityId,
    ...(email && { email }),
    ...(name && { name }),
    ...(avatar && { avatar }),
    detail: { nameID: profile.nameID, ...(profile.nameIDFormat && { nameIDFormat: profile.nameIDFormat }), attributes },
  };
}

export type SamlServiceProvider = ReturnType<typeof createSamlServiceProvider>;
