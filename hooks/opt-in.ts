import type { Db } from 'mongodb';

import type { Logger } from '../lib/logger.js';
import { createBatch } from '../lib/store/batch.js';
import type { KeyedCache } from '../lib/store/cache.js';
import { optInEvents, type OptInEvent } from './catalog.js';
import { hookCollections } from './models.js';
import type { LifecycleReport, Outbox } from './outbox.js';

/** A report of an opt-in event: as a lifecycle event's, about whatever it names. */
export type OptInReport = Omit<LifecycleReport, 'event' | 'entity'> & { event: OptInEvent; entity?: LifecycleReport['entity'] };

/** How often the set of subscribed opt-in events is read again even without a hook change (a hook the worker disabled records none). */
const rereadMs = 60_000;

/** The cache of which opt-in events some enabled hook names, under the one key it has. */
export const subscriptionsKey = 'optIn';

/** Loads the opt-in events some enabled hook names (the `hookSubscriptions` cache's loader). */
export const loadOptInSubscriptions = (db: Db) => async (): Promise<ReadonlySet<string>> => {
  const hooks = await db
    .collection<{ enabled: boolean; events: string[] }>(hookCollections.hooks)
    .find({ enabled: true, events: { $in: [...optInEvents] } }, { projection: { events: 1 } })
    .toArray();
  const named = new Set<string>(optInEvents);
  return new Set(hooks.flatMap(({ events }) => events.filter((event) => named.has(event))));
};

/**
 * The opt-in, high-volume events (`Token.Issued`, `Token.Failed`, `Token.Revoked`,
 * `Authorization.Failed`, `SignIn.Failed`): recorded only while some enabled hook names them (a
 * per-process set, a cache cleared by every hook change here and in other processes, and read
 * again at least once a minute), never awaited by the request that caused them, and written
 * through a group commit: the reports of requests that overlap go to the database as one insert.
 * A process that stops between a request and its batch's insert loses that batch's events: they
 * are a stream for monitoring, kept `HOOKS_OPT_IN_RETENTION_HOURS`, not the durable record.
 */
export function createOptInEvents(outbox: Outbox, subscriptions: KeyedCache<ReadonlySet<string>>, logger: Logger) {
  const write = createBatch<OptInReport, void>((reports) => outbox.reportOptIn(reports), { maxInFlight: 2, maxBatch: 500 });
  const timer = setInterval(() => subscriptions.clear(), rereadMs);
  timer.unref();
  const pending = new Set<Promise<void>>();

  return {
    /** Records `report` (built only when wanted) if some enabled hook names its event; answers at once. */
    record(event: OptInEvent, report: () => Omit<OptInReport, 'event'> | undefined): void {
      const done = subscriptions
        .get(subscriptionsKey)
        .then(async (wanted) => {
          if (!wanted?.has(event)) return;
          const built = report();
          if (built) await write({ ...built, event });
        })
        .catch((error: unknown) => logger.error(`A ${event} event could not be recorded`, error))
        .finally(() => pending.delete(done));
      pending.add(done);
    },
    /** Waits for what was reported to be written (a clean stop). */
    async settle(): Promise<void> {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}

export type OptInEvents = ReturnType<typeof createOptInEvents>;
