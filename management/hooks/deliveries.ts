import type { Filter } from 'mongodb';

import type { Hooks } from '../../hooks/index.js';
import type { DeliveryDocument, HookDocument, HookEventDocument } from '../../hooks/models.js';
import { ApiError, assertThat, notFound } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { pickForRecovery, type RecoveryMode } from '../../hooks/recovery.js';
import { pageOf, setPageHeaders } from '../../lib/http/pagination.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { idParams, paginationQuery } from '../schemas/common.js';
import {
  deliveryListQuery,
  deliveryResponse,
  hookLogResponse,
  recentLogsQuery,
  recoverResponse,
  recoverSchema,
  replayResponse,
  replaySchema,
} from '../schemas/hooks.js';

import { deliveryToApi } from './shapes.js';

/** Replays larger than this are refused; narrow the range instead. */
const maxReplay = 50_000;

/** Queues the stored events of a range that the hook wants (or `events`, among them), as `mode` picks them; answers how many there were and how many were queued. */
export const createResend = (hooks: Hooks) =>
  async function resend(hook: HookDocument, { since, until, events }: { since: number; until: number; events?: string[] }, mode: RecoveryMode) {
    const wanted = events ? events.filter((event) => hook.events.includes(event)) : hook.events;
    // The hook's filters as they are now (hooks/filters.ts), in the query.
    const { sources, excludeClientIds } = hook.config;
    const filter: Filter<HookEventDocument> = {
      createdAt: { $gte: new Date(since), $lte: new Date(until) },
      event: { $in: wanted },
      ...(sources && { $or: [{ source: { $in: [...sources, 'system'] } }, { source: { $exists: false } }] }),
      ...(excludeClientIds && { clientId: { $nin: excludeClientIds } }),
      entityKey: { $ne: `Hook:${hook._id}` },
    };
    const count = await hooks.queries.events.count(filter);
    assertThat(count <= maxReplay, () => new ApiError('hook.replay_too_large', `the range holds ${count} events; replay at most ${maxReplay} at once`));
    const { send } = pickForRecovery(count === 0 ? [] : await hooks.queries.events.ids(filter), mode);
    const queued = send.length === 0 ? 0 : await hooks.queries.queueFor(hook._id, send, hooks.retentionMs, hooks.clock.now());
    if (queued > 0) hooks.wake();
    return { events: count, queued };
  };

/**
 * What a hook was sent, and sending again: its recent logs (Logto's), its deliveries with their
 * attempts, one delivery again, a range of stored events again (a backfill), and its failed
 * deliveries of a range recovered.
 */
export function deliveryRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { hooks } = deps;
  const { hooks: hookQueries } = hooks.queries;
  const resend = createResend(hooks);

  // Logto's recent logs of a hook, made of our delivery attempts: one entry per attempt, keyed `TriggerHook.<event>`.
  router.get(
    '/hooks/:id/recent-logs',
    guard({ params: idParams('id'), query: paginationQuery(recentLogsQuery), response: { type: 'array', items: hookLogResponse } }),
    async (ctx) => {
      const {
        params: { id },
        query: { start_time: startTime, end_time: endTime, logKey },
      } = ctx.guard;
      await hookQueries.findByIdOrThrow(id);
      const now = hooks.clock.now();
      const until = endTime === undefined ? now : new Date(endTime);
      const after = startTime === undefined ? new Date(until.getTime() - 24 * 60 * 60 * 1000) : new Date(startTime);
      const prefix = 'TriggerHook.';
      // A key of another kind names no hook log.
      const event = logKey === undefined ? undefined : logKey.startsWith(prefix) ? logKey.slice(prefix.length) : '\u0000';
      const page = pageOf(ctx.guard.query);
      const { total, found } = await hooks.queries.deliveries.recentAttempts(id, { after, until, event }, page);
      setPageHeaders(ctx, page, total);
      ctx.body = found.map((attempt) => ({
        id: attempt._id,
        key: `${prefix}${attempt.event}`,
        payload: {
          key: `${prefix}${attempt.event}`,
          result: attempt.ok ? 'Success' : 'Error',
          hookId: attempt.hookId,
          eventId: attempt.eventId,
          deliveryId: attempt.deliveryId,
          durationMs: attempt.durationMs,
          response: { statusCode: attempt.statusCode, body: attempt.response },
          error: attempt.error,
        },
        createdAt: attempt.startedAt.getTime(),
      }));
    },
  );

  router.get(
    '/hooks/:id/deliveries',
    guard({ params: idParams('id'), query: paginationQuery(deliveryListQuery), response: { type: 'array', items: deliveryResponse } }),
    async (ctx) => {
      const {
        params: { id },
        query: { state, event, since, until },
      } = ctx.guard;
      await hookQueries.findByIdOrThrow(id);
      const filter: Filter<DeliveryDocument> = {
        hookId: id,
        ...(state && { state }),
        ...(event && { event }),
        ...((since !== undefined || until !== undefined) && {
          createdAt: { ...(since !== undefined && { $gte: new Date(since) }), ...(until !== undefined && { $lte: new Date(until) }) },
        }),
      };
      const page = pageOf(ctx.guard.query);
      const { total, found } = await hooks.queries.deliveries.page(filter, page);
      const attempts = await hooks.queries.deliveries.attemptsOf(found.map(({ _id }) => _id));
      setPageHeaders(ctx, page, total);
      ctx.body = found.map((delivery) => deliveryToApi(delivery, attempts.get(delivery._id)));
    },
  );

  router.post(
    '/hooks/:id/deliveries/:deliveryId/redeliver',
    guard({ params: idParams('id', 'deliveryId'), response: deliveryResponse, status: 202 }),
    async (ctx) => {
      const { id, deliveryId } = ctx.guard.params;
      const hook = await hookQueries.findByIdOrThrow(id);
      assertThat(hook.enabled, () => new ApiError('hook.disabled', 'the hook is disabled; enable it first'));
      assertThat(await hooks.queries.deliveries.findOne(id, deliveryId), () => notFound('delivery', deliveryId));
      assertThat(
        await hooks.queries.deliveries.requeue(id, deliveryId, hooks.clock.now()),
        () => new ApiError('hook.delivery_in_progress', 'the delivery is being attempted now; try again when it has finished'),
      );
      hooks.wake();
      ctx.body = deliveryToApi((await hooks.queries.deliveries.findOne(id, deliveryId))!);
      ctx.status = 202;
    },
  );

  // Backfill: every stored event of the range that the hook subscribes to (or `events`, among
  // them) is delivered to it again, or for the first time if it came before the hook; with
  // `mode: "latest-per-entity"` only the newest event of each entity.
  router.post('/hooks/:id/replay', guard({ params: idParams('id'), body: replaySchema, response: replayResponse, status: 202 }), async (ctx) => {
    const {
      params: { id },
      body: { since, until = Date.now(), events, mode = 'all' },
    } = ctx.guard;
    assertThat(since <= until, () => new ApiError('guard.invalid_input', 'body.since must not be after body.until', { field: 'body.since' }));
    const hook = await hookQueries.findByIdOrThrow(id);
    assertThat(hook.enabled, () => new ApiError('hook.disabled', 'the hook is disabled; enable it first'));
    ctx.body = await resend(hook, { since, until, ...(events && { events }) }, mode);
    ctx.status = 202;
  });

  // Ours: the hook's failed deliveries of a range, sent again (`all`), only each entity's newest with
  // the older ones marked skipped (`latest-per-entity`), or all marked skipped (`skip`).
  router.post('/hooks/:id/recover', guard({ params: idParams('id'), body: recoverSchema, response: recoverResponse, status: 202 }), async (ctx) => {
    const {
      params: { id },
      body: { since, until = Date.now(), mode = 'all' },
    } = ctx.guard;
    assertThat(since <= until, () => new ApiError('guard.invalid_input', 'body.since must not be after body.until', { field: 'body.since' }));
    const hook = await hookQueries.findByIdOrThrow(id);
    assertThat(hook.enabled || mode === 'skip', () => new ApiError('hook.disabled', 'the hook is disabled; enable it first'));
    const failed = await hooks.queries.failedDeliveries(id, new Date(since), new Date(until));
    assertThat(
      failed.length <= maxReplay,
      () => new ApiError('hook.replay_too_large', `the range holds ${failed.length} failed deliveries; recover at most ${maxReplay} at once`),
    );
    const { send, leave } = pickForRecovery(failed, mode);
    const queued = await hooks.queries.requeue(
      send.map(({ _id }) => _id),
      hooks.clock.now(),
    );
    const skipped = await hooks.queries.markSkipped(
      leave.map(({ _id }) => _id),
      mode === 'skip' ? 'skipped by a recovery' : 'superseded by a newer event of its entity (recovery, latest-per-entity)',
      hooks.clock.now(),
    );
    if (queued > 0) hooks.wake();
    ctx.body = { failed: failed.length, queued, skipped };
    ctx.status = 202;
  });
}
