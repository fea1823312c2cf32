import type { ClientSession, Db } from 'mongodb';

import { notFound } from '../errors.js';
import type { ResourceDocument, RoleScopeDocument, ScopeDocument } from '../models.js';
import type { Page } from '../pagination.js';

export function createResourceQueries(db: Db) {
  const resources = db.collection<ResourceDocument>('resources');
  const scopes = db.collection<ScopeDocument>('scopes');
  const rolesScopes = db.collection<RoleScopeDocument>('roles_scopes');

  async function findByIdOrThrow(id: string) {
    const resource = await resources.findOne({ _id: id });
    if (!resource) throw notFound('resource', id);
    return resource;
  }

  return {
    insert: async (resource: ResourceDocument) => { await resources.insertOne(resource); return resource; },
    findById: (id: string) => resources.findOne({ _id: id }),
    findByIdOrThrow,
    findByIndicator: (indicator: string) => resources.findOne({ indicator }),
    findAll: () => resources.find({}).sort({ createdAt: -1, _id: -1 }).toArray(),
    find: (page: Page) => resources.find({}).sort({ createdAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
    count: () => resources.countDocuments({}),

    async update(id: string, set: Partial<Omit<ResourceDocument, '_id'>>) {
      const { matchedCount } = await resources.updateOne({ _id: id }, { $set: set });
      if (matchedCount === 0) throw notFound('resource', id);
      return (await resources.findOne({ _id: id }))!;
    },

    /** Removes the resource, its scopes, and every role's grant of those scopes. */
    async delete(id: string, session?: ClientSession) {
      const scopeIds = (await scopes.find({ resourceId: id }, { session }).toArray()).map(({ _id }) => _id);
      const { deletedCount } = await resources.deleteOne({ _id: id }, { session });
      if (deletedCount === 0) throw notFound('resource', id);
      await scopes.deleteMany({ resourceId: id }, { session });
      if (scopeIds.length > 0) await rolesScopes.deleteMany({ scopeId: { $in: scopeIds } }, { session });
    },

    scopes: {
      insert: async (scope: ScopeDocument) => { await scopes.insertOne(scope); return scope; },
      findForResource: (resourceId: string, page?: Page) => {
        const cursor = scopes.find({ resourceId }).sort({ createdAt: -1, _id: -1 });
        return (page ? cursor.skip(page.skip).limit(page.limit) : cursor).toArray();
      },
      findForResources: (resourceIds: string[]) => scopes.find({ resourceId: { $in: resourceIds } }).toArray(),
      countForResource: (resourceId: string) => scopes.countDocuments({ resourceId }),

      async findOneOrThrow(resourceId: string, scopeId: string) {
        const scope = await scopes.findOne({ _id: scopeId, resourceId });
        if (!scope) throw notFound('scope', scopeId);
        return scope;
      },

      async update(resourceId: string, scopeId: string, set: Partial<Pick<ScopeDocument, 'name' | 'description'>>) {
        const { matchedCount } = await scopes.updateOne({ _id: scopeId, resourceId }, { $set: set });
        if (matchedCount === 0) throw notFound('scope', scopeId);
        return (await scopes.findOne({ _id: scopeId }))!;
      },

      /** Removes the scope and every role's grant of it. */
      async delete(resourceId: string, scopeId: string, session?: ClientSession) {
        const { deletedCount } = await scopes.deleteOne({ _id: scopeId, resourceId }, { session });
        if (deletedCount === 0) throw notFound('scope', scopeId);
        await rolesScopes.deleteMany({ scopeId }, { session });
      },
    },
  };
}

export type ResourceQueries = ReturnType<typeof createResourceQueries>;
