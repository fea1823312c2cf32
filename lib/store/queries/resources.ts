import type { Db } from 'mongodb';

import { notFound } from '../../errors.js';
import { createLinks } from '../links.js';
import type { Page, ResourceDocument, ScopeDocument } from '../models.js';
import { insertOwn } from '../insert-each.js';
import { inUnit } from '../session.js';

export function createResourceQueries(db: Db) {
  const resources = db.collection<ResourceDocument>('resources');
  const scopes = db.collection<ScopeDocument>('scopes');
  const rolesScopes = createLinks(db, 'roles_scopes');
  const organizationRoleResourceScopes = createLinks(db, 'organization_role_resource_scopes');

  async function findByIdOrThrow(id: string) {
    const resource = await resources.findOne({ _id: id });
    if (!resource) throw notFound('resource', id);
    return resource;
  }

  return {
    insert: async (resource: ResourceDocument) => {
      await insertOwn(resources, [resource]);
      return resource;
    },
    findById: (id: string) => resources.findOne({ _id: id }),
    findByIds: (ids: string[]) => (ids.length === 0 ? Promise.resolve([]) : resources.find({ _id: { $in: ids } }).toArray()),
    findByIdOrThrow,
    findByIndicator: (indicator: string) => resources.findOne({ indicator }),
    /** The default API resource (Logto's `isDefault`): a token asked for without `resource` is for it. */
    findDefault: () => resources.findOne({ isDefault: true }),
    /** The resources marked default other than `id` (there is at most one, but a crash mid-change could leave two). */
    findOtherDefaults: (id: string) => resources.find({ isDefault: true, _id: { $ne: id } }, inUnit()).toArray(),
    findAll: () => resources.find({}).sort({ createdAt: -1, _id: -1 }).toArray(),
    /** Newest first: a page, or every one. */
    find: (page?: Page) => {
      const sorted = resources.find({}).sort({ createdAt: -1, _id: -1 });
      return (page ? sorted.skip(page.skip).limit(page.limit) : sorted).toArray();
    },
    count: () => resources.countDocuments({}),

    async update(id: string, set: Partial<Omit<ResourceDocument, '_id'>>) {
      const { matchedCount } = await resources.updateOne({ _id: id }, { $set: set }, inUnit());
      if (matchedCount === 0) throw notFound('resource', id);
      return (await resources.findOne({ _id: id }, inUnit()))!;
    },

    /** Removes the resource, its scopes, and every role's (and organization role's) grant of those scopes; returns the resource as it was. */
    async delete(id: string) {
      const before = await resources.findOne({ _id: id }, inUnit());
      if (!before) throw notFound('resource', id);
      const scopeIds = (await scopes.find({ resourceId: id }, inUnit()).toArray()).map(({ _id }) => _id);
      await resources.deleteOne({ _id: id }, inUnit());
      await scopes.deleteMany({ resourceId: id }, inUnit());
      await rolesScopes.removeAllOfRights(scopeIds);
      await organizationRoleResourceScopes.removeAllOfRights(scopeIds);
      return before;
    },

    scopes: {
      insert: async (scope: ScopeDocument) => {
        await insertOwn(scopes, [scope]);
        return scope;
      },
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
        const { matchedCount } = await scopes.updateOne({ _id: scopeId, resourceId }, { $set: set }, inUnit());
        if (matchedCount === 0) throw notFound('scope', scopeId);
        return (await scopes.findOne({ _id: scopeId }, inUnit()))!;
      },

      /** Removes the scope and every role's (and organization role's) grant of it; returns the scope as it was. */
      async delete(resourceId: string, scopeId: string) {
        const before = await scopes.findOne({ _id: scopeId, resourceId }, inUnit());
        if (!before) throw notFound('scope', scopeId);
        await scopes.deleteOne({ _id: scopeId }, inUnit());
        await rolesScopes.removeAllOfRight(scopeId);
        await organizationRoleResourceScopes.removeAllOfRight(scopeId);
        return before;
      },
    },
  };
}

export type ResourceQueries = ReturnType<typeof createResourceQueries>;
