import type { Db } from 'mongodb';

import { systemClock, type Clock } from '../../lib/clock.js';
import { generateId } from '../../lib/ids.js';
import type { Logger } from '../../lib/logger.js';
import type { RetryPlan } from '../schedule.js';
import type { Sender } from '../send.js';
import { deliverBatch } from './attempt.js';
import { workerContext, type Taken } from './context.js';
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
 * (due deliveries are taken and settled, `lease.ts`), the attempt (a batch is sent and recorded,
 * `attempt.ts`); this file is the loop that runs them.
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
    timeoutMs: options.timeoutMs,
    disableAfterMs: options.disableAfterMs,
    retentionMs: options.retentionMs,
  });
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

  /** New events first: what their fan-out takes is sent at once; otherwise whatever is due. */
  async function take(free: number): Promise<Taken | undefined> {
    const { taken: fannedOut, more } = await fanOut(context, free);
    // A full batch may leave more behind it: look again at once.
    if (more) woken = true;
    if (fannedOut) return fannedOut;
    const batch = await claim(context, free);
    return batch.length > 0 ? { batch } : undefined;
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
        work = await take(free);
        failures = 0;
      } catch (error) {
        // The database is unreachable: say so once per outage, and keep trying.
        if (failures++ === 0) logger.error('Webhook delivery cannot read the database; retrying', error);
      }
      if (work) {
        const size = work.batch.length;
        taken += size;
        const job = deliverBatch(context, work)
          // A database failure while recording: the batch's leases run out and it is tried again.
          // Never left unhandled, which would end the process.
          .catch((error: unknown) => logger.error('A batch of webhook deliveries could not be recorded; it will be retried', error))
          .finally(() => {
            inFlight.delete(job);
            taken -= size;
          });
        inFlight.add(job);
      } else if (!woken && running) {
        await pause(context.pollMs);
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
