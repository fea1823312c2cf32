import { createRequire } from 'node:module';

import type { Db } from 'mongodb';

import { ApiError, assertThat } from '../lib/errors.js';
import type { SecretBox } from '../lib/mfa/secret-box.js';
import type { UpstreamClient } from '../social/upstream.js';
import { domainKey } from './domains.js';

export type SsoProviderName = 'OIDC' | 'SAML';

/** What a SAML connector knows of its identity provider, read from its metadata or given field by field. */
export interface SamlIdentityProvider {
  entityId: string;
  /** The IdP's single sign-on endpoint (HTTP-Redirect binding). */
  signInEndpoint: string;
  /** Its signing certificates, base64 DER (a rollover publishes two). */
  x509Certificates: string[];
}

export interface SsoConnectorDocument {
  _id: string;
  providerName: SsoProviderName;
  connectorName: string;
  /** As given, without the OIDC client secret. */
  config: Record<string, unknown>;
  /** OIDC: the client secret, sealed with the connector's id. */
  sealedSecret?: string;
  /** SAML: the identity provider, resolved when the configuration was saved. */
  idp?: SamlIdentityProvider;
  /** Email domains whose people this connector signs in (domain discovery, and linking by email). */
  domains: string[];
  branding: { displayName?: string; logo?: string; darkLogo?: string };
  /** Whether a sign-in updates the user's name, avatar and email from the identity provider. */
  syncProfile: boolean;
  createdAt: number;
  updatedAt: number;
}

/** This service as a SAML service provider for one connector: its entity id, assertion consumer URL and metadata URL. */
export function serviceProviderOf(origin: string, connectorId: string) {
  return {
    entityId: `${origin}/enterprise-sso/${connectorId}`,
    assertionConsumerServiceUrl: `${origin}/api/authn/saml/sso/${connectorId}`,
    metadataUrl: `${origin}/api/authn/saml/sso/${connectorId}/metadata`,
  };
}

/** An SSO connector as Logto's Management API answers one: never the client secret. */
export function ssoConnectorToApi(connector: SsoConnectorDocument, origin: string) {
  const { _id, sealedSecret: _secret, idp, ...rest } = connector;
  const providerConfig =
    connector.providerName === 'SAML'
      ? { serviceProvider: serviceProviderOf(origin, _id), ...(idp && { identityProvider: idp }) }
      : { issuer: connector.config.issuer, scope: scopeOf(connector) };
  return { id: _id, ...rest, providerType: connector.providerName.toLowerCase(), providerLogo: '', providerLogoDark: '', providerConfig };
}

const scopeOf = (connector: SsoConnectorDocument) => {
  const scopes = new Set(['openid', 'email', 'profile', ...String(connector.config.scope ?? '').split(' ')].filter(Boolean));
  return [...scopes].join(' ');
};

/** An enterprise OIDC connector as an upstream client (social/upstream.ts): `openid email profile` at least. */
export function ssoClientOf(connector: SsoConnectorDocument, store: SsoConnectorStore): UpstreamClient {
  return {
    key: `sso:${connector._id}:${connector.updatedAt}`,
    kind: 'oidc',
    config: { ...connector.config, scope: scopeOf(connector) },
    secret: () => store.secretOf(connector),
  };
}

/** What is read of a parsed XML element. */
interface XmlElement {
  namespaceURI: string | null;
  localName: string | null;
  textContent: string | null;
  getAttribute(name: string): string | null;
  getElementsByTagNameNS(namespace: string, name: string): ArrayLike<XmlElement>;
}
/** xmldom's parser (node-saml's), typed here: its own types would bring the DOM library into the whole program. */
type XmlParser = new (options: { errorHandler: (level: string, message: string) => void }) => {
  parseFromString(xml: string, type: string): XmlElement & { documentElement: XmlElement | null };
};
/** Loaded when SAML metadata is first read: most deployments never do. */
let xmlParser: XmlParser | undefined;
const domParser = (): XmlParser => (xmlParser ??= (createRequire(import.meta.url)('@xmldom/xmldom') as { DOMParser: XmlParser }).DOMParser);

const invalid = (message: string) => new ApiError('connector.invalid_config', message);
const certificateText = (value: string) => value.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
const SAML_METADATA = 'urn:oasis:names:tc:SAML:2.0:metadata';
const XML_DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/** The identity provider an IdP metadata document describes: its entity id, redirect-binding SSO endpoint, and signing certificates. */
export function parseIdpMetadata(xml: string): SamlIdentityProvider {
  const problems: string[] = [];
  const DOMParser = domParser();
  const document = new DOMParser({ errorHandler: (level, message) => void (level !== 'warning' && problems.push(message)) }).parseFromString(xml, 'text/xml');
  assertThat(problems.length === 0 && document.documentElement, () => invalid(`config.metadata is not well-formed XML (${problems[0] ?? 'empty'})`));
  const entities = [document.documentElement!, ...Array.from(document.getElementsByTagNameNS(SAML_METADATA, 'EntityDescriptor'))].filter(
    (node) => node.namespaceURI === SAML_METADATA && node.localName === 'EntityDescriptor',
  );
  const entity = entities.find((node) => node.getElementsByTagNameNS(SAML_METADATA, 'IDPSSODescriptor').length > 0);
  assertThat(entity, () => invalid('config.metadata describes no identity provider (no EntityDescriptor with an IDPSSODescriptor)'));
  const descriptor = entity!.getElementsByTagNameNS(SAML_METADATA, 'IDPSSODescriptor')[0]!;
  const endpoint = Array.from(descriptor.getElementsByTagNameNS(SAML_METADATA, 'SingleSignOnService')).find(
    (node) => node.getAttribute('Binding') === REDIRECT_BINDING,
  );
  const certificates = Array.from(descriptor.getElementsByTagNameNS(SAML_METADATA, 'KeyDescriptor'))
    .filter((node) => ['signing', '', null].includes(node.getAttribute('use')))
    .flatMap((node) => Array.from(node.getElementsByTagNameNS(XML_DSIG, 'X509Certificate')).map((cert) => certificateText(cert.textContent ?? '')))
    .filter(Boolean);
  return checkedIdp({
    entityId: entity!.getAttribute('entityID') ?? '',
    signInEndpoint: endpoint?.getAttribute('Location') ?? '',
    x509Certificates: certificates,
  });
}

function checkedIdp(idp: SamlIdentityProvider): SamlIdentityProvider {
  assertThat(idp.entityId, () => invalid('the identity provider has no entity id'));
  assertThat(URL.canParse(idp.signInEndpoint) && /^https?:$/.test(new URL(idp.signInEndpoint).protocol), () =>
    invalid('the identity provider has no single sign-on endpoint with the HTTP-Redirect binding'),
  );
  assertThat(idp.x509Certificates.length > 0, () => invalid('the identity provider has no signing certificate: signed assertions are required'));
  for (const certificate of idp.x509Certificates) {
    assertThat(/^[A-Za-z0-9+/]+={0,2}$/.test(certificate), () => invalid('a signing certificate is not base64 (PEM or DER)'));
  }
  return idp;
}

/**
 * A SAML connector's identity provider from its configuration (Logto's fields): the metadata XML,
 * its URL (fetched now, through the outbound guard), or the entity id, sign-in endpoint and certificate.
 */
export async function resolveIdp(config: Record<string, unknown>, fetch: typeof globalThis.fetch): Promise<SamlIdentityProvider> {
  if (typeof config.metadata === 'string') return parseIdpMetadata(config.metadata);
  if (typeof config.metadataUrl === 'string') {
    const response = await fetch(config.metadataUrl, { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } }).catch(
      (error: unknown) => {
        throw invalid(`config.metadataUrl could not be fetched (${(error as Error).message})`);
      },
    );
    assertThat(response.ok, () => invalid(`config.metadataUrl answered ${response.status}`));
    return parseIdpMetadata(await response.text());
  }
  const { entityId, signInEndpoint, x509Certificate } = config as Record<string, string | undefined>;
  assertThat(entityId && signInEndpoint && x509Certificate, () =>
    invalid('a SAML connector needs config.metadata, config.metadataUrl, or config.entityId, config.signInEndpoint and config.x509Certificate'),
  );
  return checkedIdp({ entityId: entityId!, signInEndpoint: signInEndpoint!, x509Certificates: [certificateText(x509Certificate!)] });
}

/** The SSO connectors, in `sso_connectors`; an OIDC client secret sealed under the MFA key's box. */
export function createSsoConnectorStore(db: Db, box: SecretBox) {
  const connectors = db.collection<SsoConnectorDocument>('sso_connectors');
  return {
    collection: connectors,
    secretOf: (connector: SsoConnectorDocument) => box.open(connector.sealedSecret ?? '', connector._id),
    seal: (connectorId: string, secret: string) => box.seal(secret, connectorId),
    async get(id: string): Promise<SsoConnectorDocument> {
      const found = await connectors.findOne({ _id: id });
      assertThat(found, () => new ApiError('entity.not_exists_with_id', `no SSO connector has id \`${id}\``, { id }));
      return found!;
    },
    /** The connectors that sign in people of `domain` (compared as `domainKey` does), oldest first. */
    forDomain: (domain: string) =>
      connectors
        .find({ domains: domainKey(domain) ?? domain.toLowerCase() })
        .sort({ createdAt: 1, _id: 1 })
        .toArray(),
  };
}

export type SsoConnectorStore = ReturnType<typeof createSsoConnectorStore>;
