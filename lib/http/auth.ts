import type { Middleware } from 'koa';
import { errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

import { ApiError } from '../errors.js';

export interface ApiAuth {
  /** The client the token was issued to. */
  clientId: string;
  /** The token's scopes that the application still holds. */
  scopes: Set<string>;
  /** A person acting through the console (its own session, not a token): the change records name them. */
  userId?: string;
}

export interface BearerAuthOptions {
  issuer: string;
  audience: string;
  /** The provider's public keys as they are now (they change with a rotation). */
  getKey: JWTVerifyGetKey;
  /** The signing algorithms the provider uses. */
  algorithms: string[];
  /** Scopes any one of which admits the request. */
  acceptedScopes: string[];
  /**
   * The Management API scopes an application holds now (through its roles, from the per-process
   * caches), or undefined when it no longer exists: a token is worth only what its application
   * still holds.
   */
  heldScopes(clientId: string): Promise<Set<string> | undefined>;
}

const invalidToken = (message: string) => new ApiError('auth.invalid_token', message);

function describeVerifyError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'the access token has expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `the access token's \`${error.claim}\` claim is not accepted here`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed || error instanceof joseErrors.JWKSNoMatchingKey) {
    return 'the access token was not signed by this provider';
  }
  return 'the access token is malformed';
}

/**
 * Requires `Authorization: Bearer <JWT>` issued by this provider for the Management API,
 * verified locally against the provider's own keys: signature, issuer, audience, expiry,
 * and the RFC 9068 `at+jwt` type, so that an ID token cannot pass for an access token.
 * Only a machine-to-machine token is accepted (RFC 9068 §2.2: a `client_credentials` token's
 * `sub` is its `client_id`), of an application that still exists, and only for the scopes that
 * application still holds.
 */
export function bearerAuth({ issuer, audience, getKey, algorithms, acceptedScopes, heldScopes }: BearerAuthOptions): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) throw new ApiError('auth.authorization_header_missing', 'the Authorization header is missing');
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    if (!match) throw invalidToken('the Authorization header must be `Bearer <access token>`');

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(match[1], getKey, { issuer, audience, algorithms, typ: 'at+jwt', requiredClaims: ['exp'] }));
    } catch (error) {
      throw invalidToken(describeVerifyError(error));
    }

    const clientId = typeof payload.client_id === 'string' ? payload.client_id : undefined;
    if (!clientId || payload.sub !== clientId) {
      throw new ApiError('auth.forbidden', 'the Management API accepts only machine-to-machine (client_credentials) tokens');
    }
    const held = await heldScopes(clientId);
    if (!held) throw invalidToken("the access token's application no longer exists");
    const scopes = new Set((typeof payload.scope === 'string' ? payload.scope.split(' ') : []).filter((scope) => held.has(scope)));
    if (!acceptedScopes.some((scope) => scopes.has(scope))) {
      throw new ApiError('auth.forbidden', `the access token lacks the required scope (${acceptedScopes.join(' or ')})`);
    }
    ctx.state.auth = { clientId, scopes };
    await next();
  };
}
