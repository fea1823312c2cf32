import { errors, type Configuration } from 'oidc-provider';

import type { KeyedCache } from './cache.js';
import type { AccessTokenAlg } from './config.js';
import type { ResourceDocument, ScopeDocument } from './models.js';
import type { Queries } from './queries/index.js';
import { scopeIdsOf, type RoleLookup } from './role-facts.js';

export interface CachedResource {
  resource: ResourceDocument;
  scopes: ScopeDocument[];
}

export const loadResource = (queries: Queries) => async (indicator: string): Promise<CachedResource | undefined> => {
  const resource = await queries.resources.findByIndicator(indicator);
  if (!resource) return undefined;
  return { resource, scopes: await queries.resources.scopes.findForResource(resource._id) };
};

/** An application's role ids, for the `applicationRoles` cache; the roles' permissions come from the roles cache. */
export const loadApplicationRoleIds = (queries: Queries) => (applicationId: string) =>
  queries.links.applicationsRoles.rightsOf(applicationId);

type ResourceIndicators = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>;
type GetResourceServerInfo = NonNullable<ResourceIndicators['getResourceServerInfo']>;

export interface ResourceServerDeps {
  resources: KeyedCache<CachedResource>;
  applicationRoleIds: KeyedCache<string[]>;
  roles: RoleLookup;
  accessTokenAlg: AccessTokenAlg;
  /** The host's own resolver, asked about indicators we do not know. */
  fallback?: GetResourceServerInfo;
}

/**
 * oidc-provider's `getResourceServerInfo`: our API resources become resource servers
 * issuing JWT access tokens. A machine-to-machine token gets only the permissions the
 * application holds through its roles.
 */
export function createGetResourceServerInfo({ resources, applicationRoleIds, roles, accessTokenAlg, fallback }: ResourceServerDeps): GetResourceServerInfo {
  return async (ctx, indicator, client) => {
    const found = await resources.get(indicator);
    if (!found) {
      if (fallback) return fallback(ctx, indicator, client);
      throw new errors.InvalidTarget();
    }
    let { scopes } = found;
    if (ctx.oidc.params?.grant_type === 'client_credentials') {
      const held = scopeIdsOf(await roles((await applicationRoleIds.get(client.clientId)) ?? []));
      scopes = scopes.filter(({ _id }) => held.has(_id));
    }
    return {
      scope: scopes.map(({ name }) => name).join(' '),
      audience: found.resource.indicator,
      accessTokenTTL: found.resource.accessTokenTtl,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: accessTokenAlg } },
    };
  };
}
