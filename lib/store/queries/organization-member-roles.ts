import type { Db } from 'mongodb';

import { inUnit } from '../session.js';

/** The organizations' members of each kind: where their role assignments live, and the field naming the member. */
export const memberKinds = {
  user: { collection: 'organization_user_roles', field: 'userId' },
  application: { collection: 'organization_application_roles', field: 'applicationId' },
} as const;

type MemberRoleDocument = { _id: string; organizationId: string; organizationRoleId: string } & Record<string, string>;

/**
 * Which organization roles a member holds in one organization: a three-way relation, one for
 * users and one for machine-to-machine applications.
 */
export function createOrganizationMemberRoleQueries(db: Db, kind: keyof typeof memberKinds) {
  const { collection: name, field } = memberKinds[kind];
  const collection = db.collection<MemberRoleDocument>(name);
  const idOf = (organizationId: string, memberId: string, roleId: string) => `${organizationId}:${memberId}:${roleId}`;

  const queries = {
    async rolesOf(organizationId: string, memberId: string) {
      return (await collection.find({ organizationId, [field]: memberId }, inUnit()).toArray()).map(({ organizationRoleId }) => organizationRoleId);
    },

    /** The organization roles a user holds, by organization, in one query. */
    async heldBy(memberId: string): Promise<Map<string, string[]>> {
      const held = new Map<string, string[]>();
      for (const { organizationId, organizationRoleId } of await collection.find({ [field]: memberId }).toArray()) {
        held.set(organizationId, [...(held.get(organizationId) ?? []), organizationRoleId]);
      }
      return held;
    },

    async add(organizationId: string, memberId: string, roleIds: string[]) {
      const existing = new Set(await queries.rolesOf(organizationId, memberId));
      const added = [...new Set(roleIds)].filter((id) => !existing.has(id));
      if (added.length > 0) {
        await collection.bulkWrite(
          added.map((organizationRoleId) => ({
            updateOne: {
              filter: { _id: idOf(organizationId, memberId, organizationRoleId) },
              update: { $setOnInsert: { organizationId, [field]: memberId, organizationRoleId } },
              upsert: true,
            },
          })),
          inUnit(),
        );
      }
      return added;
    },

    async replace(organizationId: string, memberId: string, roleIds: string[]) {
      const wanted = new Set(roleIds);
      const removed = (await queries.rolesOf(organizationId, memberId)).filter((id) => !wanted.has(id));
      if (removed.length > 0) await collection.deleteMany({ organizationId, [field]: memberId, organizationRoleId: { $in: removed } }, inUnit());
      return { added: await queries.add(organizationId, memberId, [...wanted]), removed };
    },

    async remove(organizationId: string, memberId: string, roleId: string) {
      const { deletedCount } = await collection.deleteOne({ _id: idOf(organizationId, memberId, roleId) }, inUnit());
      return deletedCount === 1;
    },

    removeMembership: (organizationId: string, memberIds: string[]) => collection.deleteMany({ organizationId, [field]: { $in: memberIds } }, inUnit()),
    removeAllOfOrganization: (organizationId: string) => collection.deleteMany({ organizationId }, inUnit()),
    removeAllOfMember: (memberId: string) => collection.deleteMany({ [field]: memberId }, inUnit()),
    removeAllOfRole: (organizationRoleId: string) => collection.deleteMany({ organizationRoleId }, inUnit()),
  };
  return queries;
}
