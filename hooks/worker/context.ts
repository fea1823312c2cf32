import type { Collection, Db } from 'mongodb';

import type { Clock } from '../../lib/clock.js';
import { generateId } from '../../lib/ids.js';
import type { Logger } from '../../lib/logger.js';
import { hookCollections, type AttemptDocument, type DeliveryDocument, type HookDocument, type HookEventDocument } from '../models.js';
import type { RetryPlan } from '../schedule.js';
import type { Sender } from '../send.js';
import type { OperationalEvent } from '../catalog.js';
import { createRateLimiter, type RateLimiter } from '../rate-limit.js';
import type { Metrics } from '../../lib/metrics.js';

/** A delivery held under this worker's lease. */
export type Leased = DeliveryDocument & { leaseOwner: string };

/** Deliveries a worker holds under one lease, with the hooks and events it already read for them, if any. */
export interface Taken {
  batch: Leased[];
  hooks?: HookDocument[];
  events?: HookEventDocument[];
}

/** What every stage of the worker reads: its collections, its clock, its name and its timings. */
export interface WorkerContext {
  deliveries: Collection<DeliveryDocument>;
  attempts: Collection<AttemptDocument>;
  hooks: Collection<HookDocument>;
  events: Collection<HookEventDocument>;
  send: Sender;
  retry: RetryPlan;
  clock: Clock;
  logger: Logger;
  /** This worker's id, as the outbox of its process names it on the events it records. */
  owner: string;
  pollMs: number;
  /** Attempts in flight at once for one hook. */
  concurrencyPerHook: number;
  /** Longer than an attempt can last, with room for the reads around it. */
  leaseMs: number;
  /** A hook failing without a success for this long is disabled. */
  disableAfterMs: number;
  retentionMs: number;
  /** Counts attempts and their outcomes, when metrics are on. */
  metrics?: Metrics;
  /** Places in each second's window of the hooks that set `config.maxPerSecond`. */
  rate: RateLimiter;
  /** Records an operational event about a hook (`Hook.Disabled`, ...), for the other hooks. */
  announce(event: OperationalEvent, hookId: string, data: Record<string, unknown>): Promise<void>;
}

export function workerContext(
  db: Db,
  options: Omit<WorkerContext, 'deliveries' | 'attempts' | 'hooks' | 'events' | 'leaseMs' | 'rate'> & { timeoutMs: number },
): WorkerContext {
  const { timeoutMs, ...rest } = options;
  return {
    ...rest,
    deliveries: db.collection<DeliveryDocument>(hookCollections.deliveries),
    attempts: db.collection<AttemptDocument>(hookCollections.attempts),
    hooks: db.collection<HookDocument>(hookCollections.hooks),
    events: db.collection<HookEventDocument>(hookCollections.events),
    leaseMs: 2 * timeoutMs + 5000,
    rate: createRateLimiter(db),
  };
}

/** A fresh lease token: this worker's id and a nonce, so that each take is told apart. */
export const newLease = ({ owner }: WorkerContext) => `${owner}.${generateId(8)}`;

/** How many more attempts a hook may have in flight in this worker now. */
export type Room = (hookId: string) => number;

/**
 * The worker's free slots, held at the moment a loop decides what to take (synchronously, after
 * its reads), so that two loops reading at once never take more than there is room for together.
 */
export interface Budget {
  available(): number;
  hold(count: number): void;
  release(count: number): void;
}

/** `ms` from now on the worker's clock. */
export const fromNow = ({ clock }: WorkerContext, ms: number) => new Date(clock.now().getTime() + ms);
