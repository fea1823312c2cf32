import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { hookCollections, type HookEventDocument } from '../hooks/models.js';
import { hookEventsScope, managementScope } from './bootstrap.js';
import type { ApiRouter, ManagementDeps } from './deps.js';

/** Events a page of the feed holds at most. */
export const feedPageLimit = 500;

/**
 * The pull feed (ours): the events the hooks are sent, with the same ids and bodies (without a
 * `hookId`), in `sequence` order, from a cursor. Only the numbered prefix is shown (up to the
 * sequencer's watermark), so that an event that commits late can never be skipped by a cursor: it
 * gets a number above every one already shown. A cursor whose next events have expired is 410
 * with the oldest sequence still kept. Its own scope, `hook-events`, so that a consumer can be
 * given the feed and nothing else.
 */
export function hookEventRoutes(router: ApiRouter, deps: ManagementDeps) {
  const events = deps.database.db.collection<HookEventDocument>(hookCollections.events);

  router.get(
    '/hook-events',
    guard({
      scopes: [managementScope, hookEventsScope],
      query: {
        type: 'object',
        properties: {
          after: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          limit: { type: 'integer', minimum: 1, maximum: feedPageLimit },
          events: { type: 'string', maxLength: 2048, pattern: '^[A-Za-z.]+(,[A-Za-z.]+)*$' },
        },
        additionalProperties: false,
      },
      response: {
        type: 'object',
        properties: {
          data: { type: 'array', items: { type: 'object', additionalProperties: true } },
          next: { type: 'integer' },
          watermark: { type: 'integer' },
        },
        required: ['data', 'next', 'watermark'],
      },
    }),
    async (ctx) => {
      const { after = 0, limit = 100, events: named } = ctx.guard.query;
      const watermark = await deps.hooks.sequencer.watermark();
      const [oldest] = await events
        .find({ sequence: { $gte: 1 } })
        .sort({ sequence: 1 })
        .limit(1)
        .toArray();
      const oldestSequence = oldest?.sequence ?? watermark + 1;
      assertThat(
        after + 1 >= oldestSequence,
        () => new ApiError('hook.feed_cursor_expired', `events after ${after} have expired; the oldest kept is ${oldestSequence}`, { oldestSequence }),
      );
      const wanted = named?.split(',');
      const page = await events
        .find({ sequence: { $gt: after, $lte: watermark }, ...(wanted && { event: { $in: wanted } }) })
        .sort({ sequence: 1 })
        .limit(limit)
        .toArray();
      // A short page read everything up to the watermark; a full one goes on after its last event.
      const next = page.length === limit ? page[page.length - 1]!.sequence! : Math.max(after, watermark);
      ctx.body = { data: page.map(({ payload }) => payload), next, watermark };
    },
  );
}
