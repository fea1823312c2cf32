/**
 * The one file that reaches into oidc-provider's internals. oidc-provider reads its signing keys
 * from the `jwks` setting once, when it is constructed, and has no public way to change them;
 * signing-key rotation needs one. Its own key-store initializer, called again on the provider,
 * replaces both the keys it signs with and the JWKS it publishes; every use reads them afresh.
 */
import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import initializeKeystore from 'oidc-provider/lib/helpers/initialize_keystore.js';

export function replaceSigningKeys(provider: Provider, jwks: { keys: JWK[] }): void {
  initializeKeystore.call(provider, structuredClone(jwks));
}
