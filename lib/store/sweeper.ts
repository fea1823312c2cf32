import type { Db, Filter } from 'mongodb';

/** Any document with an end: its id and the field that says when. */
type Ending = { _id: unknown } & Record<string, unknown>;

import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CollectionIndexes } from './database.js';
import { createOwnerLocks } from './owner-lock.js';

/** A collection whose documents end: those whose `field` is more than `afterSeconds` in the past are dead. */
export interface SweepTarget {
  collection: string;
  field: string;
  afterSeconds: number;
}

/** The collections with a TTL index, read off the declarations: what MongoDB's TTL monitor would delete. */
export function sweepTargets(collections: CollectionIndexes): SweepTarget[] {
  return Object.entries(collections).flatMap(([collection, indexes]) =>
    indexes
      .filter(({ expireAfterSeconds, key }) => expireAfterSeconds !== undefined && Object.keys(key).length === 1)
      .map(({ key, expireAfterSeconds }) => ({ collection, field: Object.keys(key)[0]!, afterSeconds: expireAfterSeconds! })),
  );
}

export interface SweepBounds {
  /** Documents deleted by one command. */
  batchSize: number;
  /** Commands per collection and run: what is left waits for the next run. */
  maxBatches: number;
}

/**
 * Deletes what is dead in each target, a batch at a time (the ids of a batch, then a delete of
 * those still dead), at most `maxBatches` per collection. Answers the count per collection.
 */
export async function sweepOnce(db: Db, targets: SweepTarget[], now: Date, { batchSize, maxBatches }: SweepBounds): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const { collection, field, afterSeconds } of targets) {
    const dead = { [field]: { $lt: new Date(now.getTime() - afterSeconds * 1000) } } as Filter<Ending>;
    const documents = db.collection<Ending>(collection);
    for (let batch = 0; batch < maxBatches; batch += 1) {
      const ids = (
        await documents
          .find(dead, { projection: { _id: 1 } })
          .limit(batchSize)
          .toArray()
      ).map(({ _id }) => _id);
      if (ids.length === 0) break;
      const { deletedCount } = await documents.deleteMany({ $and: [{ _id: { $in: ids } }, dead] });
      deleted[collection] = (deleted[collection] ?? 0) + deletedCount;
      if (ids.length < batchSize) break;
    }
  }
  return deleted;
}

export interface SweeperOptions extends Partial<SweepBounds> {
  logger: Logger;
  clock: Clock;
  everyMs?: number;
}

/**
 * The service's own TTL monitor: every `everyMs`, one process at a time (a lease), deletes the
 * documents whose TTL index has expired them. On MongoDB the TTL monitor does this too (within a
 * minute) and the sweep finds little; on an engine without one (the embedded engine), it is what
 * keeps history from costing forever. Collections without a TTL index (the impersonation audit,
 * whose chain must stay whole) are never swept. `clock` schedules the runs (a test moves it); what
 * is dead is judged by the system's time, as MongoDB's TTL monitor judges it, since that is the
 * time the documents' ends were written in.
 */
export function startSweeper(db: Db, targets: SweepTarget[], { logger, clock, everyMs = 60_000, batchSize = 500, maxBatches = 20 }: SweeperOptions) {
  const withLease = createOwnerLocks(db, { leaseMs: 5 * 60_000, waitMs: 0 });
  let stopped = false;
  let wait = clock.wait(everyMs);
  let running: Promise<void> = Promise.resolve();

  async function run() {
    const started = Date.now();
    const deleted = await withLease('sweeper', () => sweepOnce(db, targets, new Date(), { batchSize, maxBatches })).catch((error: unknown) => {
      // Another process holds the lease: it sweeps this time.
      if (error instanceof ApiError && error.code === 'request.conflict') return {};
      throw error;
    });
    const total = Object.values(deleted).reduce((sum, count) => sum + count, 0);
    if (total > 0) logger.info('swept expired documents', { deleted, durationMs: Date.now() - started });
  }

  const loop = async () => {
    while (!stopped) {
      await wait.done;
      if (stopped) return;
      running = run().catch((error: unknown) => logger.error('the sweep failed (tried again at the next one)', error));
      await running;
      wait = clock.wait(everyMs);
    }
  };
  void loop();

  return {
    /** Sweeps now (tests, benchmarks); answers once done. */
    sweepNow: () => run(),
    async stop() {
      stopped = true;
      wait.cancel();
      await running;
    },
  };
}
