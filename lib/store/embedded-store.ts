import type { Database } from './database.js';
import { claimDataDir, restoreDataDir, startSnapshots, type Snapshots } from './data-dir.js';
import { startEmbeddedMongo, type EmbeddedMongo } from './embedded-mongo.js';
import type { Logger } from '../logger.js';

/** The embedded engine as the standalone server runs it without `MONGODB_URI`: in memory, or kept in a data directory. */
export interface EmbeddedStore extends EmbeddedMongo {
  /** The data directory, when the store is kept in one. */
  dataDir: string | undefined;
  /** Reads the directory's last good snapshot into the (empty) database; then snapshots it as it changes. */
  open(database: Database): Promise<void>;
  /** The last snapshot, taken once nothing writes any more (before the database closes). */
  finish(): Promise<void>;
}

export interface EmbeddedStoreOptions {
  dataDir: string | undefined;
  snapshotMs: number;
  logger: Logger;
}

/**
 * Starts the embedded engine; with a data directory, first takes the directory (it must be
 * writable and not in use by another process: a clear error otherwise, before anything starts).
 */
export async function startEmbeddedStore({ dataDir, snapshotMs, logger }: EmbeddedStoreOptions): Promise<EmbeddedStore> {
  const claimed = dataDir === undefined ? undefined : await claimDataDir(dataDir);
  let engine: EmbeddedMongo;
  try {
    engine = await startEmbeddedMongo();
  } catch (error) {
    await claimed?.release();
    throw error;
  }
  let snapshots: Snapshots | undefined;
  return {
    ...engine,
    dataDir,
    async open(database) {
      if (dataDir === undefined) return;
      const restored = await restoreDataDir(dataDir, database.db, logger);
      snapshots = startSnapshots(dataDir, database.client, database.db, { intervalMs: snapshotMs, logger, restored });
    },
    async finish() {
      await snapshots?.stop();
      snapshots = undefined;
    },
    async stop() {
      await engine.stop();
      await claimed?.release();
    },
  };
}

/** Live sign-ins (sessions, grants and tokens within their lifetime) up to which the embedded engine stays within 2x of its cost without them (BENCHMARKS.md, Growth). */
const liveSignInLimit = '1,000';

/** What the server says when it starts on the embedded engine: where its data lives, and where its limit is (BENCHMARKS.md, Growth). */
export function embeddedStoreNotice(dataDir: string | undefined, snapshotMs: number): string {
  const where =
    dataDir === undefined
      ? 'its data in memory only (DATA_DIR= or --in-memory): all of it is lost when the server stops'
      : `its data kept in ${dataDir} (written ${snapshotMs} ms after a write: a crash loses at most that; a clean stop nothing)`;
  return `MONGODB_URI is not set: using the embedded MongoDB-compatible engine, ${where}. It is for trying the service and for development: each insert costs time in proportion to its collection's size, and it stays within 2x of its cost at 100 users up to about 3,000 users and ${liveSignInLimit} live sign-ins (a session lasts 14 days; ended ones are swept). Beyond that, use a MongoDB replica set (docs/operations.md, "The embedded engine's limit").`;
}
