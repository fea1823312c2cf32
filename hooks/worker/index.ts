import type { Db } from 'mongodb';

import { systemClock, type Clock } from '../../lib/clock.js';
import { generateId } from '../../lib/ids.js';
import type { Logger } from '../../lib/logger.js';
import type { RetryPlan } from '../schedule.js';
import type { Sender } from '../send.js';
import { attempt, createRecorder } from './attempt.js';
import { workerContext, type Room, type Taken } from './context.js';
import { fanOut } from './fan-out.js';
import { claim } from './lease.js';

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
  /** Attempts in flight at once for one hook. */
  concurrencyPerHook: number;
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

/**
 * Delivers due deliveries, at least once, in several processes over one database. A worker takes
 * deliveries with a conditional update that moves their `nextAttemptAt` past the lease: only one
 * worker's update matches, so in normal operation one event reaches a hook once; if the worker
 * dies, the delivery is due again when the lease ends and another worker takes it over.
 *
 * The stages, each in its own file: fan-out (events become deliveries, `fan-out.ts`), the lease
 * (due deliveries are taken fairly across hooks, `lease.ts`), the attempt (one delivery sent, its
 * outcome group-committed, `attempt.ts`); this file is the loop that runs them, one slot per delivery.
 */
export function createDeliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, concurrency, logger, clock = systemClock } = options;
  const context = workerContext(db, {
    send: options.send,
    retry: options.retry,
    clock,
    logger,
    owner: options.owner ?? generateId(),
    pollMs: options.pollMs,
    concurrencyPerHook: options.concurrencyPerHook,
    timeoutMs: options.timeoutMs,
    disableAfterMs: options.disableAfterMs,
    retentionMs: options.retentionMs,
  });
  const record = createRecorder(context);
  let running = false;
  let loop: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();
  /** Attempts in flight per hook, until their endpoint has answered. */
  const busy = new Map<string, number>();
  const room: Room = (hookId) => context.concurrencyPerHook - (busy.get(hookId) ?? 0);
  /** Where the next claim starts among the hooks with due deliveries, so that each gets its turn. */
  let turn = 0;
  let woken = false;
  let interrupt: () => void = () => {};

  const pause = (ms: number) => {
    const { done, cancel } = clock.wait(ms);
    interrupt = cancel;
    return done;
  };
  const wake = () => {
    woken = true;
    interrupt();
  };

  /** New events first: what their fan-out takes is sent at once; otherwise whatever is due. */
  async function take(free: number): Promise<Taken | undefined> {
    const { taken: fannedOut, more } = await fanOut(context, free, room);
    // A full batch may leave more behind it: look again at once.
    if (more) woken = true;
    if (fannedOut) return fannedOut;
    const batch = await claim(context, free, room, turn++);
    return batch.length > 0 ? { batch } : undefined;
  }

  /**
   * Sends each delivery of what was taken on its own: each holds one of the process's slots
   * until its own outcome is recorded (not until the slowest of its batch is), and one of its
   * hook's slots until its endpoint has answered.
   */
  async function send({ batch, hooks: knownHooks, events: knownEvents }: Taken) {
    for (const { hookId } of batch) busy.set(hookId, (busy.get(hookId) ?? 0) + 1);
    const [hookList, eventList] = await Promise.all([
      knownHooks ?? context.hooks.find({ _id: { $in: [...new Set(batch.map(({ hookId }) => hookId))] } }).toArray(),
      knownEvents ?? context.events.find({ _id: { $in: batch.map(({ eventId }) => eventId) } }).toArray(),
    ]).catch((error: unknown) => {
      // The database is unreachable: the leases run out and the deliveries are taken again.
      logger.error('Webhook deliveries could not be read; they will be retried', error);
      return [undefined, undefined] as const;
    });
    const hookById = new Map(hookList?.map((hook) => [hook._id, hook]));
    const eventById = new Map(eventList?.map((event) => [event._id, event]));
    for (const delivery of batch) {
      let hookSlotHeld = true;
      /** The hook's slot is its endpoint's: it is free as soon as the endpoint has answered (or not), before the outcome is written. */
      const releaseHookSlot = () => {
        if (!hookSlotHeld) return;
        hookSlotHeld = false;
        const left = (busy.get(delivery.hookId) ?? 1) - 1;
        if (left > 0) busy.set(delivery.hookId, left);
        else busy.delete(delivery.hookId);
        wake();
      };
      const sent = hookList && eventList ? attempt(context, delivery, hookById.get(delivery.hookId), eventById.get(delivery.eventId)) : undefined;
      const job = (sent ? sent.finally(releaseHookSlot).then(record) : Promise.resolve())
        // A database failure while recording: its lease runs out and it is tried again. Never
        // left unhandled, which would end the process.
        .catch((error: unknown) => logger.error(`Webhook delivery ${delivery._id} could not be recorded; it will be retried`, error))
        .finally(() => {
          releaseHookSlot();
          inFlight.delete(job);
          // A slot is free: whatever waits for it may go now.
          wake();
        });
      inFlight.add(job);
    }
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
      let work: Taken | undefined;
      try {
        work = await take(free);
        failures = 0;
      } catch (error) {
        // The database is unreachable: say so once per outage, and keep trying.
        if (failures++ === 0) logger.error('Webhook delivery cannot read the database; retrying', error);
      }
      if (work) await send(work);
      else if (!woken && running) await pause(context.pollMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake,
    async stop() {
      running = false;
      interrupt();
      await loop;
      await Promise.all(inFlight);
    },
  };
}
