import type { Db, Filter } from 'mongodb';

import { notFound } from '../../errors.js';
import { createLinks } from '../links.js';
import type { ApplicationDocument, ApplicationSecretDocument, ApplicationType, Page } from '../models.js';
import { insertOwn } from '../insert-each.js';
import { inUnit } from '../session.js';

export interface ApplicationFilter {
  types?: ApplicationType[];
  isThirdParty?: boolean;
  /** A search's filter (lib/http/search.ts). */
  matching?: Filter<ApplicationDocument>;
  /** Applications left out (Logto's `excludeRoleId`: those holding the role). */
  excludedIds?: string[];
}

export function createApplicationQueries(db: Db) {
  const applications = db.collection<ApplicationDocument>('applications');
  const secrets = db.collection<ApplicationSecretDocument>('application_secrets');
  const applicationsRoles = createLinks(db, 'applications_roles');

  const toFilter = ({ types, isThirdParty, matching, excludedIds }: ApplicationFilter): Filter<ApplicationDocument> => ({
    ...(types && { type: { $in: types } }),
    ...(isThirdParty !== undefined && { isThirdParty }),
    ...(excludedIds && excludedIds.length > 0 && { _id: { $nin: excludedIds } }),
    ...(matching && { $and: [matching] }),
  });

  return {
    async insert(application: ApplicationDocument, secret?: ApplicationSecretDocument) {
      await insertOwn(applications, [application]);
      if (secret) await insertOwn(secrets, [secret]);
      return application;
    },

    findById: (id: string) => applications.findOne({ _id: id }, inUnit()),

    async findByIdOrThrow(id: string) {
      const application = await applications.findOne({ _id: id });
      if (!application) throw notFound('application', id);
      return application;
    },

    find: (filter: ApplicationFilter, page?: Page, { maxTimeMS }: { maxTimeMS?: number } = {}) => {
      const cursor = applications.find(toFilter(filter), maxTimeMS ? { maxTimeMS } : {}).sort({ createdAt: -1, _id: -1 });
      return (page ? cursor.skip(page.skip).limit(page.limit) : cursor).toArray();
    },

    count: (filter: ApplicationFilter, { maxTimeMS }: { maxTimeMS?: number } = {}) =>
      applications.countDocuments(toFilter(filter), maxTimeMS ? { maxTimeMS } : {}),

    async update(id: string, set: Partial<Omit<ApplicationDocument, '_id'>>) {
      const { matchedCount } = await applications.updateOne({ _id: id }, { $set: set }, inUnit());
      if (matchedCount === 0) throw notFound('application', id);
      return (await applications.findOne({ _id: id }, inUnit()))!;
    },

    /**
     * Sets `set` only if the fields of `read` are still as they were read (one conditional write),
     * so that a read-merge-write cannot overwrite a concurrent one. Answers the application after
     * the change, or undefined when it changed meanwhile; 404 when it is gone.
     */
    async updateIfUnchanged(id: string, read: Filter<ApplicationDocument>, set: Partial<Omit<ApplicationDocument, '_id'>>) {
      const { matchedCount } = await applications.updateOne({ ...read, _id: id }, { $set: set }, inUnit());
      if (matchedCount === 0) {
        if (!(await applications.findOne({ _id: id }, inUnit()))) throw notFound('application', id);
        return undefined;
      }
      return (await applications.findOne({ _id: id }, inUnit()))!;
    },

    /** Removes the application with its secrets and role assignments. */
    async delete(id: string) {
      const { deletedCount } = await applications.deleteOne({ _id: id }, inUnit());
      if (deletedCount === 0) throw notFound('application', id);
      await secrets.deleteMany({ applicationId: id }, inUnit());
      await applicationsRoles.removeAllOfLeft(id);
    },

    secrets: {
      listFor: (applicationId: string) => secrets.find({ applicationId }).sort({ createdAt: 1, _id: 1 }).toArray(),
      insert: (secret: ApplicationSecretDocument) => insertOwn(secrets, [secret]),
      async delete(applicationId: string, name: string) {
        const { deletedCount } = await secrets.deleteOne({ applicationId, name }, inUnit());
        return deletedCount === 1;
      },
      /** Renames a secret; answers it renamed, or null when there is none of that name. A taken name is the unique index's refusal. */
      async rename(applicationId: string, name: string, newName: string) {
        const { matchedCount } = await secrets.updateOne({ applicationId, name }, { $set: { name: newName } }, inUnit());
        return matchedCount === 0 ? null : secrets.findOne({ applicationId, name: newName }, inUnit());
      },
    },
  };
}

export type ApplicationQueries = ReturnType<typeof createApplicationQueries>;
