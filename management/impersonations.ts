import { guard } from '../lib/http/guard.js';
import { withId } from '../lib/store/models.js';
import { pageOf, setPageHeaders } from '../lib/http/pagination.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { idSchema, paginationQuery, timestamp } from './schemas/common.js';

const eventResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { enum: ['subject_token.issued', 'exchange.succeeded', 'exchange.failed'] },
    reason: { type: 'string' },
    targetUserId: { type: 'string' },
    actorUserId: { type: 'string' },
    issuerClientId: { type: 'string' },
    clientId: { type: 'string' },
    context: { type: 'object', additionalProperties: true },
    resource: { type: 'string' },
    tokenId: { type: 'string' },
    subjectTokenId: { type: 'string' },
    createdAt: timestamp,
  },
  required: ['id', 'kind', 'createdAt'],
};

/** The impersonation audit: who acted as whom, when and why; newest first. */
export function impersonationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { impersonations } = deps.queries;
  router.get(
    '/impersonations',
    guard({
      query: paginationQuery({
        targetUserId: idSchema,
        actorUserId: idSchema,
        clientId: idSchema,
        since: { type: 'integer', minimum: 0 },
        until: { type: 'integer', minimum: 0 },
      }),
      response: { type: 'array', items: eventResponse },
    }),
    async (ctx) => {
      const { page, page_size, ...filter } = ctx.guard.query;
      const paged = pageOf({ page, page_size });
      const [total, found] = await Promise.all([impersonations.count(filter), impersonations.find(filter, paged)]);
      setPageHeaders(ctx, paged, total);
      ctx.body = found.map(withId);
    },
  );
}
