/** RFC 8693 identifiers. */
export const tokenExchangeGrantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
/** RFC 8693 §3: a JWT; our access tokens are JWTs too. */
export const jwtTokenType = 'urn:ietf:params:oauth:token-type:jwt';
/** Logto's name for a subject token of its `POST /api/subject-tokens` (beside `accessTokenType`, which it accepted first). */
export const impersonationTokenType = 'urn:logto:token-type:impersonation_token';
/** Logto's name for a personal access token (`POST /api/users/:userId/personal-access-tokens`) as a subject token. */
export const personalAccessTokenType = 'urn:logto:token-type:personal_access_token';

import type { UserDocument } from '../lib/store/models.js';

/** RFC 8693 §4.1: who acts, and, nested, on whose behalf that actor acted. */
export interface ActClaim {
  sub: string;
  act?: ActClaim;
}

/** What a grant knows about a token it mints: its grant type, the subject token's context, the user it loaded. */
export interface GrantFacts {
  type: string;
  subjectTokenContext?: Record<string, unknown>;
  user?: UserDocument;
  /** The user's roles, when the grant loaded them. */
  roles?: RoleFacts[];
}

/** A role as tokens need it: cached per process, forgotten when the role or its permissions change. */
export interface RoleFacts {
  id: string;
  name: string;
  type: string;
  scopeIds: string[];
}

/**
 * Handed from a grant to `extraTokenClaims` through the token object itself (a WeakMap
 * keyed by the token): the claims the grant sets, and the facts custom claims read.
 */
export interface MintedToken {
  claims: Record<string, unknown>;
  facts: GrantFacts;
}
