import type { ChangeStream, Db } from 'mongodb';

import type { Logger } from '../logger.js';

type Operation = 'insert' | 'update' | 'replace';

/**
 * What the feed calls when a watched collection gets a write of one of `on`: a worker's wake. A
 * worker's own updates (a delivery's attempt, a record chained) are left out by naming only the
 * inserts it waits for, or it would wake itself.
 */
export type Wakers = Readonly<Record<string, { on: readonly Operation[]; wake: () => void }>>;

export interface ChangeFeed {
  /** Whether a change stream is open now (false on an engine without them: the workers poll). */
  readonly active: boolean;
  stop(): Promise<void>;
}

export interface ChangeFeedOptions {
  logger: Logger;
  /** How long after a stream failed (or could not open) another is tried. */
  retryMs?: number;
}

/**
 * Wakes the polling workers when another process writes what they wait for, through one change
 * stream on the database (MongoDB 4.0+ on a replica set or sharded cluster). Polling stays as it
 * is: the stream shortens the wait, it is never what correctness rests on. Where change streams
 * are unavailable (a standalone server, the embedded engine) the first failure is said once and the
 * stream is tried again every `retryMs`; a stream that fails after it worked (a lost primary the
 * driver could not resume from) is reopened the same way. Only the namespace of each change is
 * asked for, never the documents.
 */
export function startChangeFeed(db: Db, wakers: Wakers, { logger, retryMs = 60_000 }: ChangeFeedOptions): ChangeFeed {
  const collections = Object.keys(wakers);
  let stream: ChangeStream | undefined;
  let timer: NodeJS.Timeout | undefined;
  let active = false;
  let stopped = false;
  let saidUnavailable = false;

  function open() {
    if (stopped || collections.length === 0) return;
    // The server's own wait for each getMore (1 s) stays well under the socket timeout, which a longer one would trip.
    const opened = db.watch([
      { $match: { $or: Object.entries(wakers).map(([coll, { on }]) => ({ 'ns.coll': coll, operationType: { $in: [...on] } })) } },
      // The resume token (`_id`) is kept, or the stream could not resume after a failover.
      { $project: { _id: 1, ns: 1, operationType: 1 } },
    ]);
    stream = opened;
    opened.on('init', () => {
      if (stopped) return;
      active = true;
      saidUnavailable = false;
      logger.info(`Change streams on: ${collections.join(', ')} wake their workers (polling goes on beside them)`);
    });
    opened.on('change', (change: { ns?: { coll?: string }; operationType?: string }) => {
      const coll = change.ns?.coll;
      const waker = coll !== undefined && Object.hasOwn(wakers, coll) ? wakers[coll] : undefined;
      if (waker && waker.on.includes(change.operationType as Operation)) waker.wake();
    });
    opened.on('error', (error: Error) => {
      if (stream !== opened) return;
      stream = undefined;
      void opened.close().catch(() => undefined);
      if (stopped) return;
      if (active) logger.warn(`The change stream failed (${error.message}); the workers poll until another opens`);
      else if (!saidUnavailable) logger.info(`Change streams are unavailable here (${error.message}); the workers poll`);
      saidUnavailable = true;
      active = false;
      timer = setTimeout(open, retryMs);
      timer.unref();
    });
  }

  open();
  return {
    get active() {
      return active;
    },
    async stop() {
      stopped = true;
      active = false;
      clearTimeout(timer);
      const closing = stream;
      stream = undefined;
      await closing?.close().catch(() => undefined);
    },
  };
}
