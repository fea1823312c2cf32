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
const unreachableMessage = 'the database cannot be reached at the moment; retry later';
/** How long a failed marker read answers for the requests after it, so that an outage does not make each of them wait for the driver's timeout. */
const unreachableMemoryMs = 1_000;

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
  /** For a route that needs no database (liveness): 503 once the database is lost, never for an outage. */
  lostOnlyMiddleware: Middleware;
  /** Whether a request may reach the database now (for a part that answers refusals its own way, the pages). */
  admit(): Promise<boolean>;
  /** Notes each answer: a 503 makes the next request check the database first. */
  observe: Middleware;
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
  let pending: Promise<boolean> | undefined;
  /** A check that requests wait for: the one a new server process called for. */
  let gate: Promise<unknown> | undefined;
  /**
   * Since the server went away (a request could not reach it, a monitor's heartbeat failed, a pool
   * was cleared), the database that answers next is not known to be this one: an engine restarted empty answers every read
   * (no such client, no users) as if it were true. Until a marker read says it is, no request
   * reaches it.
   */
  let suspect = false;
  /** When a marker read last failed to reach the database: requests meanwhile are answered 503 at once, without waiting for another. */
  let unreachableAt = -Infinity;
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

  /** Reads the marker: answers whether the database answered as this one; marks it lost when it is another. */
  async function readMarker(): Promise<boolean> {
    if (lost || stopped) return !lost;
    let marker: InstanceMarker | null;
    try {
      marker = await markers.findOne({ _id: markerId });
    } catch {
      // Unreachable is not lost: requests answer 503 until it answers again.
      unreachableAt = Date.now();
      return false;
    }
    if (marker?.instance === expected) {
      suspect = false;
      return true;
    }
    lost = true;
    const reason = marker
      ? `the database now belongs to another deployment (instance ${marker.instance}, expected ${expected})`
      : `the database this process started on is gone: its instance marker ${expected} is missing (an engine restarted empty, or the data was removed)`;
    logger.error(`DATABASE LOST: ${reason}. Requests are refused with 503 until this process is restarted, which sets the new database up from scratch.`);
    onLost?.(reason);
    return false;
  }

  function check(): Promise<boolean> {
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
    // The server is gone for now: whatever answers next is checked before it is trusted.
    if (newDescription.type === 'Unknown') suspect = true;
    const processId = processIdOf(newDescription.topologyVersion);
    if (!processId || seenProcesses.has(processId)) return;
    seenProcesses.add(processId);
    const checked = check();
    gate = checked;
    void checked.finally(() => {
      if (gate === checked) gate = undefined;
    });
  };
  const onPoolCleared = () => {
    suspect = true;
  };
  client.on('serverDescriptionChanged', onDescription);
  client.on('connectionPoolCleared', onPoolCleared);
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();

  type Context = Parameters<Middleware>[0];
  const refuse = (ctx: Context, body: (ctx: Context) => void) => {
    ctx.status = 503;
    ctx.set('Retry-After', String(databaseRetryAfterSeconds));
    body(ctx);
  };

  /**
   * Whether a request may reach the database now: after a check a new server process called for,
   * and, since the server went away, once a marker read (shared by every request waiting) found
   * this database. False while it cannot be read, or once it is lost.
   */
  async function admit(): Promise<boolean> {
    if (gate) await gate;
    if (lost) return false;
    if (!suspect) return true;
    if (Date.now() - unreachableAt < unreachableMemoryMs) return false;
    return (await check()) && !lost;
  }

  /** Notes a request's answer: one that could not reach the database (503) means the server may come back as another. */
  const observe: Middleware = async (ctx, next) => {
    await next();
    if ((ctx.respond === false ? ctx.res.statusCode : ctx.status) === 503) suspect = true;
  };

  /** Refuses (503) a request `admit` does not let through: with `body` once the database is lost, else with `unreachable`. */
  const admitting =
    (body: (ctx: Context) => void, unreachable: (ctx: Context) => void): Middleware =>
    async (ctx, next) => {
      if (!(await admit())) return refuse(ctx, lost ? body : unreachable);
      await observe(ctx, next);
    };

  return {
    get lost() {
      return lost;
    },
    admit,
    observe,
    middleware: admitting(
      (ctx) => {
        ctx.body = { code: 'database.unavailable', message: lostMessage };
      },
      (ctx) => {
        ctx.body = { code: 'database.unavailable', message: unreachableMessage, data: { retryAfter: databaseRetryAfterSeconds } };
      },
    ),
    providerMiddleware: admitting(
      (ctx) => {
        ctx.body = { error: 'temporarily_unavailable', error_description: lostMessage };
      },
      (ctx) => {
        ctx.body = { error: 'temporarily_unavailable', error_description: unreachableMessage };
      },
    ),
    lostOnlyMiddleware: async (ctx, next) => {
      if (gate) await gate;
      if (!lost) return next();
      refuse(ctx, (context) => {
        context.body = { code: 'database.unavailable', message: lostMessage };
      });
    },
    async check() {
      await check();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      client.off('serverDescriptionChanged', onDescription);
      client.off('connectionPoolCleared', onPoolCleared);
    },
  };
}
