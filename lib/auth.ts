import type { Middleware } from 'koa';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK, type JWTPayload } from 'jose';

import { ApiError } from './errors.js';

export interface ApiAuth {
  /** The client the token was issued to. */
  clientId: string;
  /** The token's subject: the client itself for client_credentials, a user otherwise. */
  subject: string | undefined;
  scopes: Set<string>;
}

declare module 'koa' {
  interface DefaultState {
    auth?: ApiAuth;
  }
}

export interface BearerAuthOptions {
  issuer: string;
  audience: string;
  jwks: { keys: JWK[] };
  /** Scopes any one of which admits the request. */
  acceptedScopes: string[];
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
 */
export function bearerAuth({ issuer, audience, jwks, acceptedScopes }: BearerAuthOptions): Middleware {
  const keySet = createLocalJWKSet(jwks);
  const algorithms = [...new Set(jwks.keys.map(({ alg }) => alg).filter((alg): alg is string => typeof alg === 'string'))];

  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) throw new ApiError('auth.authorization_header_missing', 'the Authorization header is missing');
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    if (!match) throw invalidToken('the Authorization header must be `Bearer <access token>`');

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(match[1]!, keySet, { issuer, audience, algorithms, typ: 'at+jwt', requiredClaims: ['exp'] }));
    } catch (error) {
      throw invalidToken(describeVerifyError(error));
    }

    const scopes = new Set(typeof payload.scope === 'string' ? payload.scope.split(' ') : []);
    if (!acceptedScopes.some((scope) => scopes.has(scope))) {
      throw new ApiError('auth.forbidden', `the access token lacks the required scope (${acceptedScopes.join(' or ')})`);
    }
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : '';
    ctx.state.auth = { clientId, subject: payload.sub, scopes };
    await next();
  };
}
