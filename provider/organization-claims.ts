import type { Queries } from '../lib/store/queries/index.js';

/** Logto's reserved scopes for a user's organizations (its `UserScope.Organizations` and `OrganizationRoles`). */
export const organizationsScope = 'urn:logto:scope:organizations';
export const organizationRolesScope = 'urn:logto:scope:organization_roles';

/** The claims each of them releases, as Logto's: the organizations (ids, and `{id, name, description}`), and the roles there as `<organizationId>:<roleName>`. */
export const organizationClaimsByScope = {
  [organizationsScope]: ['organizations', 'organization_data'],
  [organizationRolesScope]: ['organization_roles'],
} as const;

/**
 * A user's organization claims for the scopes granted (`scope`, space-separated), read from the
 * store at each issuance, so that a membership or role taken away is gone from the next token or
 * UserInfo answer. Nothing is read when neither scope was granted.
 */
export async function organizationClaims(queries: Queries, userId: string, scope: string): Promise<Record<string, unknown>> {
  const granted = new Set(scope.split(' '));
  const organizations = granted.has(organizationsScope);
  const roles = granted.has(organizationRolesScope);
  if (!organizations && !roles) return {};
  // One after the other: the store's queries may share a unit's session.
  const organizationIds = (await queries.links.organizationUsers.leftsOf(userId)).sort();
  const claims: Record<string, unknown> = {};
  if (organizations) {
    const found = new Map((await queries.organizations.findByIds(organizationIds)).map((organization) => [organization._id, organization]));
    const live = organizationIds.filter((id) => found.has(id));
    claims.organizations = live;
    claims.organization_data = live.map((id) => {
      const { name, description } = found.get(id)!;
      return { id, name, description: description ?? null };
    });
  }
  if (roles) {
    const held = await queries.organizationUserRoles.heldBy(userId);
    const roleIds = [...new Set(organizationIds.flatMap((id) => held.get(id) ?? []))];
    const names = new Map((await queries.organizationRoles.findByIds(roleIds)).map((role) => [role._id, role.name]));
    claims.organization_roles = organizationIds.flatMap((id) =>
      (held.get(id) ?? [])
        .filter((roleId) => names.has(roleId))
        .map((roleId) => `${id}:${names.get(roleId)!}`)
        .sort(),
    );
  }
  return claims;
}
