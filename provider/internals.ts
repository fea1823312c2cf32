/**
 * The one seam with oidc-provider's internals and the types it does not share: every reach past
 * its public API, and every cast between its types and ours, is here and nowhere else.
 */
import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { ClientMetadata } from 'oidc-provider';
import initializeKeystore from 'oidc-provider/lib/helpers/initialize_keystore.js';
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
