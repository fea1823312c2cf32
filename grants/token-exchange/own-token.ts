import { errors, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { sha256 } from '../../lib/ids.js';
import { defaultAccessTokenTtl } from '../../provider/configure.js';
import type { OrganizationAccess } from '../../provider/organization-access.js';
import { organizationIdClaim } from '../../provider/organization-access.js';
import { tokenExchangeGrantType, type MintedToken, type RoleFacts } from '../../provider/token-types.js';
import { targetOf, type TargetDeps } from './target.js';
import type { UserToken } from './user-token.js';

export interface OwnTokenDeps extends TargetDeps {
  /** A user's roles with their permissions (from the caches). */
  rolesOf(userId: string): Promise<RoleFacts[]>;
  /** Who may get a token for an organization (`provider/organization-access.ts`). */
  organizations: Pick<OrganizationAccess, 'ofUser'>;
  /** What this grant tells `extraTokenClaims` about each token it mints. */
  minted: WeakMap<object, MintedToken>;
}

/** What the exchange's common checks found in the request. */
export interface OwnTokenRequest {
  subjectToken: string;
  requestedType: string;
  scope: string[];
  resource?: string;
  info?: ResourceServer;
  organizationId?: string;
}

const refused = (description: string) => new errors.InvalidRequest(description);

/**
 * Logto's access-token exchange: a user's own access token, issued to this client, traded for a
 * token of the same user for another API resource or an organization, with what the user's roles
 * give there now (as a sign-in for that resource would); and its personal access token exchange,
 * the same for a confidential client holding one of the user's personal access tokens. No one else is named: there is no
 * actor, and no impersonation is recorded. It never outlives the token it was exchanged for, so
 * that exchanging again and again cannot keep a signed-out user's authority alive.
 */
export async function exchangeOwnToken(ctx: KoaContextWithOIDC, deps: OwnTokenDeps, own: UserToken, request: OwnTokenRequest) {
  const provider = ctx.oidc.provider as Provider;
  const client = ctx.oidc.client!;
  const params = ctx.oidc.params as Record<string, unknown>;
  // RFC 8693 §1.1: with a subject token alone, the new token is the user's own (no delegation);
  // an actor goes with a subject token of `POST /api/subject-tokens` only.
  if (params.actor_token !== undefined) throw refused("actor_token is not accepted with a user's own access token");
  if (own.clientId === undefined) {
    // A personal access token is a long-lived secret: only a client that proves itself may spend it (Logto's rule too).
    if (client.clientAuthMethod === 'none') throw refused('a personal access token is exchanged by a confidential client only');
  } else if (own.clientId !== client.clientId) {
    // A token handed to a resource server must not become that server's key to the user's other APIs.
    throw refused('the subject token was issued to another client');
  }
  if (own.act) throw refused('the subject token names an actor: it represents someone else');
  // One reading of the clock for the limit and the token's own times: a token whose `iat` was taken
  // a second after `remaining` was would outlive the subject token by that second.
  const now = Math.floor(Date.now() / 1000);
  const remaining = own.expiresAt === undefined ? Infinity : own.expiresAt - now;
  if (remaining <= 0) throw refused('the subject token has expired');

  const { resource, info, organizationId } = request;
  const [roles, organizationRoles] = await Promise.all([
    deps.rolesOf(own.sub),
    organizationId === undefined ? undefined : deps.organizations.ofUser(organizationId, client.clientId, own.sub),
  ]);
  const target = await targetOf(provider, deps, { resource, info, organizationId, roles, organizationRoles });
  const scope = request.scope.filter((name) => target.grantable.has(name)).join(' ');
  const ttl = Math.min(target.ttl ?? defaultAccessTokenTtl, remaining);
  // What was left may have run out during the reads: no token that is expired when it is issued.
  if (now + ttl <= Math.floor(Date.now() / 1000)) throw refused('the subject token has expired');
  const token = new provider.AccessToken({
    accountId: own.sub,
    client,
    // No provider Grant is made for it; the token it was exchanged for names it.
    grantId: sha256(request.subjectToken),
    gty: tokenExchangeGrantType,
    ...(scope && { scope }),
    resourceServer: target.server(ttl),
    iat: now,
    exp: now + ttl,
  });
  deps.minted.set(token, {
    claims: { ...(resource && organizationId !== undefined && { [organizationIdClaim]: organizationId }) },
    facts: { type: tokenExchangeGrantType, roles },
  });
  ctx.oidc.entity('AccessToken', token);
  const value = await token.save();
  // What is left of its lifetime now (RFC 6749 §5.1), not its whole: it began when the request was read.
  ctx.body = { access_token: value, issued_token_type: request.requestedType, token_type: 'Bearer', expires_in: token.remainingTTL, scope };
}
