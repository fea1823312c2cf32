import type { OrganizationCaches, OrganizationFacts } from './organization-facts.js';

/** Logto's reserved scopes for a user's organizations (its `UserScope.Organizations` and `OrganizationRoles`). */
export const organizationsScope = 'urn:logto:scope:organizations';
export const organizationRolesScope = 'urn:logto:scope:organization_roles';

/** The claims each of them releases, as Logto's: the organizations (ids, and `{id, name, description}`), and the roles there as `<organizationId>:<roleName>`. */
export const organizationClaimsByScope = {
  [organizationsScope]: ['organizations', 'organization_data'],
  [organizationRolesScope]: ['organization_roles'],
} as const;

/**
 * A user's organization claims for the scopes granted (`scope`, space-separated), read at each
 * issuance from the per-process caches that the recorded changes clear, so that a membership or
 * role taken away is gone from the next token or UserInfo answer. Nothing is read when neither
 * scope was granted.
 */
export async function organizationClaims(organizations: OrganizationCaches, userId: string, scope: string): Promise<Record<string, unknown>> {
  const granted = new Set(scope.split(' '));
  const wantsOrganizations = granted.has(organizationsScope);
  const wantsRoles = granted.has(organizationRolesScope);
  if (!wantsOrganizations && !wantsRoles) return {};
  const memberships = await organizations.userMemberships(userId);
  const found = (await Promise.all([...memberships.keys()].map((id) => organizations.organization(id)))).filter(
    (organization): organization is OrganizationFacts => organization !== undefined,
  );
  const live = found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const claims: Record<string, unknown> = {};
  if (wantsOrganizations) {
    claims.organizations = live.map(({ id }) => id);
    claims.organization_data = live.map(({ id, name, description }) => ({ id, name, description }));
  }
  if (wantsRoles) {
    const roleNames = async (id: string) => (await organizations.rolesOf(memberships.get(id) ?? [])).map(({ name }) => `${id}:${name}`).sort();
    claims.organization_roles = (await Promise.all(live.map(({ id }) => roleNames(id)))).flat();
  }
  return claims;
}
