/**
 * The one seam with oidc-provider's internals and the types it does not share: every reach past
 * its public API, and every cast between its types and ours, is here and nowhere else.
 */
import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { ClientMetadata, KoaContextWithOIDC, ResourceServerInstance } from 'oidc-provider';
import * as clientCredentialsGrant from 'oidc-provider/lib/actions/grants/client_credentials.js';
import * as refreshTokenGrant from 'oidc-provider/lib/actions/grants/refresh_token.js';
import * as grantHelpers from 'oidc-provider/lib/helpers/grants.js';
import initializeKeystore from 'oidc-provider/lib/helpers/initialize_keystore.js';
import instance from 'oidc-provider/lib/helpers/weak_cache.js';
import type { fetch as undiciFetch } from 'undici';

/**
 * oidc-provider reads its signing keys from the `jwks` setting once, when it is constructed, and
 * has no public way to change them; signing-key rotation needs one. Its own key-store initializer,
 * called again on the provider, replaces both the keys it signs with and the JWKS it publishes;
 * every use reads them afresh.
 */
export function replaceSigningKeys(provider: Provider, jwks: { keys: JWK[] }): void {
  initializeKeystore.call(provider, structuredClone(jwks));
}

/** A client's secret comparison, as oidc-provider's `Client` instances have it (not in its public types). */
export interface ClientWithSecret {
  clientSecret?: string;
  compareClientSecret(actual: string): Promise<boolean> | boolean;
}

/**
 * Replaces `Client.prototype.compareClientSecret`, the one place oidc-provider compares a presented
 * secret: `compare` answers for the clients it knows, and gives the rest to the provider's own.
 */
export function replaceClientSecretComparison(
  provider: Provider,
  compare: (client: ClientWithSecret, actual: string, own: (actual: string) => Promise<boolean> | boolean) => Promise<boolean> | boolean,
): void {
  const prototype = provider.Client.prototype as unknown as ClientWithSecret;
  const original = prototype.compareClientSecret;
  prototype.compareClientSecret = function compareClientSecret(this: ClientWithSecret, actual: string) {
    return compare(this, actual, (given) => original.call(this, given));
  };
}

/** A JWKS as we store it (any JWK members), as oidc-provider's client metadata types it. */
export const asClientJwks = (jwks: { keys: Array<Record<string, unknown>> }) => jwks as unknown as ClientMetadata['jwks'];

/** undici's `fetch` (whose `Response` type is its own) as the global `fetch` oidc-provider and openid-client take: the same objects at run time. */
export const asGlobalFetch = (guarded: (input: string | URL | Request, init?: RequestInit) => ReturnType<typeof undiciFetch>) =>
  guarded as unknown as typeof fetch;

/** The steps of oidc-provider's built-in grants that organization tokens take over (`grants/organization-tokens.ts`). */
export interface GrantSteps {
  /** `client_credentials`: the resource servers of the request's `resource` (or the default one). */
  resolveRequestedResources(ctx: KoaContextWithOIDC): Promise<ResourceServerInstance[]>;
  /** Every grant, on the access token just before it is saved (where rich authorization details go). */
  applyAuthorizationDetails(ctx: KoaContextWithOIDC, token: MintedAccessToken, source?: unknown): Promise<void>;
}

/** An access token (or a `client_credentials` one) as a grant builds it, before it is saved. */
export interface MintedAccessToken {
  aud?: string | string[];
  scope?: string;
  claims?: unknown;
  resourceServer?: ResourceServerInstance;
}

const builtInGrants = { refresh_token: refreshTokenGrant, client_credentials: clientCredentialsGrant };

/**
 * oidc-provider's own handler of a grant type, every check and step its own, but for the steps
 * `replace` gives (each handed the provider's own). Registered again under the same name, it
 * takes the place of the built-in one.
 */
export function builtInGrant(provider: Provider, name: keyof typeof builtInGrants, replace: (own: GrantSteps) => Partial<GrantSteps>) {
  const own = Object.fromEntries(
    Object.entries(grantHelpers).map(([step, helper]) => [step, (helper as (provider: object, ...args: unknown[]) => unknown).bind(undefined, provider)]),
  );
  const helpers = { ...own, ...replace(own as unknown as GrantSteps) };
  const grant = builtInGrants[name];
  // The parameters and repeatable ones oidc-provider registers its grants with: `resource` (resource indicators are always on here), and rich authorization requests' when on.
  const richAuthorizationRequests = (instance(provider) as { features: { richAuthorizationRequests: { enabled: boolean } } }).features.richAuthorizationRequests
    .enabled;
  return {
    handler: (ctx: KoaContextWithOIDC) => grant.handler(provider, helpers, ctx),
    parameters: [...grant.parameters, 'resource', ...(richAuthorizationRequests ? ['authorization_details'] : [])],
    duplicates: ['resource'],
  };
}
