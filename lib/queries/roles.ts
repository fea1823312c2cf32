import type { Db } from 'mongodb';

import type { ApplicationRoleDocument, RoleDocument, RoleScopeDocument } from '../models.js';

/**
 * Roles, as far as token issuance needs them: which scopes an application holds through
 * its roles. (The roles API itself belongs to the Management API's role routes.)
 */
export function createRoleQueries(db: Db) {
  const roles = db.collection<RoleDocument>('roles');
  const rolesScopes = db.collection<RoleScopeDocument>('roles_scopes');
  const applicationsRoles = db.collection<ApplicationRoleDocument>('applications_roles');

  return {
    findById: (id: string) => roles.findOne({ _id: id }),
    findByName: (name: string) => roles.findOne({ name }),
    insert: async (role: RoleDocument) => { await roles.insertOne(role); return role; },

    /** Idempotent: a grant that exists already is left as it is. */
    async addScopes(roleId: string, scopeIds: string[]) {
      if (scopeIds.length === 0) return;
      await rolesScopes.bulkWrite(scopeIds.map((scopeId) => ({
        updateOne: {
          filter: { roleId, scopeId },
          update: { $setOnInsert: { _id: `${roleId}:${scopeId}`, roleId, scopeId } },
          upsert: true,
        },
      })));
    },

    /** Idempotent, as `addScopes`. */
    async assignToApplication(applicationId: string, roleId: string) {
      await applicationsRoles.updateOne(
        { applicationId, roleId },
        { $setOnInsert: { _id: `${applicationId}:${roleId}`, applicationId, roleId } },
        { upsert: true },
      );
    },

    /** The ids of every scope the application holds through its roles. */
    async scopeIdsForApplication(applicationId: string): Promise<Set<string>> {
      const roleIds = (await applicationsRoles.find({ applicationId }).toArray()).map(({ roleId }) => roleId);
      if (roleIds.length === 0) return new Set();
      const grants = await rolesScopes.find({ roleId: { $in: roleIds } }).toArray();
      return new Set(grants.map(({ scopeId }) => scopeId));
    },
  };
}

export type RoleQueries = ReturnType<typeof createRoleQueries>;
