import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import type { AccessTokenAlg } from '../lib/config.js';
import { builtInGrant } from '../provider/internals.js';
import {
  organizationAudience,
  organizationIdClaim,
  organizationOf,
  organizationTokenTtl,
  requestedOrganization,
  wantsOrganizationToken,
  type OrganizationAccess,
} from '../provider/organization-access.js';
import { organizationScopeNamesOf } from '../provider/organization-facts.js';

/** The resource server of an organization token: its audience the organization, offering the organization permissions `available`. */
export const organizationResourceServer = (
  provider: Provider,
  accessTokenAlg: () => AccessTokenAlg,
  organizationId: string,
  available: Set<string>,
  ttl: number,
) =>
  new provider.ResourceServer(organizationAudience(organizationId), {
    audience: organizationAudience(organizationId),
    scope: [...available].join(' '),
    accessTokenTTL: ttl,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: accessTokenAlg() } },
  });

/** The request parameter that names the organization (Logto's RFC 0001 and 0006). */
export const organizationParameter = 'organization_id';

/** The claims an access token for an API resource gets when asked for with `organization_id`: the organization it is for. */
export function organizationTokenClaims(ctx: KoaContextWithOIDC, token: { kind?: string; resourceServer?: unknown }): Record<string, unknown> {
  // Named by the request, or the grant's (an authorization request that named it).
  const organizationId = organizationOf(ctx);
  if (organizationId === undefined || !token.resourceServer) return {};
  if (token.kind !== 'AccessToken' && token.kind !== 'ClientCredentials') return {};
  // An organization token names its organization in `aud`; a resource's token names it here.
  if (wantsOrganizationToken(ctx)) return {};
  return { [organizationIdClaim]: organizationId };
}

/**
 * Logto's organization tokens on oidc-provider's own `refresh_token` and `client_credentials`
 * grants: with `organization_id` and no `resource`, the access token is for the organization
 * (`aud` `urn:logto:organization:<id>`) and carries the organization permissions the subject's
 * roles give there, as far as they were asked for (the refresh token's scopes, or `scope`); with
 * `resource` too, the resource's permissions narrow to those roles (`resource-servers.ts`) and the
 * token names the organization (`organization_id`). Everything else is the built-in grant's.
 */
export function registerOrganizationGrants(provider: Provider, access: OrganizationAccess, accessTokenAlg: () => AccessTokenAlg) {
  const organizationServer = (organizationId: string, available: Set<string>) =>
    organizationResourceServer(provider, accessTokenAlg, organizationId, available, organizationTokenTtl);

  const refresh = builtInGrant(provider, 'refresh_token', (own) => ({
    async applyAuthorizationDetails(ctx, token, source) {
      const organizationId = requestedOrganization(ctx);
      if (organizationId !== undefined && wantsOrganizationToken(ctx)) {
        // Access was checked (findAccount) before the refresh token was spent; only the roles are read here, from the cache.
        const roles = await access.userRoles(organizationId, ctx.oidc.account!.accountId);
        const asked = ctx.oidc.params?.scope ? ctx.oidc.requestParamScopes : (ctx.oidc.entities.RefreshToken as { scopes: Set<string> }).scopes;
        const available = organizationScopeNamesOf(roles);
        token.claims = undefined;
        token.resourceServer = organizationServer(organizationId, available);
        token.scope = [...asked].filter((scope) => available.has(scope)).join(' ');
      }
      return own.applyAuthorizationDetails(ctx, token, source);
    },
  }));
  provider.registerGrantType('refresh_token', refresh.handler, [...refresh.parameters, organizationParameter], refresh.duplicates);

  const clientCredentials = builtInGrant(provider, 'client_credentials', (own) => ({
    async resolveRequestedResources(ctx) {
      const organizationId = requestedOrganization(ctx);
      if (organizationId === undefined) return own.resolveRequestedResources(ctx);
      // Logto's refusal first: an application that is not a member gets nothing for the organization.
      const roles = await access.ofApplication(organizationId, ctx.oidc.client!.clientId);
      if (!wantsOrganizationToken(ctx)) return own.resolveRequestedResources(ctx);
      return [organizationServer(organizationId, organizationScopeNamesOf(roles))];
    },
  }));
  provider.registerGrantType(
    'client_credentials',
    clientCredentials.handler,
    [...clientCredentials.parameters, organizationParameter],
    clientCredentials.duplicates,
  );
}
