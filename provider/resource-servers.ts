import { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

import type { KeyedCache } from '../lib/store/cache.js';
import type { AccessTokenAlg } from '../lib/config.js';
import type { ResourceDocument, ScopeDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import { scopeIdsOf, type RoleLookup } from './role-facts.js';
import { organizationOf, organizationsResource, organizationTokenTtl } from './organization-access.js';
import { resourceScopeIdsOf, type OrganizationCaches } from './organization-facts.js';

export interface CachedResource {
  resource: ResourceDocument;
  scopes: ScopeDocument[];
}

export const loadResource =
  (queries: Queries) =>
  async (indicator: string): Promise<CachedResource | undefined> => {
    const resource = await queries.resources.findByIndicator(indicator);
    if (!resource) return undefined;
    return { resource, scopes: await queries.resources.scopes.findForResource(resource._id) };
  };

/** An application's role ids, for the `applicationRoles` cache; the roles' permissions come from the roles cache. */
export const loadApplicationRoleIds = (queries: Queries) => (applicationId: string) => queries.links.applicationsRoles.rightsOf(applicationId);

/** A user's role ids, for the `userRoles` cache. */
export const loadUserRoleIds = (queries: Queries) => (userId: string) => queries.links.usersRoles.rightsOf(userId);

type ResourceIndicators = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>;
type GetResourceServerInfo = NonNullable<ResourceIndicators['getResourceServerInfo']>;

/**
 * The permission ids a subject holds through its roles, from the per-process caches: an
 * application's (for `client_credentials`, and the Management API's own check) or a user's.
 */
export function createHeldPermissions({
  applicationRoleIds,
  userRoleIds,
  roles,
}: {
  applicationRoleIds: KeyedCache<string[]>;
  userRoleIds: KeyedCache<string[]>;
  roles: RoleLookup;
}) {
  const through = async (roleIds: string[] | undefined) => scopeIdsOf(await roles(roleIds ?? []));
  return {
    ofApplication: async (clientId: string) => through(await applicationRoleIds.get(clientId)),
    ofUser: async (userId: string) => through(await userRoleIds.get(userId)),
  };
}

export type HeldPermissions = ReturnType<typeof createHeldPermissions>;

/** The names of a resource's permissions among `held` (ids), so that a same-named permission elsewhere grants nothing. */
export const permissionNames = (scopes: ScopeDocument[], held: Set<string>) => scopes.filter(({ _id }) => held.has(_id)).map(({ name }) => name);

export interface ResourceServerDeps {
  resources: KeyedCache<CachedResource>;
  held: HeldPermissions;
  organizations: OrganizationCaches;
  /** The algorithm access tokens are signed with now (the current key set's, or the host's setting). */
  accessTokenAlg: () => AccessTokenAlg;
  /** Lifetime of a Management API token, in seconds. */
  managementApiTokenTtl: number;
  /** The host's own resolver, asked about indicators we do not know. */
  fallback?: GetResourceServerInfo;
}

/**
 * Whose permissions a token of this request may carry. The token endpoint names the account of
 * the code or refresh token it redeems (`ctx.oidc.account`, set before the resource is resolved);
 * the authorization endpoint, the account signed in to the session (after a login, the one the
 * interaction just signed in).
 */
function accountOf(ctx: KoaContextWithOIDC): string | undefined {
  return ctx.oidc.account?.accountId ?? ctx.oidc.session?.accountId ?? undefined;
}

/**
 * The permission ids this request's subject holds. For `client_credentials`, the application's;
 * for every other grant, the user's (an application's own roles count for nothing there). With
 * `organization_id` at the token endpoint, only what the subject's organization roles give in that
 * organization. At authorization (the consent), the user's organization roles in any organization
 * count too, so that the grant holds what organization-bound tokens may carry later; a token asked
 * for without `organization_id` carries only the user's own. No known subject holds nothing.
 */
async function heldBy({ held, organizations }: ResourceServerDeps, ctx: KoaContextWithOIDC, clientId: string): Promise<Set<string>> {
  const clientCredentials = ctx.oidc.params?.grant_type === 'client_credentials';
  const accountId = accountOf(ctx);
  const atToken = ctx.oidc.route === 'token';
  const organizationId = organizationOf(ctx);
  if (organizationId !== undefined) {
    const roles = clientCredentials
      ? await organizations.applicationRoles(organizationId, clientId)
      : accountId
        ? await organizations.userRoles(organizationId, accountId)
        : undefined;
    return resourceScopeIdsOf(roles ?? []);
  }
  if (clientCredentials) return held.ofApplication(clientId);
  if (!accountId) return new Set();
  const own = await held.ofUser(accountId);
  return atToken ? own : new Set([...own, ...(await organizations.userResourceScopeIds(accountId))]);
}

/**
 * oidc-provider's `getResourceServerInfo`: our API resources become resource servers issuing JWT
 * access tokens, and the scopes a resource server offers are only the permissions the token's
 * subject holds. oidc-provider grants at most `requested ∩ offered` at the token endpoint (for a
 * code and for every refresh, so that permissions removed since are dropped), and the consent
 * prompt asks only for what is offered. The Management API is for machine-to-machine
 * applications: any other grant asking for it is refused as `invalid_target`.
 */
export function createGetResourceServerInfo(deps: ResourceServerDeps): GetResourceServerInfo {
  const { resources, accessTokenAlg, fallback } = deps;
  return async (ctx, indicator, client) => {
    if (indicator === organizationsResource) {
      // Logto's reserved resource: every organization permission may be consented to; a token gets
      // them only for one organization (`organization_id`, `grants/organization-tokens.ts`), so at
      // the token endpoint it offers none.
      return {
        scope: ctx.oidc.route === 'token' ? '' : (await deps.organizations.allScopeNames()).join(' '),
        audience: organizationsResource,
        accessTokenTTL: organizationTokenTtl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: accessTokenAlg() } },
      };
    }
    const found = await resources.get(indicator);
    if (!found) {
      if (fallback) return fallback(ctx, indicator, client);
      throw new errors.InvalidTarget();
    }
    const managementApi = found.resource.isBuiltIn === true;
    if (managementApi && ctx.oidc.params?.grant_type !== 'client_credentials') {
      throw new errors.InvalidTarget('the Management API is only for machine-to-machine applications (client_credentials)');
    }
    return {
      scope: permissionNames(found.scopes, await heldBy(deps, ctx, client.clientId)).join(' '),
      audience: found.resource.indicator,
      accessTokenTTL: managementApi ? deps.managementApiTokenTtl : found.resource.accessTokenTtl,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: accessTokenAlg() } },
    };
  };
}
