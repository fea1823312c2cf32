import type { Db } from 'mongodb';

import { inUnit } from '../session.js';

interface ConsentDocument {
  _id: string;
  applicationId: string;
  userId: string;
  organizationId: string;
}

/**
 * The organizations a user let a third-party application act in (Logto's
 * `application_user_consent_organizations`): one document per application, user and organization.
 */
export function createConsentOrganizationQueries(db: Db) {
  const collection = db.collection<ConsentDocument>('application_user_consent_organizations');
  const idOf = (applicationId: string, userId: string, organizationId: string) => `${applicationId}:${userId}:${organizationId}`;

  const queries = {
    async has(applicationId: string, userId: string, organizationId: string) {
      return (await collection.countDocuments({ _id: idOf(applicationId, userId, organizationId) }, { limit: 1, ...inUnit() })) > 0;
    },
    async organizationsOf(applicationId: string, userId: string) {
      return (await collection.find({ applicationId, userId }, inUnit()).toArray()).map(({ organizationId }) => organizationId);
    },
    /** Adds these organizations; answers those not there before. */
    async add(applicationId: string, userId: string, organizationIds: string[]) {
      const existing = new Set(await queries.organizationsOf(applicationId, userId));
      const added = [...new Set(organizationIds)].filter((id) => !existing.has(id));
      if (added.length > 0) {
        await collection.bulkWrite(
          added.map((organizationId) => ({
            updateOne: {
              filter: { _id: idOf(applicationId, userId, organizationId) },
              update: { $setOnInsert: { applicationId, userId, organizationId } },
              upsert: true,
            },
          })),
          inUnit(),
        );
      }
      return added;
    },
    async replace(applicationId: string, userId: string, organizationIds: string[]) {
      const wanted = new Set(organizationIds);
      const removed = (await queries.organizationsOf(applicationId, userId)).filter((id) => !wanted.has(id));
      if (removed.length > 0) await collection.deleteMany({ applicationId, userId, organizationId: { $in: removed } }, inUnit());
      return { added: await queries.add(applicationId, userId, [...wanted]), removed };
    },
    async remove(applicationId: string, userId: string, organizationIds: string[]) {
      const { deletedCount } = await collection.deleteMany({ applicationId, userId, organizationId: { $in: organizationIds } }, inUnit());
      return deletedCount;
    },
    removeAllOfApplication: (applicationId: string) => collection.deleteMany({ applicationId }, inUnit()),
    removeAllOfUser: (userId: string) => collection.deleteMany({ userId }, inUnit()),
    removeAllOfOrganization: (organizationId: string) => collection.deleteMany({ organizationId }, inUnit()),
  };
  return queries;
}
