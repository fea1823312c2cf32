import type { CacheRegistry } from '../lib/store/cache.js';
import type { Queries } from '../lib/store/queries/index.js';

/** An organization as tokens need it. */
export interface OrganizationFacts {
  id: string;
  name: string;
  description: string | null;
  isMfaRequired: boolean;
}

/** An organization role as tokens need it: the organization permissions' names and the API permissions' ids it gives. */
export interface OrganizationRoleFacts {
  id: string;
  name: string;
  type: 'User' | 'MachineToMachine';
  scopeNames: string[];
  resourceScopeIds: string[];
}

/** Where a user or an application is a member: each organization's id, with the organization roles held there. */
export type Memberships = ReadonlyMap<string, readonly string[]>;

/**
 * The organization facts every organization token reads, cached per process and cleared by the
 * changes that make them stale (`stale-caches.ts`): organizations, their roles, who is a member
 * with which roles, and the names of all organization permissions.
 */
export function createOrganizationCaches(registry: CacheRegistry, queries: Queries) {
  const organizations = registry.create<OrganizationFacts>('organizations', async (id) => {
    const organization = await queries.organizations.findById(id);
    return organization
      ? { id, name: organization.name, description: organization.description ?? null, isMfaRequired: organization.isMfaRequired === true }
      : undefined;
  });
  const roles = registry.create<OrganizationRoleFacts>('organizationRoles', async (id) => {
    const role = await queries.organizationRoles.findById(id);
    if (!role) return undefined;
    const scopeIds = await queries.links.organizationRoleScopes.rightsOf(id);
    const scopeNames = (await queries.organizationScopes.findByIds(scopeIds)).map(({ name }) => name);
    const resourceScopeIds = await queries.links.organizationRoleResourceScopes.rightsOf(id);
    return { id, name: role.name, type: role.type ?? 'User', scopeNames, resourceScopeIds };
  });
  // A user's memberships: never a miss (no membership is an empty map), so a non-member is cached too.
  const userMemberships = registry.create<Memberships>('organizationMemberships', async (userId) => {
    const organizationIds = await queries.links.organizationUsers.leftsOf(userId);
    const held = await queries.organizationUserRoles.heldBy(userId);
    return new Map(organizationIds.map((id) => [id, held.get(id) ?? []]));
  });
  const applicationMemberships = registry.create<Memberships>('organizationApplications', async (applicationId) => {
    const organizationIds = await queries.links.organizationApplications.leftsOf(applicationId);
    const held = await queries.organizationApplicationRoles.heldBy(applicationId);
    return new Map(organizationIds.map((id) => [id, held.get(id) ?? []]));
  });
  const scopeNames = registry.create<string[]>('organizationScopes', async () => (await queries.organizationScopes.find({})).map(({ name }) => name), {
    keepMisses: true,
  });

  /** The organization roles by id, those deleted left out. */
  const rolesOf = async (ids: readonly string[]) =>
    (await Promise.all(ids.map((id) => roles.get(id)))).filter((role): role is OrganizationRoleFacts => role !== undefined);

  return {
    organization: (id: string) => organizations.get(id),
    /** A user's memberships: each organization's id with the role ids held there. */
    userMemberships: async (userId: string): Promise<Memberships> => (await userMemberships.get(userId)) ?? new Map(),
    rolesOf,
    /** The roles a user holds in an organization, or undefined when the user is not a member. */
    async userRoles(organizationId: string, userId: string): Promise<OrganizationRoleFacts[] | undefined> {
      const held = (await userMemberships.get(userId))?.get(organizationId);
      return held && rolesOf(held);
    },
    /** The same for a machine-to-machine application. */
    async applicationRoles(organizationId: string, applicationId: string): Promise<OrganizationRoleFacts[] | undefined> {
      const held = (await applicationMemberships.get(applicationId))?.get(organizationId);
      return held && rolesOf(held);
    },
    /** The API permissions' ids a user holds through organization roles, in any organization. */
    async userResourceScopeIds(userId: string): Promise<Set<string>> {
      const memberships = await userMemberships.get(userId);
      return resourceScopeIdsOf(await rolesOf([...new Set([...(memberships?.values() ?? [])].flat())]));
    },
    /** The names of every organization permission there is (what the reserved organizations resource offers). */
    allScopeNames: async () => (await scopeNames.get('all')) ?? [],
  };
}

export type OrganizationCaches = ReturnType<typeof createOrganizationCaches>;

/** The organization permissions' names these roles give together. */
export const organizationScopeNamesOf = (roles: readonly OrganizationRoleFacts[]) => new Set(roles.flatMap(({ scopeNames }) => scopeNames));

/** The API permissions' ids these roles give together. */
export const resourceScopeIdsOf = (roles: readonly OrganizationRoleFacts[]) => new Set(roles.flatMap(({ resourceScopeIds }) => resourceScopeIds));
