import type { Queries } from './queries/index.js';
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
