import type { Db } from 'mongodb';

import { systemClock, type Clock } from '../lib/clock.js';
import { generateId } from '../lib/ids.js';
import { insertEach, throwingFailures } from '../lib/store/insert-each.js';
import type { Logger } from '../lib/logger.js';
import { webhookRequest } from './message.js';
import { hookCollections, type AttemptDocument, type DeliveryDocument, type DeliveryState, type HookDocument, type HookEventDocument } from './models.js';
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
  /** This worker's id, as the outbox of its process names it on the events it records. */
  owner?: string;
  /** What is due, leases, retry delays and disabling read this clock (the system's by default). */
  clock?: Clock;
}

export interface DeliveryWorker {
  start(): void;
  /** Looks for new events and due deliveries now (a local commit recorded some). */
  wake(): void;
  /** Stops taking deliveries and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/** Deliveries a worker holds under one lease, with the hooks and events it already read for them, if any. */
interface Taken {
  batch: Array<DeliveryDocument & { leaseOwner: string }>;
  hooks?: HookDocument[];
  events?: HookEventDocument[];
}

/**
 * Delivers due deliveries, at least once, in several processes over one database. A worker takes
 * deliveries with a conditional update that moves their `nextAttemptAt` past the lease: only one
 * worker's update matches, so in normal operation one event reaches a hook once; if the worker
 * dies, the delivery is due again when the lease ends and another worker takes it over.
 */
export function createDeliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, send, retry, timeoutMs, pollMs, concurrency, disableAfterMs, retentionMs, logger, clock = systemClock } = options;
  const at = (msFromNow: number) => new Date(clock.now().getTime() + msFromNow);
  const deliveries = db.collection<DeliveryDocument>(hookCollections.deliveries);
  const attempts = db.collection<AttemptDocument>(hookCollections.attempts);
  const hooks = db.collection<HookDocument>(hookCollections.hooks);
  const events = db.collection<HookEventDocument>(hookCollections.events);

  const owner = options.owner ?? generateId();
  /** How long the recording process's worker has to fan out its events before any other may. */
  const handOverMs = 2 * pollMs;
  const unseenEventGraceMs = 60_000;
  /** Events fanned out at once. */
  const fanOutBatch = 500;
  /** How far two processes' clocks may disagree when a hook's creation and an event's are compared. */
  const clockSkewMs = 5000;
  // Longer than an attempt can last, with room for the reads around it.
  const leaseMs = 2 * timeoutMs + 5000;
  let running = false;
  let loop: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();
  /** Deliveries in flight, across the batches in `inFlight`. */
  let taken = 0;
  let woken = false;
  let interrupt: () => void = () => {};

  const pause = (ms: number) => {
    const { done, cancel } = clock.wait(ms);
    interrupt = cancel;
    return done;
  };

  /**
   * Takes up to `limit` due deliveries under a fresh lease token: one update over the candidates
   * (each document's update re-checks that it is still due, so of two workers racing for one
   * delivery only one matches), then a read of those that carry the token.
   */
  async function claim(limit: number): Promise<Array<DeliveryDocument & { leaseOwner: string }>> {
    const now = clock.now();
    const due = await deliveries
      .find({ state: 'pending', nextAttemptAt: { $lte: now } })
      .sort({ nextAttemptAt: 1 })
      .limit(limit)
      .toArray();
    if (due.length === 0) return [];
    const lease = `${owner}.${generateId(8)}`;
    const ids = due.map(({ _id }) => _id);
    await deliveries.updateMany(
      { _id: { $in: ids }, state: 'pending', nextAttemptAt: { $lte: now } },
      { $set: { nextAttemptAt: new Date(now.getTime() + leaseMs), leaseOwner: lease } },
    );
    return (await deliveries.find({ _id: { $in: ids }, leaseOwner: lease }).toArray()) as Array<DeliveryDocument & { leaseOwner: string }>;
  }

  /**
   * Makes the deliveries of recorded events: one per enabled hook subscribed to the event, then
   * marks the events done. The worker of the process that recorded an event takes it at once,
   * any other after `handOverMs`; two at once do no harm either: the unique (hookId, eventId)
   * index keeps one delivery per pair, and a worker that dies between the two writes leaves the
   * events due, to be fanned out again to the same result.
   *
   * A hook gets the events recorded after it was created. Two clocks compare here (the hook's
   * process and the event's), so the rule allows them `clockSkewMs` of disagreement, erring
   * towards sending: a hook created a moment after an event may get it too, but an event is
   * never lost to a hook that existed when it was recorded; and a hook created later, while no
   * worker ran, does not get the backlog (a replay does that, on request).
   */
  async function fanOut(free: number): Promise<Taken | undefined> {
    const due = await events
      .find({
        fanOutDue: { $type: 'date' },
        $or: [{ fanOutBy: owner }, { fanOutDue: { $lte: at(-handOverMs) } }],
      })
      .sort({ fanOutDue: 1 })
      .limit(fanOutBatch)
      .toArray();
    if (due.length === 0) return undefined;
    const subscribed = await hooks.find({ enabled: true, events: { $in: [...new Set(due.map(({ event }) => event))] } }).toArray();
    const now = clock.now();
    // As many as this worker has room for are made already taken by it (under a lease, as
    // `claim` would take them), so that they go out now without being looked for again.
    const lease = `${owner}.${generateId(8)}`;
    const made: DeliveryDocument[] = due.flatMap((event) =>
      subscribed
        .filter((hook) => hook.events.includes(event.event) && hook.createdAt <= event.createdAt.getTime() + clockSkewMs)
        .map((hook) => ({
          _id: generateId(),
          hookId: hook._id,
          eventId: event._id,
          event: event.event,
          state: 'pending' as const,
          attempts: 0,
          // Due since the event was recorded, so that the oldest go first and latency counts from the commit.
          nextAttemptAt: event.createdAt,
          leaseOwner: null,
          lastAttemptAt: null,
          lastStatus: null,
          lastError: null,
          createdAt: event.createdAt,
          updatedAt: now,
          expiresAt: event.expiresAt,
        })),
    );
    made.slice(0, Math.max(free, 0)).forEach((delivery) => Object.assign(delivery, { leaseOwner: lease, nextAttemptAt: new Date(now.getTime() + leaseMs) }));
    const outcomes = made.length > 0 ? throwingFailures(await insertEach(deliveries, made)) : [];
    await events.updateMany({ _id: { $in: due.map(({ _id }) => _id) } }, { $unset: { fanOutDue: '' } });
    // A full batch may leave more behind it: look again at once.
    if (due.length === fanOutBatch) woken = true;
    // Only those this worker stored are its own: another worker's copy of the same pair won.
    const mine = made.filter((delivery, index) => delivery.leaseOwner === lease && outcomes[index] === 'inserted') as Taken['batch'];
    return mine.length > 0 ? { batch: mine, hooks: subscribed, events: due } : undefined;
  }

  /** Writes a delivery's outcome, if its lease is still this worker's. */
  async function settle(delivery: DeliveryDocument, state: DeliveryState, set: Partial<DeliveryDocument>) {
    await deliveries.updateOne({ _id: delivery._id, leaseOwner: delivery.leaseOwner }, { $set: { ...set, state, leaseOwner: null, updatedAt: clock.now() } });
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

  /** Sends one delivery; answers its attempt record, having settled it unless it succeeded. */
  async function attempt(
    delivery: DeliveryDocument,
    hook: HookDocument | undefined,
    event: HookEventDocument | undefined,
  ): Promise<AttemptDocument | undefined> {
    if (!event && clock.now().getTime() - delivery.createdAt.getTime() < unseenEventGraceMs) {
      // The event is written before its delivery (in the same transaction, or just before it), so it
      // exists; a read outside the transaction can still miss it while a commit spreads across
      // shards. Look again shortly instead of skipping a delivery that is due.
      await settle(delivery, 'pending', { nextAttemptAt: at(pollMs) });
      return undefined;
    }
    // The hook as it is now decides: one that no longer subscribes to the event gets no more of it,
    // on a retry or a redelivery alike.
    const skip = !hook
      ? 'the hook was deleted'
      : !hook.enabled
        ? 'the hook is disabled'
        : !hook.events.includes(delivery.event)
          ? 'the hook no longer subscribes to this event'
          : !event
            ? 'the event has expired'
            : undefined;
    if (skip) {
      await settle(delivery, 'skipped', { lastError: skip });
      return undefined;
    }

    const startedAt = clock.now();
    const result = await send(webhookRequest(hook!, event!._id, event!.payload, startedAt));
    const now = clock.now();
    const record: AttemptDocument = {
      _id: generateId(),
      deliveryId: delivery._id,
      hookId: hook!._id,
      eventId: event!._id,
      event: delivery.event,
      startedAt,
      durationMs: result.durationMs,
      ok: result.ok,
      statusCode: result.statusCode,
      response: result.response,
      error: result.error,
      worker: owner,
      expiresAt: new Date(now.getTime() + retentionMs),
    };
    if (!result.ok) {
      const made = delivery.attempts + 1;
      const outcome = { attempts: made, lastAttemptAt: startedAt, lastStatus: result.statusCode, lastError: result.error };
      const delay = result.statusCode === 410 ? undefined : nextRetryDelay(retry, made, result.retryAfterMs);
      if (delay === undefined) await settle(delivery, 'failed', outcome);
      else await settle(delivery, 'pending', { ...outcome, nextAttemptAt: new Date(now.getTime() + delay) });
    }
    await keepHealth(hook!, result, now);
    return record;
  }

  /**
   * Sends a batch at once and records it: the attempts in one insert, and the deliveries that
   * succeeded with one update per status code (failures were settled one by one, each with its
   * own next attempt), so that the usual case costs two writes per batch, not two per delivery.
   */
  async function deliverBatch({ batch, hooks: knownHooks, events: knownEvents }: Taken) {
    const [hookList, eventList] = await Promise.all([
      knownHooks ?? hooks.find({ _id: { $in: [...new Set(batch.map(({ hookId }) => hookId))] } }).toArray(),
      knownEvents ?? events.find({ _id: { $in: batch.map(({ eventId }) => eventId) } }).toArray(),
    ]);
    const hookById = new Map(hookList.map((hook) => [hook._id, hook]));
    const eventById = new Map(eventList.map((event) => [event._id, event]));
    const records = await Promise.all(
      batch.map((delivery) =>
        attempt(delivery, hookById.get(delivery.hookId), eventById.get(delivery.eventId)).catch((error: unknown) => {
          // Its lease runs out and a worker tries again.
          logger.error(`Webhook delivery ${delivery._id} could not be recorded`, error);
          return undefined;
        }),
      ),
    );
    const made = records.filter((record): record is AttemptDocument => record !== undefined);
    if (made.length > 0) await attempts.insertMany(made);
    const succeeded = new Map<number, string[]>();
    for (const { ok, statusCode, deliveryId } of made) {
      if (ok) succeeded.set(statusCode!, [...(succeeded.get(statusCode!) ?? []), deliveryId]);
    }
    const now = clock.now();
    const lease = batch[0].leaseOwner;
    await Promise.all(
      [...succeeded].map(([lastStatus, ids]) =>
        deliveries.updateMany(
          { _id: { $in: ids }, leaseOwner: lease },
          { $set: { state: 'succeeded', lastStatus, lastError: null, lastAttemptAt: now, leaseOwner: null, updatedAt: now }, $inc: { attempts: 1 } },
        ),
      ),
    );
  }

  /** Runs until stopped: takes what is due, up to the free slots, and sleeps when nothing is. */
  async function run() {
    let failures = 0;
    while (running) {
      const free = concurrency - taken;
      if (free <= 0) {
        await Promise.race(inFlight);
        continue;
      }
      woken = false;
      let work: Taken | undefined;
      try {
        // New events first: what their fan-out takes is sent at once; otherwise whatever is due.
        work = await fanOut(free);
        if (!work) {
          const batch = await claim(free);
          if (batch.length > 0) work = { batch };
        }
        failures = 0;
      } catch (error) {
        // The database is unreachable: say so once per outage, and keep trying.
        if (failures++ === 0) logger.error('Webhook delivery cannot read the database; retrying', error);
      }
      if (work) {
        const size = work.batch.length;
        taken += size;
        const job = deliverBatch(work)
          // A database failure while recording: the batch's leases run out and it is tried again.
          // Never left unhandled, which would end the process.
          .catch((error: unknown) => logger.error('A batch of webhook deliveries could not be recorded; it will be retried', error))
          .finally(() => {
            inFlight.delete(job);
            taken -= size;
          });
        inFlight.add(job);
      } else if (!woken && running) {
        await pause(pollMs);
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
