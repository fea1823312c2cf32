import type { Db } from 'mongodb';

import { generateId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import { webhookRequest } from './message.js';
import {
  hookCollections, type AttemptDocument, type DeliveryDocument, type DeliveryState, type HookDocument, type HookEventDocument,
} from './models.js';
import { nextRetryDelay, type RetryPlan } from './schedule.js';
import type { Sender, SendResult } from './send.js';

export interface WorkerOptions {
  db: Db;
  send: Sender;
  retry: RetryPlan;
  /** Limit of one attempt, in milliseconds. */
  timeoutMs: number;
  /** How often to look for due deliveries when nothing wakes the worker. */
  pollMs: number;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** A hook failing without a success for this long is disabled. */
  disableAfterMs: number;
  retentionMs: number;
  logger: Logger;
}

export interface DeliveryWorker {
  start(): void;
  /** Looks for due deliveries now (a local commit queued some). */
  wake(): void;
  /** Stops taking deliveries and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * Delivers due deliveries, at least once, in several processes over one database. A worker takes
 * a delivery with one conditional update that moves its `nextAttemptAt` past the lease: only one
 * worker's update matches, so in normal operation one event reaches a hook once; if the worker
 * dies, the delivery is due again when the lease ends and another worker takes it over.
 */
export function createDeliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, send, retry, timeoutMs, pollMs, concurrency, disableAfterMs, retentionMs, logger } = options;
  const deliveries = db.collection<DeliveryDocument>(hookCollections.deliveries);
  const attempts = db.collection<AttemptDocument>(hookCollections.attempts);
  const hooks = db.collection<HookDocument>(hookCollections.hooks);
  const events = db.collection<HookEventDocument>(hookCollections.events);

  const owner = generateId();
  const unseenEventGraceMs = 60_000;
  // Longer than an attempt can last, with room for the reads around it.
  const leaseMs = 2 * timeoutMs + 5000;
  let running = false;
  let loop: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();
  let woken = false;
  let interrupt: () => void = () => {};

  const pause = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    interrupt = () => { clearTimeout(timer); resolve(); };
  });

  async function claim(limit: number): Promise<DeliveryDocument[]> {
    const now = new Date();
    const due = await deliveries.find({ state: 'pending', nextAttemptAt: { $lte: now } }).sort({ nextAttemptAt: 1 }).limit(limit).toArray();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const taken = await Promise.all(due.map(async (delivery) => {
      const { modifiedCount } = await deliveries.updateOne(
        { _id: delivery._id, state: 'pending', nextAttemptAt: { $lte: now } },
        { $set: { nextAttemptAt: leaseUntil, leaseOwner: owner } },
      );
      return modifiedCount === 1 ? delivery : undefined;
    }));
    return taken.filter((delivery): delivery is DeliveryDocument => delivery !== undefined);
  }

  /** Writes a delivery's outcome, if this worker still holds it. */
  async function settle(delivery: DeliveryDocument, state: DeliveryState, set: Partial<DeliveryDocument>) {
    await deliveries.updateOne(
      { _id: delivery._id, leaseOwner: owner },
      { $set: { ...set, state, leaseOwner: null, updatedAt: new Date() } },
    );
  }

  async function keepHealth(hook: HookDocument, result: SendResult, now: Date) {
    if (result.ok) {
      if (hook.failingSince) await hooks.updateOne({ _id: hook._id }, { $set: { failingSince: null } });
      return;
    }
    const gone = result.statusCode === 410;
    const failingFor = hook.failingSince ? now.getTime() - hook.failingSince.getTime() : 0;
    if (gone || failingFor > disableAfterMs) {
      const reason = gone
        ? `the endpoint answered 410 Gone on ${now.toISOString()}`
        : `every attempt failed from ${hook.failingSince!.toISOString()} to ${now.toISOString()}`;
      const { modifiedCount } = await hooks.updateOne({ _id: hook._id, enabled: true }, { $set: { enabled: false, disabledReason: reason } });
      if (modifiedCount === 1) logger.warn(`Webhook ${hook._id} (${hook.name}) disabled: ${reason}`);
    } else if (!hook.failingSince) {
      await hooks.updateOne({ _id: hook._id, failingSince: null }, { $set: { failingSince: now } });
    }
  }

  async function attempt(delivery: DeliveryDocument, hook: HookDocument | undefined, event: HookEventDocument | undefined) {
    if (!event && Date.now() - delivery.createdAt.getTime() < unseenEventGraceMs) {
      // Written in the same transaction, so it exists; a read that raced the commit missed it.
      return settle(delivery, 'pending', { nextAttemptAt: new Date(Date.now() + pollMs) });
    }
    const skip = !hook ? 'the hook was deleted' : !hook.enabled ? 'the hook is disabled' : !event ? 'the event has expired' : undefined;
    if (skip) return settle(delivery, 'skipped', { lastError: skip });

    const startedAt = new Date();
    const result = await send(webhookRequest(hook!, event!._id, event!.payload, startedAt));
    const now = new Date();
    await attempts.insertOne({
      _id: generateId(), deliveryId: delivery._id, hookId: hook!._id, eventId: event!._id, event: delivery.event, startedAt,
      durationMs: result.durationMs, ok: result.ok, statusCode: result.statusCode, response: result.response, error: result.error, worker: owner,
      expiresAt: new Date(now.getTime() + retentionMs),
    });
    const made = delivery.attempts + 1;
    const outcome = { attempts: made, lastAttemptAt: startedAt, lastStatus: result.statusCode, lastError: result.error };
    const delay = result.ok || result.statusCode === 410 ? undefined : nextRetryDelay(retry, made, result.retryAfterMs);
    if (result.ok) await settle(delivery, 'succeeded', outcome);
    else if (delay === undefined) await settle(delivery, 'failed', outcome);
    else await settle(delivery, 'pending', { ...outcome, nextAttemptAt: new Date(now.getTime() + delay) });
    await keepHealth(hook!, result, now);
  }

  async function deliverBatch(batch: DeliveryDocument[]) {
    const [hookList, eventList] = await Promise.all([
      hooks.find({ _id: { $in: [...new Set(batch.map(({ hookId }) => hookId))] } }).toArray(),
      events.find({ _id: { $in: batch.map(({ eventId }) => eventId) } }).toArray(),
    ]);
    const hookById = new Map(hookList.map((hook) => [hook._id, hook]));
    const eventById = new Map(eventList.map((event) => [event._id, event]));
    await Promise.all(batch.map((delivery) => attempt(delivery, hookById.get(delivery.hookId), eventById.get(delivery.eventId)).catch((error: unknown) => {
      // The lease runs out and another worker (or this one) tries again.
      logger.error(`Webhook delivery ${delivery._id} could not be recorded`, error);
    })));
  }

  /** Runs until stopped: takes what is due, up to the free slots, and sleeps when nothing is. */
  async function run() {
    let failures = 0;
    while (running) {
      const free = concurrency - inFlight.size;
      if (free <= 0) {
        await Promise.race(inFlight);
        continue;
      }
      woken = false;
      let batch: DeliveryDocument[] = [];
      try {
        batch = await claim(free);
        failures = 0;
      } catch (error) {
        // The database is unreachable: say so once per outage, and keep trying.
        if (failures++ === 0) logger.error('Webhook delivery cannot read the database; retrying', error);
      }
      if (batch.length > 0) {
        const job = deliverBatch(batch).finally(() => { inFlight.delete(job); });
        inFlight.add(job);
      } else if (!woken && running) {
        await pause(inFlight.size > 0 ? Math.min(pollMs, 50) : pollMs);
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake() {
      woken = true;
      interrupt();
    },
    async stop() {
      running = false;
      interrupt();
      await loop;
      await Promise.all(inFlight);
    },
  };
}
