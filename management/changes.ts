import { guard } from '../lib/http/guard.js';
import { pageOf, setPageHeaders } from '../lib/http/pagination.js';
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

/**
 * The change log: every write the Management API and the sign-in experience made, with what
 * changed and who asked (the request's client, address, route), newest first. Kept for
 * `CHANGES_RETENTION_DAYS`. Never holds a secret.
 */
export function changeRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { changes } = deps.queries;
  router.get(
    '/changes',
    guard({
      query: paginationQuery({
        entity: { type: 'string', pattern: '^[A-Za-z]{1,64}$' },
        entityId: idSchema,
        since: { type: 'integer', minimum: 0 },
        until: { type: 'integer', minimum: 0 },
      }),
      response: { type: 'array', items: changeResponse },
    }),
    async (ctx) => {
      const { page, page_size, ...filter } = ctx.guard.query;
      const paged = pageOf({ page, page_size });
      const [total, found] = await Promise.all([changes.count(filter), changes.find(filter, paged)]);
      setPageHeaders(ctx, paged, total);
      ctx.body = found.map(({ _id, entity, action, id, data, origin, createdAt }) => ({
        id: _id,
        entity,
        action,
        entityId: id,
        data,
        origin,
        createdAt: createdAt.getTime(),
      }));
    },
  );
}
