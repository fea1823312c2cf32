import type { Db } from 'mongodb';
import { errors, interactionPolicy, type Adapter, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

import { createOutboundPolicy } from '../lib/outbound-addresses.js';
import type { Queries } from '../lib/store/queries/index.js';
import { createFindAccount, standardClaims } from './accounts.js';
import { composeAdapters, type ClientFinder } from './adapter.js';
import { failingAsUnavailable, reportingUnavailability } from './unavailable.js';
import { clientPolicies, extraClientMetadata } from './client-policies.js';
import { createProviderFetch } from './fetch.js';
import type { KeyRing } from './oidc-keys.js';
import { createGetResourceServerInfo, type ResourceServerDeps } from './resource-servers.js';
import { checkingOrganizationAccess, wantsOrganizationToken, type OrganizationAccess } from './organization-access.js';
import { withOrganizationChooser } from './organization-binding.js';

/** An access token's lifetime where its resource sets none, in seconds. */
export const defaultAccessTokenTtl = 3600;
/** A sign-in session lives 14 days (as in Logto and oidc-provider); an interaction, an hour. */
const sessionTtl = 14 * 24 * 3600;
const interactionTtl = 3600;

type ExtraTokenClaims = NonNullable<Configuration['extraTokenClaims']>;
type RpInitiatedLogout = NonNullable<NonNullable<Configuration['features']>['rpInitiatedLogout']>;
type LogoutSource = NonNullable<RpInitiatedLogout['logoutSource']>;
type PostLogoutSuccessSource = NonNullable<RpInitiatedLogout['postLogoutSuccessSource']>;

export interface ProviderDeps extends Omit<ResourceServerDeps, 'fallback'> {
  db: Db;
  queries: Queries;
  organizationAccess: OrganizationAccess;
  /** Our applications as oidc-provider clients (from the applications cache). */
  clients: { get: ClientFinder };
  keyRing: KeyRing;
  /** Private or loopback hosts the provider may still call. */
  outboundAllowedHosts: string[];
  /** The indicator of the default API resource (`PATCH /api/resources/:id/is-default`), if one is marked. */
  defaultResource(): Promise<string | undefined>;
  /** Our claims for a token (custom claims, `act`): they come after the host's, and nothing overrides them. */
  extraTokenClaims: ExtraTokenClaims;
  /** The sign-in experience, when it is on: where interactions go, first-party consent, the sign-out page. */
  experience?: {
    interactionUrl(uid: string): string;
    loadExistingGrant(host: Configuration['loadExistingGrant']): NonNullable<Configuration['loadExistingGrant']>;
    logoutSource: LogoutSource;
    /** The page after a sign-out that names no `post_logout_redirect_uri`, in the pages' look (oidc-provider's loads a web font from Google). */
    postLogoutSuccessSource: PostLogoutSuccessSource;
    /** The provider's error page (a bad authorization request, say), in the pages' look. */
    renderError: NonNullable<Configuration['renderError']>;
    /** The languages the pages speak, for discovery's `ui_locales_supported`. */
    languages: string[];
  };
}

/**
 * oidc-provider's configuration: the host's, with our storage, accounts, keys, claims, client
 * policies and resource servers put in where the host has not set its own.
 */
export function configureProvider(host: Configuration, deps: ProviderDeps) {
  const features = host.features ?? {};
  const hostResourceIndicators = features.resourceIndicators;
  const { experience } = deps;
  const getResourceServerInfo = failingAsUnavailable(
    createGetResourceServerInfo({
      resources: deps.resources,
      held: deps.held,
      organizations: deps.organizations,
      accessTokenAlg: deps.accessTokenAlg,
      managementApiTokenTtl: deps.managementApiTokenTtl,
      ...(hostResourceIndicators?.getResourceServerInfo && { fallback: hostResourceIndicators.getResourceServerInfo }),
    }),
  );
  // Our pages, and on them the organization chooser's prompt; a host with pages of its own keeps its policy as it is.
  const interactions: NonNullable<Configuration['interactions']> =
    !experience || host.interactions?.url
      ? { ...host.interactions }
      : {
          ...host.interactions,
          url: (_ctx, interaction) => experience.interactionUrl(interaction.uid),
          policy: withOrganizationChooser(host.interactions?.policy),
        };
  const configuration: Configuration = {
    ...host,
    adapter: unavailabilityReported(composeAdapters(deps.db, (id) => deps.clients.get(id), host.adapter)),
    // Our keys, from the ring that rotation changes; a host's own keys are the host's to rotate.
    jwks: host.jwks ?? deps.keyRing.jwks(),
    // Discovery says only what works: `client_secret_jwt` needs the secret itself, which we
    // do not keep (only its hash).
    clientAuthMethods: host.clientAuthMethods ?? ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    // An organization token's access is checked where the refresh grant finds the account (`organization-access.ts`).
    findAccount: failingAsUnavailable(
      checkingOrganizationAccess(createFindAccount(deps.queries, deps.organizations, host.findAccount), () => deps.organizationAccess),
    ),
    // The host's claims, then ours, which nothing overrides.
    extraTokenClaims: failingAsUnavailable(async (ctx: KoaContextWithOIDC, token) => ({
      ...(await host.extraTokenClaims?.(ctx, token)),
      ...(await deps.extraTokenClaims(ctx, token)),
    })),
    ...(experience && {
      // OpenID Connect Discovery §3: the languages `ui_locales` may ask the pages for; Prompt Create
      // §4.2: the `prompt` values the pages answer.
      discovery: {
        ...host.discovery,
        ui_locales_supported: host.discovery?.ui_locales_supported ?? experience.languages,
        prompt_values_supported: host.discovery?.prompt_values_supported ?? [
          'none',
          ...(interactions.policy ?? interactionPolicy.base()).filter(({ requestable }) => requestable).map(({ name }) => name),
        ],
      },
      interactions,
      renderError: host.renderError ?? experience.renderError,
      loadExistingGrant: failingAsUnavailable(experience.loadExistingGrant(host.loadExistingGrant)),
    }),
    // Logto's authorization parameters: a magic link's one-time token, and the organization a request is about.
    extraParams: withOurExtraParams(host.extraParams),
    // The standard scopes release the standard claims; a host's own mapping wins scope by scope.
    claims: { ...standardClaims, ...host.claims },
    cookies: { ...host.cookies, keys: host.cookies?.keys ?? deps.keyRing.cookieKeys },
    // Tokens for our resources live as long as the resource says (`accessTokenTtl`); ID and
    // refresh tokens as the application's `customClientMetadata` says.
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultAccessTokenTtl,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultAccessTokenTtl,
      IdToken: (_ctx, _token, client) => clientPolicies.idTokenTtl(client),
      RefreshToken: (ctx, token, client) => clientPolicies.refreshTokenTtl(ctx, token, client),
      // oidc-provider's own values for these, said here (it asks a deployment to choose them); a
      // grant outlives no refresh token issued with it (an application's may live up to 180 days).
      Session: sessionTtl,
      Interaction: interactionTtl,
      Grant: (ctx, grant) => clientPolicies.grantTtl(ctx?.oidc?.client?.clientId === grant.clientId ? ctx.oidc.client : undefined, sessionTtl),
      ...host.ttl,
    },
    extraClientMetadata: extraClientMetadata(host.extraClientMetadata),
    rotateRefreshToken: host.rotateRefreshToken ?? clientPolicies.rotateRefreshToken,
    issueRefreshToken: host.issueRefreshToken ?? clientPolicies.issueRefreshToken,
    clientBasedCORS: host.clientBasedCORS ?? clientPolicies.clientBasedCORS,
    // What the provider fetches goes through the outbound policy webhooks use.
    fetch: host.fetch ?? createProviderFetch(createOutboundPolicy(deps.outboundAllowedHosts)),
    features: {
      ...features,
      ...(experience && {
        rpInitiatedLogout: {
          ...features.rpInitiatedLogout,
          logoutSource: features.rpInitiatedLogout?.logoutSource ?? experience.logoutSource,
          postLogoutSuccessSource: features.rpInitiatedLogout?.postLogoutSuccessSource ?? experience.postLogoutSuccessSource,
        },
      }),
      // oidc-provider's development login signs in any account id with any password: off
      // unless the host turned it on itself (and then it is said at startup).
      devInteractions: { ...features.devInteractions, enabled: features.devInteractions?.enabled === true },
      clientCredentials: { ...features.clientCredentials, enabled: true },
      // RFC 7662: opaque tokens as oidc-provider answers them, our JWT access tokens by `introspection.ts`.
      introspection: {
        ...features.introspection,
        enabled: (features.introspection?.enabled ?? true) as false,
        allowedPolicy: features.introspection?.allowedPolicy ?? introspectionAllowed,
      },
      // RFC 7009 token revocation at `/oidc/token/revocation`, as Logto has it: a refresh token revoked ends its grant.
      // §2.1: only the client the token was issued to may revoke it (oidc-provider's own rule, said here).
      revocation: {
        ...features.revocation,
        enabled: features.revocation?.enabled ?? true,
        allowedPolicy: features.revocation?.allowedPolicy ?? revocationAllowed,
      },
      // OpenID Connect Back-Channel Logout 1.0, for applications with a `backchannelLogoutUri`.
      backchannelLogout: { ...features.backchannelLogout, enabled: features.backchannelLogout?.enabled ?? true },
      resourceIndicators: {
        ...hostResourceIndicators,
        enabled: true,
        getResourceServerInfo,
        defaultResource: requiringResourceForClientCredentials(hostResourceIndicators?.defaultResource, deps.defaultResource),
      },
    },
  };
  return { configuration, getResourceServerInfo };
}

/**
 * RFC 7009 §2.1: the server verifies that the token was issued to the client asking to revoke it.
 * Another client's token: a public client is answered as if it were revoked (it proves nothing, so
 * it learns nothing), a confidential one `invalid_request`.
 */
async function revocationAllowed(
  _ctx: KoaContextWithOIDC,
  client: { clientId: string; clientAuthMethod?: string | undefined },
  token: { clientId?: string | undefined },
) {
  if (token.clientId === client.clientId) return true;
  if (client.clientAuthMethod === 'none') return false;
  throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
}

/** RFC 7662 §2.1: any authenticated client may ask; a public client learns only about its own tokens (as our JWTs' introspection). */
async function introspectionAllowed(
  _ctx: KoaContextWithOIDC,
  client: { clientId: string; clientAuthMethod?: string | undefined },
  token: { clientId?: string | undefined },
) {
  return client.clientAuthMethod !== 'none' || token.clientId === client.clientId;
}

/** The authorization parameters we read (`one_time_token`, `organization_id`) beside the host's own, its validators kept. */
const ourExtraParams = ['one_time_token', 'organization_id'];
function withOurExtraParams(host: Configuration['extraParams']): NonNullable<Configuration['extraParams']> {
  if (host && !Array.isArray(host) && !(host instanceof Set)) return { ...Object.fromEntries(ourExtraParams.map((name) => [name, null])), ...host };
  return [...new Set([...(host ?? []), ...ourExtraParams])];
}

/** Each model's adapter, wrapped once, so that an unreachable database is `temporarily_unavailable` (`unavailable.ts`). */
function unavailabilityReported(factory: (name: string) => Adapter): (name: string) => Adapter {
  const wrapped = new Map<string, Adapter>();
  return (name) => {
    let adapter = wrapped.get(name);
    if (!adapter) wrapped.set(name, (adapter = reportingUnavailability(factory(name))));
    return adapter;
  };
}

type DefaultResource = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>['defaultResource'];

/**
 * As Logto's: a request that names no API resource gets the default one, when one is marked (the
 * host's own choice comes first), except one for an organization token. A `client_credentials` request with neither is `invalid_target`
 * (RFC 8707 §2), not an unbound opaque token.
 */
function requiringResourceForClientCredentials(host: DefaultResource, marked: () => Promise<string | undefined>): NonNullable<DefaultResource> {
  return async (ctx, client, oneOf) => {
    // An organization token's audience is the organization (`grants/organization-tokens.ts`): no resource is chosen for it.
    if (wantsOrganizationToken(ctx)) return undefined;
    const chosen = host ? await host(ctx, client, oneOf) : (oneOf ?? (await marked()));
    if (chosen === undefined && ctx.oidc.route === 'token' && ctx.oidc.params?.grant_type === 'client_credentials') {
      throw new errors.InvalidTarget('resource indicator is missing: name the API resource this token is for');
    }
    return chosen;
  };
}
