import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import type Provider from 'oidc-provider';

import type { ActClaim } from './token-types.js';

const hasOpenid = (scope: unknown) => typeof scope === 'string' && scope.split(' ').includes('openid');
const asAct = (value: unknown): ActClaim | undefined =>
  value && typeof value === 'object' && typeof (value as ActClaim).sub === 'string' ? (value as ActClaim) : undefined;

/**
 * Who an actor token names. It must be an unexpired access token of this provider, issued to
 * a user (not a client), with the `openid` scope: a JWT verified against our keys, or an opaque
 * token looked up in the provider's store. An `act` it carries is nested (RFC 8693 §4.1).
 */
export function createActorIdentifier(provider: Provider, jwks: { keys: JWK[] }) {
  const keys = createLocalJWKSet(jwks);
  return async function identifyActor(token: string): Promise<ActClaim> {
    if (token.split('.').length === 3) {
      const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer, typ: 'at+jwt', requiredClaims: ['exp', 'sub'] });
      if (!hasOpenid(payload.scope) || payload.sub === payload.client_id) throw new TypeError('not a user\'s openid access token');
      const nested = asAct(payload.act);
      return { sub: payload.sub!, ...(nested && { act: nested }) };
    }
    const found = await provider.AccessToken.find(token);
    if (!found || found.isExpired || !found.accountId || !hasOpenid(found.scope)) throw new TypeError('not a live openid access token');
    const nested = asAct((found.extra as Record<string, unknown> | undefined)?.act);
    return { sub: found.accountId, ...(nested && { act: nested }) };
  };
}
