import type { Db } from 'mongodb';

import type { OrganizationUserRoleDocument } from '../models.js';
import { inUnit } from '../session.js';

/** Which organization roles a member holds in one organization: a three-way relation. */
export function createOrganizationUserRoleQueries(db: Db) {
  const collection = db.collection<OrganizationUserRoleDocument>('organization_user_roles');
  const idOf = (organizationId: string, userId: string, roleId: string) => `${organizationId}:${userId}:${roleId}`;

  const queries = {
    async rolesOf(organizationId: string, userId: string) {
      return (await collection.find({ organizationId, userId }, inUnit()).toArray()).map(({ organizationRoleId }) => organizationRoleId);
    },

    /** The organization roles a user holds, by organization, in one query. */
    async heldBy(userId: string): Promise<Map<string, string[]>> {
      const held = new Map<string, string[]>();
      for (const { organizationId, organizationRoleId } of await collection.find({ userId }).toArray()) {
        held.set(organizationId, [...(held.get(organizationId) ?? []), organizationRoleId]);
      }
      return held;
    },

    async add(organizationId: string, userId: string, roleIds: string[]) {
      const existing = new Set(await queries.rolesOf(organizationId, userId));
      const added = [...new Set(roleIds)].filter((id) => !existing.has(id));
      if (added.length > 0) {
        await collection.bulkWrite(
          added.map((organizationRoleId) => ({
            updateOne: {
              filter: { _id: idOf(organizationId, userId, organizationRoleId) },
              update: { $setOnInsert: { organizationId, userId, organizationRoleId } },
              upsert: true,
            },
          })),
          inUnit(),
        );
      }
      return added;
    },

    async replace(organizationId: string, userId: string, roleIds: string[]) {
      const wanted = new Set(roleIds);
      const removed = (await queries.rolesOf(organizationId, userId)).filter((id) => !wanted.has(id));
      if (removed.length > 0) await collection.deleteMany({ organizationId, userId, organizationRoleId: { $in: removed } }, inUnit());
      return { added: await queries.add(organizationId, userId, [...wanted]), removed };
    },

    async remove(organizationId: string, userId: string, roleId: string) {
      const { deletedCount } = await collection.deleteOne({ _id: idOf(organizationId, userId, roleId) }, inUnit());
      return deletedCount === 1;
    },

    removeMembership: (organizationId: string, userIds: string[]) => collection.deleteMany({ organizationId, userId: { $in: userIds } }, inUnit()),
    removeAllOfOrganization: (organizationId: string) => collection.deleteMany({ organizationId }, inUnit()),
    removeAllOfUser: (userId: string) => collection.deleteMany({ userId }, inUnit()),
    removeAllOfRole: (organizationRoleId: string) => collection.deleteMany({ organizationRoleId }, inUnit()),
  };
  return queries;
}
