import type { Db, Filter } from 'mongodb';

import { createEntityQueries } from '../lib/store/entities.js';
import { generateId } from '../lib/ids.js';
import { insertMissing } from '../lib/store/insert-each.js';
import type { Page } from '../lib/store/models.js';
import { hookCollections, type AttemptDocument, type DeliveryDocument, type HookDocument, type HookEventDocument } from './models.js';
import { inUnit } from '../lib/store/session.js';

const day = 24 * 60 * 60 * 1000;

/** Queries over hooks, their deliveries and attempts, for the hooks API. */
export function createHookQueries(db: Db) {
  const hooks = createEntityQueries<HookDocument>(db, { collection: hookCollections.hooks, label: 'hook' });
  const deliveries = db.collection<DeliveryDocument>(hookCollections.deliveries);
  const attempts = db.collection<AttemptDocument>(hookCollections.attempts);
  const events = db.collection<HookEventDocument>(hookCollections.events);

  return {
    hooks,

    /** Deliveries waiting: all pending, and those due now (the metrics' queue depth). */
    async queueDepth(now = new Date()): Promise<{ pending: number; due: number }> {
      const [pending, due] = await Promise.all([
        deliveries.countDocuments({ state: 'pending' }),
        deliveries.countDocuments({ state: 'pending', nextAttemptAt: { $lte: now } }),
      ]);
      return { pending, due };
    },

    /**
     * Attempts and successes in the last 24 hours of each of these hooks, as Logto's
     * `executionStats`: two grouped counts for a whole page, not two counts per hook.
     */
    async executionStats(hookIds: string[], now = Date.now()) {
      const recent = { hookId: { $in: hookIds }, startedAt: { $gte: new Date(now - day) } };
      const countBy = async (filter: Filter<AttemptDocument>) =>
        new Map(
          (await attempts.aggregate<{ _id: string; count: number }>([{ $match: filter }, { $group: { _id: '$hookId', count: { $sum: 1 } } }]).toArray()).map(
            ({ _id, count }) => [_id, count],
          ),
        );
      const [requests, successes] = await Promise.all([countBy(recent), countBy({ ...recent, ok: true })]);
      return new Map(hookIds.map((id) => [id, { requestCount: requests.get(id) ?? 0, successCount: successes.get(id) ?? 0 }]));
    },

    /** Removes a deleted hook's deliveries and attempts, in its unit of work. */
    async removeHook(hookId: string) {
      await deliveries.deleteMany({ hookId }, inUnit());
      await attempts.deleteMany({ hookId }, inUnit());
    },

    deliveries: {
      findOne: (hookId: string, id: string) => deliveries.findOne({ _id: id, hookId }),
      async page(filter: Filter<DeliveryDocument>, page: Page) {
        const [total, found] = await Promise.all([
          deliveries.countDocuments(filter),
          deliveries.find(filter).sort({ createdAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
        ]);
        return { total, found };
      },
      /** A hook's attempts in a time window, newest first (Logto's recent logs); `event` narrows them. */
      async recentAttempts(hookId: string, window: { after: Date; until: Date; event?: string }, page: Page) {
        const filter: Filter<AttemptDocument> = {
          hookId,
          startedAt: { $gt: window.after, $lte: window.until },
          ...(window.event !== undefined && { event: window.event }),
        };
        const [total, found] = await Promise.all([
          attempts.countDocuments(filter),
          attempts.find(filter).sort({ startedAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
        ]);
        return { total, found };
      },
      /** The attempts of these deliveries, newest first, grouped by delivery. */
      async attemptsOf(ids: string[]) {
        const found =
          ids.length === 0
            ? []
            : await attempts
                .find({ deliveryId: { $in: ids } })
                .sort({ startedAt: -1 })
                .toArray();
        const byDelivery = new Map<string, AttemptDocument[]>();
        for (const attempt of found) byDelivery.set(attempt.deliveryId, [...(byDelivery.get(attempt.deliveryId) ?? []), attempt]);
        return byDelivery;
      },
      /**
       * Queues a delivery again, at once and with a fresh retry schedule. Refuses (answers false)
       * while one is pending and held by a worker, so that a redelivery never races an attempt.
       */
      async requeue(hookId: string, id: string, now = new Date()) {
        const { modifiedCount } = await deliveries.updateOne(
          { _id: id, hookId, $or: [{ state: { $ne: 'pending' } }, { leaseOwner: null }] },
          { $set: { state: 'pending', attempts: 0, nextAttemptAt: now, leaseOwner: null, lastError: null, updatedAt: now } },
        );
        return modifiedCount === 1;
      },
    },

    events: {
      count: (filter: Filter<HookEventDocument>) => events.countDocuments(filter),
      ids: async (filter: Filter<HookEventDocument>) =>
        (await events.find(filter).sort({ createdAt: 1, _id: 1 }).toArray()).map(({ _id, event, entityKey, sequence }) => ({
          _id,
          event,
          ...(entityKey && { entityKey }),
          ...(sequence !== undefined && { sequence }),
        })),
    },

    /**
     * Queues these events for one hook (a replay): new deliveries for events it never got,
     * finished ones (succeeded, failed, skipped) queued again; pending ones are left as they are.
     */
    /** The hook's failed deliveries made in a range, oldest first. */
    failedDeliveries: (hookId: string, since: Date, until: Date) =>
      deliveries
        .find({ hookId, state: 'failed', createdAt: { $gte: since, $lte: until } })
        .sort({ createdAt: 1, _id: 1 })
        .toArray(),

    /** Failed deliveries queued again with a fresh retry schedule; answers how many. */
    async requeue(ids: string[], now = new Date()) {
      if (ids.length === 0) return 0;
      const { modifiedCount } = await deliveries.updateMany(
        { _id: { $in: ids }, state: 'failed' },
        { $set: { state: 'pending', attempts: 0, nextAttemptAt: now, leaseOwner: null, lastError: null, updatedAt: now } },
      );
      return modifiedCount;
    },

    /** Failed deliveries given up for good, saying why; answers how many. */
    async markSkipped(ids: string[], reason: string, now = new Date()) {
      if (ids.length === 0) return 0;
      const { modifiedCount } = await deliveries.updateMany(
        { _id: { $in: ids }, state: 'failed' },
        { $set: { state: 'skipped', lastError: reason, updatedAt: now } },
      );
      return modifiedCount;
    },

    async queueFor(hookId: string, found: Array<{ _id: string; event: string }>, retentionMs: number, now = new Date()) {
      const existing = await deliveries.find({ hookId, eventId: { $in: found.map(({ _id }) => _id) } }).toArray();
      const known = new Set(existing.map(({ eventId }) => eventId));
      const finished = existing.filter(({ state }) => state !== 'pending').map(({ _id }) => _id);
      const missing = found.filter(({ _id }) => !known.has(_id));
      if (finished.length > 0) {
        await deliveries.updateMany(
          { _id: { $in: finished }, state: { $ne: 'pending' } },
          { $set: { state: 'pending', attempts: 0, nextAttemptAt: now, leaseOwner: null, lastError: null, updatedAt: now } },
        );
      }
      if (missing.length > 0) {
        const expiresAt = new Date(now.getTime() + retentionMs);
        // An event fanned out meanwhile got its delivery from a worker: it is queued either way.
        await insertMissing(
          deliveries,
          missing.map(({ _id, event }) => ({
            _id: generateId(),
            hookId,
            eventId: _id,
            event,
            state: 'pending' as const,
            attempts: 0,
            nextAttemptAt: now,
            leaseOwner: null,
            lastAttemptAt: null,
            lastStatus: null,
            lastError: null,
            createdAt: now,
            updatedAt: now,
            expiresAt,
          })),
        );
      }
      return finished.length + missing.length;
    },
  };
}

export type HookQueries = ReturnType<typeof createHookQueries>;
