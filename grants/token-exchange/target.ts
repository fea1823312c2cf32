import type { ResourceServer, ResourceServerInstance } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { permissionNames } from '../../provider/resource-servers.js';
import type { ScopeDocument } from '../../lib/store/models.js';
import { scopeIdsOf } from '../../provider/role-facts.js';
import type { RoleFacts } from '../../provider/token-types.js';
import { organizationTokenTtl } from '../../provider/organization-access.js';
import { organizationScopeNamesOf, resourceScopeIdsOf, type OrganizationRoleFacts } from '../../provider/organization-facts.js';

/** Scopes about the user's own identity, granted when asked for, beside the resource's permissions. */
const identityScopes = ['openid', 'profile', 'email', 'phone', 'address'];

export interface TargetDeps {
  /** The permissions of an API resource we serve (from the resources cache). */
  resourceScopes(indicator: string): Promise<ScopeDocument[]>;
  /** The resource server of an organization token, carrying these organization permissions. */
  organizationServer(organizationId: string, available: Set<string>, ttl: number): ResourceServerInstance;
}

/** Where an exchanged token is bound, and what the user's roles let it carry there. */
export interface Target {
  /** The scopes the user's roles give there (a resource's by id, plus the identity scopes; an organization's own). */
  grantable: Set<string>;
  /** The lifetime the resource or organization sets, in seconds (undefined: the provider's default). */
  ttl: number | undefined;
  /** The token's resource server, for a lifetime no longer than `ttl`. */
  server(ttl: number): ResourceServerInstance;
}

/**
 * An API resource (`resource`, with its `info`), within an organization when `organizationRoles`
 * are given; or an organization's own token (no resource). By permission id, not name: a
 * permission of the same name on another resource grants nothing here.
 */
export async function targetOf(
  provider: Provider,
  deps: TargetDeps,
  target: { resource?: string; info?: ResourceServer; organizationId?: string; roles: RoleFacts[]; organizationRoles?: OrganizationRoleFacts[] },
): Promise<Target> {
  const { resource, info, organizationId, roles, organizationRoles } = target;
  if (resource) {
    const held = organizationRoles ? resourceScopeIdsOf(organizationRoles) : scopeIdsOf(roles);
    const grantable = new Set([...identityScopes, ...permissionNames(await deps.resourceScopes(resource), held)]);
    return {
      grantable,
      ttl: info!.accessTokenTTL,
      server: (seconds) => new provider.ResourceServer(resource, { ...info!, accessTokenTTL: seconds }),
    };
  }
  const available = organizationScopeNamesOf(organizationRoles!);
  return { grantable: available, ttl: organizationTokenTtl, server: (seconds) => deps.organizationServer(organizationId!, available, seconds) };
}
