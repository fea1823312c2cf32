import {
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoStalePrimaryError,
  MongoTopologyClosedError,
  type Db,
  type MongoClientOptions,
} from 'mongodb';

import { ApiError } from '../errors.js';

/** What a caller is told to wait before retrying while the database cannot be reached, in seconds. */
export const databaseRetryAfterSeconds = 5;

/** How long the driver may wait for the database, in milliseconds (`MONGODB_*_TIMEOUT_MS`). */
export interface DatabaseTimeouts {
  /** Finding a server to run an operation on; also the bound on opening a connection. */
  serverSelectionTimeoutMs: number;
  /** A connection that has been sent an operation and hears nothing back for this long is closed. */
  socketTimeoutMs: number;
}

export const defaultDatabaseTimeouts: DatabaseTimeouts = { serverSelectionTimeoutMs: 5_000, socketTimeoutMs: 10_000 };

/**
 * The driver's options that bound every wait on the database. The driver's own defaults wait 30 s
 * to find a server and forever for an answer on an open connection, so that a stalled server
 * held requests for as long as it stalled. Monitoring connections use the connect timeout as
 * theirs, so a stall is also noticed by the monitor within a heartbeat and this bound.
 */
export function driverTimeouts({ serverSelectionTimeoutMs, socketTimeoutMs }: DatabaseTimeouts): MongoClientOptions {
  return { serverSelectionTimeoutMS: serverSelectionTimeoutMs, connectTimeoutMS: serverSelectionTimeoutMs, socketTimeoutMS: socketTimeoutMs };
}

/**
 * Whether an error says that the database could not be reached or did not answer in time, as
 * opposed to refusing the operation: the caller may retry the same request later. A network
 * error includes its timeout; a server that could not be selected, and a client closed by a
 * stopping process, also mean "not now".
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof ApiError) return error.code === 'database.unavailable';
  // Errors by shape, not by realm: Node's own (a socket's) are not `instanceof` another context's `Error`.
  const isError = (value: unknown): value is Error => typeof value === 'object' && value !== null && typeof (value as Error).message === 'string';
  for (let cause = error, depth = 0; isError(cause) && depth < 5; cause = cause.cause, depth += 1) {
    if (unavailableErrors.some((kind) => cause instanceof kind) || unavailableNames.has(cause.name)) return true;
    if (serverUnavailableCodes.has((cause as { code?: unknown }).code as number)) return true;
    // A connection the server closed under a write: the driver (7.8) lets the socket's own error
    // through unwrapped when the write waits for the socket to drain. Not under a `fetch` failure
    // (a TypeError), which is an outbound call's, not the database's.
    if ((error as Error).name !== 'TypeError' && brokenSocketCodes.has((cause as { code?: unknown }).code as string)) return true;
    // The driver's own verdict that an operation may be tried again later.
    const labelled = cause as { hasErrorLabel?: (label: string) => boolean };
    if (typeof labelled.hasErrorLabel === 'function' && transientLabels.some((label) => labelled.hasErrorLabel!(label))) return true;
  }
  return false;
}

/** The driver's errors that mean "not now": no server, no connection, no answer in time, a client closing. */
const unavailableErrors = [
  MongoNetworkError,
  MongoServerSelectionError,
  MongoNotConnectedError,
  MongoTopologyClosedError,
  MongoClientClosedError,
  MongoServerClosedError,
  MongoOperationTimeoutError,
  MongoStalePrimaryError,
];
/** The same, for the driver's errors it does not export: a connection pool closed, or no connection free in time. */
const unavailableNames = new Set(['MongoPoolClosedError', 'MongoWaitQueueTimeoutError']);
/** A socket's own errors when the other end closed or reset it. */
const brokenSocketCodes = new Set(['EPIPE', 'ECONNRESET']);
const transientLabels = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool', 'SystemOverloadedError'];

/**
 * Server answers that mean "not here, not now": a host unreachable or not found (6, 7), a network
 * timeout (89, 202, 9001), a stepping-down or not-primary server (189, 10107, 11602, 13435, 13436),
 * a server shutting down (91, 11600), no server fit to read from (133), a time limit of the
 * server's own (262).
 */
const serverUnavailableCodes = new Set([6, 7, 89, 91, 133, 189, 202, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

export function databaseUnavailable(): ApiError {
  return new ApiError('database.unavailable', 'the database cannot be reached at the moment; retry later', { retryAfter: databaseRetryAfterSeconds });
}

/**
 * Whether the database answers a ping within `withinMs`, for the health check. A ping that has not
 * answered by then is left to the driver's own bounds; the check does not wait for it.
 */
export async function databaseAnswers(db: Db, withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
  });
  try {
    return await Promise.race([
      db.command({ ping: 1 }).then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
