import type { Filter } from 'mongodb';

import { guard, type Guarded } from '../lib/http/guard.js';
import { pageOf } from '../lib/http/pagination.js';
import { changesCollection, type ChangeRecord } from '../lib/store/unit-of-work.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { idSchema, paginationQuery, timestamp } from './schemas/common.js';

const changeResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    entity: { type: 'string' },
    action: { type: 'string' },
    entityId: { type: 'string' },
    data: {},
    origin: { type: 'object', additionalProperties: true },
    createdAt: timestamp,
  },
  required: ['id', 'entity', 'action', 'entityId', 'origin', 'createdAt'],
};

type ChangeQuery = { entity?: string; entityId?: string; since?: number; until?: number; page?: number; page_size?: number };

/**
 * The change log: every write the Management API and the sign-in experience made, with what
 * changed and who asked (the request's client, address, route), newest first. Kept for
 * `CHANGES_RETENTION_DAYS`. Never holds a secret.
 */
export function changeRoutes(router: ApiRouter, deps: ManagementDeps) {
  const changes = deps.database.db.collection<ChangeRecord>(changesCollection);
  router.get<object, Guarded<{ query: ChangeQuery }>>(
    '/changes',
    guard({
      query: paginationQuery({
        entity: { type: 'string', pattern: '^[A-Za-z]{1,64}$' }, entityId: idSchema,
        since: { type: 'integer', minimum: 0 }, until: { type: 'integer', minimum: 0 },
      }),
      response: { type: 'array', items: changeResponse },
    }),
    async (ctx) => {
      const { page, page_size, entity, entityId, since, until } = ctx.guard.query;
      const filter: Filter<ChangeRecord> = {
        ...(entity && { entity }),
        ...(entityId && { id: entityId }),
        ...((since !== undefined || until !== undefined) && {
          createdAt: { ...(since !== undefined && { $gte: new Date(since) }), ...(until !== undefined && { $lte: new Date(until) }) },
        }),
      };
      const { skip, limit } = pageOf({ page, page_size });
      const [total, found] = await Promise.all([
        changes.countDocuments(filter),
        changes.find(filter).sort({ createdAt: -1, _id: -1 }).skip(skip).limit(limit).toArray(),
      ]);
      ctx.set('Total-Number', String(total));
      ctx.body = found.map(({ _id, entity: kind, action, id, data, origin, createdAt }) => ({
        id: _id, entity: kind, action, entityId: id, data, origin, createdAt: createdAt.getTime(),
      }));
    },
  );
}
