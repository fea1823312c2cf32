import type { KeyedCache } from '../lib/store/cache.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { RoleFacts } from './token-types.js';

/**
 * Loads a role as tokens need it, for the `roles` cache: its name and type (custom claims show
 * them) and its permissions (token exchange grants them). Changing a role or its permissions
 * clears the cache. A deleted permission may linger in a cached role until then, which grants
 * nothing: a token gets only permissions its resource still has.
 */
export function loadRoleFacts(queries: Queries) {
  return async (roleId: string): Promise<RoleFacts | undefined> => {
    const [role, scopeIds] = await Promise.all([queries.roles.findById(roleId), queries.links.rolesScopes.rightsOf(roleId)]);
    return role ? { id: role._id, name: role.name, type: role.type, scopeIds } : undefined;
  };
}

/** Roles by id, from the cache; ids of deleted roles are left out. */
export type RoleLookup = (ids: string[]) => Promise<RoleFacts[]>;

export function createRoleLookup(cache: KeyedCache<RoleFacts>): RoleLookup {
  return async (ids) => (await Promise.all(ids.map((id) => cache.get(id)))).filter((role): role is RoleFacts => role !== undefined);
}

/** The permission ids that these roles grant together. */
export const scopeIdsOf = (roles: RoleFacts[]) => new Set(roles.flatMap(({ scopeIds }) => scopeIds));
