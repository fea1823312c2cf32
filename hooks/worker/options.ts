import type { Db } from 'mongodb';

import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../lib/metrics.js';
import type { RetryPlan } from '../schedule.js';
import type { Sender } from '../send.js';
import type { Sequencer } from '../sequencer.js';
import type { WorkerContext } from './context.js';

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
  /** Numbers recorded events (after commit) before they are fanned out. */
  sequencer: Sequencer;
  /** Records an operational event about a hook. */
  announce: WorkerContext['announce'];
  /** Counts attempts and their outcomes, when metrics are on. */
  metrics?: Metrics;
}

export interface DeliveryWorker {
  start(): void;
  /** Looks for new events and due deliveries now (a local commit recorded some). */
  wake(): void;
  /** Stops taking deliveries and waits for the attempts in flight. */
  stop(): Promise<void>;
  /** Whether it runs and keeps turning (readiness). */
  health(staleMs: number): { running: boolean; ok: boolean; reason?: string };
}
