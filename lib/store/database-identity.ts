import type { Middleware } from 'koa';
import type { Db, MongoClient, ServerDescriptionChangedEvent } from 'mongodb';

import { isDuplicateKeyError } from '../errors.js';
import { generateId } from '../ids.js';
import type { Logger } from '../logger.js';
import { databaseRetryAfterSeconds } from './availability.js';

interface InstanceMarker {
  _id: 'instance';
  instance: string;
  createdAt: Date;
}

const markerId = 'instance' as const;
const lostMessage = 'the database this service was started on is gone; the service must be restarted';

const processIdOf = (topologyVersion: unknown): string | undefined => {
  const processId = (topologyVersion as { processId?: { toHexString?: () => string } } | null | undefined)?.processId;
  return typeof processId?.toHexString === 'function' ? processId.toHexString() : undefined;
};

export interface DatabaseWatch {
  /** Whether the database this process started on is gone. */
  readonly lost: boolean;
  /**
   * Koa middleware for every part that reads or writes: while a check is under way (the server's
   * process changed) requests wait for it, and once the database is lost they answer 503
   * `database.unavailable`.
   */
  middleware: Middleware;
  /** The same for the provider's routes, answering `temporarily_unavailable`. */
  providerMiddleware: Middleware;
  /** Checks now; resolves when the check is done. */
  check(): Promise<void>;
  stop(): void;
}

export interface DatabaseWatchOptions {
  logger: Logger;
  /** How often the marker is read besides when the server's process changes, in milliseconds. */
  intervalMs?: number;
  /** Called once, when the database is found lost. */
  onLost?(reason: string): void;
}

/**
 * Notices that the database this process started on was replaced: an engine that restarted empty,
 * a restore of another deployment, a connection string pointed elsewhere. Everything this process
 * set up on its start (unique indexes, the bootstrap application, its signing keys' records)
 * would be missing there, and carrying on would, among others, accept one username twice.
 *
 * The database holds a marker (`system`, `_id: "instance"`) with a random id, made by the first
 * process that ever started on it. Each process reads it at start, and again every `intervalMs`
 * and at once when the driver sees a server process it has not seen before (MongoDB's
 * `topologyVersion.processId`, new on every restart). A missing or different marker means the
 * database is lost: that is reported once, loudly, and requests answer 503 from then on.
 */
export async function watchDatabaseIdentity(client: MongoClient, db: Db, { logger, intervalMs = 5_000, onLost }: DatabaseWatchOptions): Promise<DatabaseWatch> {
  const markers = db.collection<InstanceMarker>('system');
  const expected = await markInstance();
  let lost = false;
  let pending: Promise<void> | undefined;
  /** A check that requests wait for: the one a new server process called for. */
  let gate: Promise<void> | undefined;
  let stopped = false;

  async function markInstance(): Promise<string> {
    try {
      await markers.updateOne({ _id: markerId }, { $setOnInsert: { instance: generateId(), createdAt: new Date() } }, { upsert: true });
    } catch (error) {
      // Two processes starting on a new database at once: the other one's marker stands.
      if (!isDuplicateKeyError(error)) throw error;
    }
    const marker = await markers.findOne({ _id: markerId });
    if (!marker) throw new Error('the database did not keep its instance marker');
    return marker.instance;
  }

  async function readMarker(): Promise<void> {
    if (lost || stopped) return;
    let marker: InstanceMarker | null;
    try {
      marker = await markers.findOne({ _id: markerId });
    } catch {
      // Unreachable is not lost: requests answer 503 on their own until it answers again.
      return;
    }
    if (marker?.instance === expected) return;
    lost = true;
    const reason = marker
      ? `the database now belongs to another deployment (instance ${marker.instance}, expected ${expected})`
      : `the database this process started on is gone: its instance marker ${expected} is missing (an engine restarted empty, or the data was removed)`;
    logger.error(`DATABASE LOST: ${reason}. Requests are refused with 503 until this process is restarted, which sets the new database up from scratch.`);
    onLost?.(reason);
  }

  function check(): Promise<void> {
    pending ??= readMarker().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  // A server process not seen before: check before serving further requests.
  const seenProcesses = new Set<string>();
  const hello = await db.admin().command({ hello: 1 });
  const startedOn = processIdOf(hello.topologyVersion);
  if (startedOn) seenProcesses.add(startedOn);
  const onDescription = ({ newDescription }: ServerDescriptionChangedEvent) => {
    const processId = processIdOf(newDescription.topologyVersion);
    if (!processId || seenProcesses.has(processId)) return;
    seenProcesses.add(processId);
    const checked = check();
    gate = checked;
    void checked.finally(() => {
      if (gate === checked) gate = undefined;
    });
  };
  client.on('serverDescriptionChanged', onDescription);
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();

  /** Waits for a check a new server process called for; once the database is lost, answers 503 with `body`. */
  const refusingOnceLost =
    (body: (ctx: Parameters<Middleware>[0]) => void): Middleware =>
    async (ctx, next) => {
      if (gate) await gate;
      if (!lost) return next();
      ctx.status = 503;
      ctx.set('Retry-After', String(databaseRetryAfterSeconds));
      body(ctx);
    };

  return {
    get lost() {
      return lost;
    },
    middleware: refusingOnceLost((ctx) => {
      ctx.body = { code: 'database.unavailable', message: lostMessage };
    }),
    providerMiddleware: refusingOnceLost((ctx) => {
      ctx.body = { error: 'temporarily_unavailable', error_description: lostMessage };
    }),
    check,
    stop() {
      stopped = true;
      clearInterval(timer);
      client.off('serverDescriptionChanged', onDescription);
    },
  };
}
