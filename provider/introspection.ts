import { jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';

export interface JwtIntrospectionDeps {
  /** The provider's public keys, as they are now (rotation included). */
  getKey: JWTVerifyGetKey;
  issuer(): string;
  /** Whether this impersonation was ended by the kill switch. */
  revoked(impersonationId: string): Promise<boolean>;
}

/**
 * Token introspection (RFC 7662) for our JWT access tokens. oidc-provider's endpoint refuses a JWT
 * (`unsupported_token_type`): it keeps no record of one. After its client authentication has run,
 * this answers such a token itself: `active` when it is our access token (signature, issuer,
 * `at+jwt`, not expired) and, for one minted from a subject token, its impersonation has not been
 * revoked (`POST /api/impersonations/:id/revoke`); else `{active: false}` (§2.2). A public client
 * learns about its own tokens only, as oidc-provider's default policy has it.
 */
export function jwtIntrospection(deps: JwtIntrospectionDeps) {
  return async function introspectJwt(ctx: KoaContextWithOIDC, next: () => Promise<void>) {
    await next();
    if (ctx.oidc?.route !== 'introspection' || ctx.status !== 400) return;
    const refused = ctx.body as { error?: string } | undefined;
    const client = ctx.oidc.client;
    const token = ctx.oidc.params?.token;
    if (refused?.error !== 'unsupported_token_type' || !client || typeof token !== 'string') return;
    ctx.status = 200;
    ctx.body = { active: false };
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, deps.getKey, { issuer: deps.issuer(), typ: 'at+jwt', requiredClaims: ['exp', 'sub', 'client_id'] }));
    } catch {
      return;
    }
    if (client.clientAuthMethod === 'none' && payload.client_id !== client.clientId) return;
    const impersonationId = payload.impersonation_id;
    if (typeof impersonationId === 'string' && (await deps.revoked(impersonationId))) return;
    const { sub, client_id, exp, iat, iss, jti, aud, scope, act } = payload;
    ctx.body = {
      active: true,
      sub,
      client_id,
      exp,
      iat,
      iss,
      jti,
      aud,
      ...(typeof scope === 'string' && scope !== '' && { scope }),
      token_type: 'Bearer',
      ...(act !== undefined && { act }),
      ...(typeof impersonationId === 'string' && { impersonation_id: impersonationId }),
    };
  };
}
