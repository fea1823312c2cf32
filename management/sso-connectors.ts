import { Ajv } from 'ajv';

import { ApiError, assertThat } from '../lib/errors.js';
import { addWebUrlFormats } from '../lib/http/web-origin.js';
import { guard } from '../lib/http/guard.js';
import { generateId } from '../lib/ids.js';
import { pageOrAll, setPageHeaders } from '../lib/http/pagination.js';
import { resolveIdp, ssoConnectorToApi, type SsoConnectorDocument, type SsoProviderName } from '../sso/connectors.js';
import { domainKey, publicEmailDomains } from '../sso/domains.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, paginationQuery } from './schemas/common.js';
import { inUnit } from '../lib/store/session.js';

const ajv = addWebUrlFormats(new Ajv({ allErrors: false, strict: false }));
const anyObject = { type: 'object', additionalProperties: true } as const;
const url = { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s]+$', format: 'web-url' } as const;

/** Each provider's configuration, as Logto's (sso/OidcConnector, sso/SamlConnector). */
const configSchemas: Record<SsoProviderName, object> = {
  OIDC: {
    type: 'object',
    properties: {
      issuer: url,
      clientId: { type: 'string', minLength: 1, maxLength: 512 },
      clientSecret: { type: 'string', minLength: 1, maxLength: 2048 },
      scope: { type: 'string', maxLength: 1024 },
    },
    required: ['issuer', 'clientId', 'clientSecret'],
    additionalProperties: false,
  },
  SAML: {
    type: 'object',
    properties: {
      metadata: { type: 'string', minLength: 1, maxLength: 200_000 },
      metadataUrl: url,
      entityId: { type: 'string', minLength: 1, maxLength: 1024 },
      signInEndpoint: url,
      x509Certificate: { type: 'string', minLength: 1, maxLength: 20_000 },
      attributeMapping: {
        type: 'object',
        properties: Object.fromEntries(['id', 'email', 'name', 'avatar'].map((key) => [key, { type: 'string', minLength: 1, maxLength: 512 }])),
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
};
/** Each kind's configuration check, compiled when a connector of that kind is first written (not at every start). */
const validators = new Map<SsoProviderName, ReturnType<typeof ajv.compile>>();
function validatorOf(providerName: SsoProviderName): ReturnType<typeof ajv.compile> {
  let validate = validators.get(providerName);
  if (!validate) {
    validate = ajv.compile(configSchemas[providerName]);
    validators.set(providerName, validate);
  }
  return validate;
}

// Any spelling a person writes (`Bücher.Example`); `domainKey` decides whether it is a domain name.
const domain = { type: 'string', minLength: 3, maxLength: 253 } as const;
const fields = {
  connectorName: { type: 'string', minLength: 1, maxLength: 128 },
  config: anyObject,
  domains: { type: 'array', items: domain, maxItems: 100 },
  branding: {
    type: 'object',
    properties: { displayName: { type: 'string', maxLength: 128 }, logo: url, darkLogo: url },
    additionalProperties: false,
  },
  syncProfile: { type: 'boolean' },
} as const;

/**
 * The domains in their compared form (`domainKey`: IDNA's ASCII form, lower case): 400 for one
 * that is no domain name; 422 `single_sign_on.forbidden_domains` for a public email service's,
 * and `.duplicated_domains` for one listed twice, as Logto's.
 */
function checkedDomains(domains: string[], forbidden: Set<string>): string[] {
  const keys = domains.map((name, index) => {
    const key = domainKey(name);
    assertThat(key, () => new ApiError('guard.invalid_input', `body.domains/${index} is not a domain name`, { field: `body.domains.${index}` }));
    return key!;
  });
  const publicOnes = keys.filter((name) => forbidden.has(name));
  assertThat(
    publicOnes.length === 0,
    () => new ApiError('single_sign_on.forbidden_domains', `public email domains cannot be an enterprise's: ${publicOnes.join(', ')}`, { data: publicOnes }),
  );
  const duplicated = keys.filter((name, index) => keys.indexOf(name) !== index);
  assertThat(
    duplicated.length === 0,
    () => new ApiError('single_sign_on.duplicated_domains', `domains listed twice: ${duplicated.join(', ')}`, { data: duplicated }),
  );
  return keys;
}

/**
 * Logto's enterprise SSO connectors (`/api/sso-connector-factories`, `/api/sso-connectors`): OIDC
 * (issuer, client id and secret; the secret sealed, write-only) and SAML (IdP metadata, its URL, or
 * its entity id, sign-in endpoint and certificate; read and checked when saved). Each names the
 * email domains it signs in.
 */
export function ssoConnectorRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { ssoConnectors } = deps;
  const present = (connector: SsoConnectorDocument) => ssoConnectorToApi(connector, deps.origin);
  const forbidden = publicEmailDomains(deps.ssoPublicEmailDomains);
  const withOwnerLock = createOwnerLocks(deps.database.db);

  /**
   * Writes a connector whose domains no other connector holds: one connector per domain, so that a
   * second IdP cannot sign in the people (and link the accounts) of a domain another speaks for.
   * Checked and written under one lock for all connectors' domains, across processes.
   */
  async function claimingDomains(id: string, domains: string[] | undefined, write: () => Promise<void>) {
    if (!domains || domains.length === 0) return write();
    return withOwnerLock('sso-connector-domains', async () => {
      const holder = await ssoConnectors.collection.findOne({ _id: { $ne: id }, domains: { $in: domains } });
      const taken = holder ? domains.filter((name) => holder.domains.includes(name)) : [];
      assertThat(
        !holder,
        () =>
          new ApiError('single_sign_on.duplicated_domains', `already claimed by the SSO connector \`${holder!._id}\`: ${taken.join(', ')}`, {
            data: taken,
            connectorId: holder!._id,
          }),
      );
      await write();
    });
  }

  /**
   * Runs `write` unless another connector has the name `connectorName` (409
   * `single_sign_on.duplicate_connector_name`, Logto's): checked and written under one lock, so
   * that two requests naming one name at once cannot both pass.
   */
  async function claimingName(id: string, connectorName: string | undefined, write: () => Promise<void>) {
    if (connectorName === undefined) return write();
    return withOwnerLock('sso-connector-names', async () => {
      const holder = await ssoConnectors.collection.findOne({ _id: { $ne: id }, connectorName });
      assertThat(
        !holder,
        () =>
          new ApiError('single_sign_on.duplicate_connector_name', `another SSO connector (\`${holder!._id}\`) is named \`${connectorName}\``, {
            field: 'body.connectorName',
          }),
      );
      await write();
    });
  }

  /** The configuration, checked and resolved: the stored form, the sealed secret, and a SAML IdP. */
  async function configure(id: string, providerName: SsoProviderName, config: Record<string, unknown>, current?: SsoConnectorDocument) {
    // A PATCH of an OIDC connector may leave the secret out: the stored one stays.
    const merged = providerName === 'OIDC' && current ? { ...current.config, clientSecret: config.clientSecret ?? 'kept', ...config } : config;
    const validate = validatorOf(providerName);
    if (!validate(merged)) {
      const [problem] = validate.errors ?? [];
      throw new ApiError('connector.invalid_config', `config${problem?.instancePath ?? ''} ${problem?.message ?? 'is invalid'}`);
    }
    if (providerName === 'OIDC') {
      const { clientSecret, ...rest } = merged as Record<string, unknown> & { clientSecret: string };
      return { config: rest, sealedSecret: config.clientSecret === undefined && current ? current.sealedSecret : ssoConnectors.seal(id, clientSecret) };
    }
    return { config: merged, idp: await resolveIdp(merged, deps.outboundFetch) };
  }

  router.get('/sso-connector-factories', guard({ response: anyObject }), async (ctx) => {
    const factory = (providerName: SsoProviderName, description: string) => ({ providerName, logo: '', logoDark: '', description });
    ctx.body = {
      standardConnectors: [
        factory('OIDC', 'Any OpenID Connect identity provider: its issuer, a client id and a client secret.'),
        factory('SAML', 'Any SAML 2.0 identity provider: its metadata (or its entity id, sign-in endpoint and certificate).'),
      ],
      providerConnectors: [],
    };
  });

  router.get('/sso-connectors', guard({ query: paginationQuery(), response: { type: 'array', items: anyObject } }), async (ctx) => {
    // Paging is optional here, as Logto's.
    const page = pageOrAll(ctx.guard.query, { optional: true });
    const cursor = ssoConnectors.collection.find({}).sort({ createdAt: 1, _id: 1 });
    if (page) cursor.skip(page.skip).limit(page.limit);
    const [total, found] = await Promise.all([page && ssoConnectors.collection.countDocuments({}), cursor.toArray()]);
    setPageHeaders(ctx, page, total);
    ctx.body = found.map(present);
  });
  router.get('/sso-connectors/:id', guard({ params: idParams('id'), response: anyObject }), async (ctx) => {
    ctx.body = present(await ssoConnectors.get(ctx.guard.params.id));
  });

  router.post(
    '/sso-connectors',
    guard({
      body: { type: 'object', properties: { providerName: { type: 'string', maxLength: 32 }, ...fields }, required: ['providerName', 'connectorName'] },
      response: anyObject,
    }),
    async (ctx) => {
      const { providerName, connectorName, config, domains = [], branding = {}, syncProfile = false } = ctx.guard.body;
      assertThat(
        providerName === 'OIDC' || providerName === 'SAML',
        () => new ApiError('connector.not_found', `no SSO connector factory is named \`${providerName}\` (OIDC or SAML)`, { type: providerName }, 422),
      );
      const _id = generateId();
      const now = Date.now();
      const made: SsoConnectorDocument = {
        _id,
        providerName: providerName as SsoProviderName,
        connectorName,
        config: {},
        domains: checkedDomains(domains, forbidden),
        branding,
        syncProfile,
        createdAt: now,
        updatedAt: now,
        ...(config && (await configure(_id, providerName as SsoProviderName, config))),
      };
      await claimingName(_id, connectorName, () =>
        claimingDomains(_id, made.domains, () =>
          deps.write(originOf(ctx), async ({ intend, record }) => {
            await intend({ entity: 'SsoConnector', action: 'created', id: _id });
            await ssoConnectors.collection.insertOne(made, inUnit());
            record({ entity: 'SsoConnector', action: 'created', id: _id, data: present(made) });
          }),
        ),
      );
      ctx.body = present(made);
    },
  );

  router.patch(
    '/sso-connectors/:id',
    guard({ params: idParams('id'), body: { type: 'object', properties: fields }, emptyPatch: true, response: anyObject }),
    async (ctx) => {
      const current = await ssoConnectors.get(ctx.guard.params.id);
      const { config, domains, branding, connectorName, syncProfile } = ctx.guard.body;
      // As Logto's: a PATCH that names nothing answers the connector as it is, and writes nothing.
      if (Object.keys(ctx.guard.body).length === 0) {
        ctx.body = present(current);
        return;
      }
      const next: SsoConnectorDocument = {
        ...current,
        ...(config && (await configure(current._id, current.providerName, config, current))),
        ...(domains && { domains: checkedDomains(domains, forbidden) }),
        ...(branding && { branding }),
        ...(connectorName && { connectorName }),
        ...(syncProfile !== undefined && { syncProfile }),
        updatedAt: Date.now(),
      };
      await claimingName(current._id, connectorName !== current.connectorName ? connectorName : undefined, () =>
        claimingDomains(current._id, domains && next.domains, () =>
          deps.write(originOf(ctx), async ({ intend, record }) => {
            await intend({ entity: 'SsoConnector', action: 'updated', id: current._id });
            await ssoConnectors.collection.replaceOne({ _id: current._id }, next, inUnit());
            record({ entity: 'SsoConnector', action: 'updated', id: current._id, data: present(next) });
          }),
        ),
      );
      ctx.body = present(next);
    },
  );

  router.delete('/sso-connectors/:id', guard({ params: idParams('id') }), async (ctx) => {
    const current = await ssoConnectors.get(ctx.guard.params.id);
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'SsoConnector', action: 'deleted', id: current._id });
      await ssoConnectors.collection.deleteOne({ _id: current._id }, inUnit());
      // No organization admits people through it any more.
      await deps.queries.links.organizationJitSsoConnectors.removeAllOfRight(current._id);
      record({ entity: 'SsoConnector', action: 'deleted', id: current._id, data: present(current) });
    });
    ctx.status = 204;
  });
}
