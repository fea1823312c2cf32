import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { BSON, type Db, type Document, type MongoClient } from 'mongodb';

import type { Logger } from '../logger.js';

/**
 * The embedded engine keeps everything in memory. This gives it a data directory: every few
 * seconds (when something was written) and on a clean stop, the database is written to a new file
 * that replaces the last one atomically (write, fsync, rename, fsync the directory); the one before
 * is kept as `previous`. At start the newest file whose checksum holds is read back, loudly when
 * it had to fall back. Indexes are not in the file: the service declares and creates them.
 *
 * A file holds each collection's documents as read one collection after another while requests
 * go on: after a crash the store is as it was at the last snapshot, each collection whole, the
 * last few seconds of writes lost (at most the interval); a clean stop writes a final snapshot
 * once nothing runs any more.
 */

const current = 'store.snapshot';
const previous = 'store.snapshot.previous';
const incoming = 'store.snapshot.incoming';
const lockName = 'lock';
const format = 'oidc-identity-store';

interface Header {
  format: typeof format;
  version: 1;
  writtenAt: string;
  /** When its reading began: it holds every write answered before then (a write during the reading may be in it or not). */
  takenAt?: string;
  documents: number;
  sha256: string;
}

/**
 * A snapshot's body: one EJSON line per document, `{c: collection, d: document}`, types kept (dates,
 * binaries, longs). The collections are those ever written to (the engine cannot list them).
 */
async function dump(db: Db, collections: Set<string>): Promise<{ body: string; documents: number }> {
  const lines: string[] = [];
  for (const name of [...collections].sort()) {
    for (const document of await db.collection(name).find({}).toArray()) lines.push(BSON.EJSON.stringify({ c: name, d: document }, { relaxed: false }));
  }
  return { body: lines.join('\n'), documents: lines.length };
}

const digest = (body: string) => createHash('sha256').update(body).digest('hex');

/** A snapshot file read and checked: its documents by collection, or why it cannot be used. */
async function readSnapshot(path: string): Promise<{ byCollection: Map<string, Document[]>; header: Header } | { problem: string } | undefined> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  const newline = text.indexOf('\n');
  let header: Header;
  try {
    header = JSON.parse(newline === -1 ? text : text.slice(0, newline)) as Header;
  } catch {
    return { problem: 'its header is not JSON (a half-written file?)' };
  }
  if (header.format !== format || header.version !== 1) return { problem: `it is not a version 1 ${format} file` };
  const body = newline === -1 ? '' : text.slice(newline + 1);
  if (digest(body) !== header.sha256) return { problem: 'its checksum does not match (damaged or cut short)' };
  const byCollection = new Map<string, Document[]>();
  for (const line of body === '' ? [] : body.split('\n')) {
    const { c, d } = BSON.EJSON.parse(line, { relaxed: false }) as { c: string; d: Document };
    byCollection.set(c, [...(byCollection.get(c) ?? []), d]);
  }
  return { byCollection, header };
}

/** Writes `text` to `path` durably: a new file, flushed, then renamed over the old one, and the directory flushed. */
async function replaceDurably(dir: string, name: string, text: string): Promise<void> {
  // The store holds signing keys, the sealing key and password hashes: readable by this user only.
  const file = await open(join(dir, incoming), 'w', 0o600);
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(join(dir, current), join(dir, previous)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rename(join(dir, incoming), join(dir, name));
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

export class DataDirError extends Error {
  override name = 'DataDirError';
}

/** Whether the process that wrote a lock still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data directory for this process: creates it, proves it writable, and holds its lock
 * (one process per directory: two would overwrite each other's snapshots). A lock left by a
 * process that no longer runs is taken over.
 */
export async function claimDataDir(dir: string): Promise<{ release(): Promise<void> }> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // A directory that existed keeps no wider access than a new one gets.
    await chmod(dir, 0o700);
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new DataDirError(`DATA_DIR ${dir} cannot be used: ${(error as Error).message}`);
  }
  const lock = join(dir, lockName);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx' });
      return { release: () => rm(lock, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new DataDirError(`DATA_DIR ${dir} cannot be used: ${(error as Error).message}`);
      const holder = Number(await readFile(lock, 'utf8').catch(() => 'NaN'));
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new DataDirError(`DATA_DIR ${dir} is in use by process ${holder}; give each server its own directory`);
      }
      await rm(lock, { force: true });
    }
  }
  throw new DataDirError(`DATA_DIR ${dir}: its lock could not be taken`);
}

/**
 * Reads the newest good snapshot of `dir` into `db` (which must be empty: a fresh engine). Answers
 * the collections it restored; says loudly when the newest file was bad and an older one served.
 */
export async function restoreDataDir(dir: string, db: Db, logger: Logger): Promise<string[]> {
  for (const name of [current, previous]) {
    const read = await readSnapshot(join(dir, name));
    if (!read) continue;
    if ('problem' in read) {
      logger.error(`DATA FILE UNUSABLE: ${join(dir, name)}: ${read.problem}; trying the one before it`, undefined, { dataDir: dir, file: name });
      continue;
    }
    for (const [collection, documents] of read.byCollection) {
      for (let start = 0; start < documents.length; start += 1000) await db.collection(collection).insertMany(documents.slice(start, start + 1000));
    }
    if (name === previous) logger.warn(`restored the previous snapshot (${read.header.writtenAt}): writes after it are lost`, { dataDir: dir });
    logger.info('restored the data directory', { dataDir: dir, documents: read.header.documents, writtenAt: read.header.writtenAt });
    return [...read.byCollection.keys()];
  }
  return [];
}

/** Write commands, each naming its collection: a snapshot is taken only after one of them ran. */
const writeCommands = new Set(['insert', 'update', 'delete', 'findAndModify', 'create', 'createIndexes']);

export interface Snapshots {
  /** Writes a snapshot now if anything was written since the last (a clean stop's last word). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Snapshots `db` into `dir` every `intervalMs` after a write. `client` must monitor commands
 * (`monitorCommands: true`): its write commands mark the store as changed and name the collections
 * to keep, beside those `restored`.
 */
export function startSnapshots(
  dir: string,
  client: MongoClient,
  db: Db,
  { intervalMs, logger, restored }: { intervalMs: number; logger: Logger; restored: string[] },
): Snapshots {
  let dirty = false;
  const collections = new Set(restored);
  const onCommand = ({ commandName, command, databaseName }: { commandName: string; command: Document; databaseName: string }) => {
    if (!writeCommands.has(commandName) || databaseName !== db.databaseName) return;
    const collection: unknown = command[commandName];
    if (typeof collection === 'string') collections.add(collection);
    dirty = true;
  };
  client.on('commandStarted', onCommand);
  let running: Promise<void> = Promise.resolve();

  async function snapshot() {
    if (!dirty) return;
    dirty = false;
    const started = Date.now();
    try {
      const { body, documents } = await dump(db, collections);
      const header: Header = {
        format,
        version: 1,
        writtenAt: new Date().toISOString(),
        takenAt: new Date(started).toISOString(),
        documents,
        sha256: digest(body),
      };
      await replaceDurably(dir, current, `${JSON.stringify(header)}\n${body}`);
      logger.debug?.('snapshot written', { dataDir: dir, documents, durationMs: Date.now() - started });
    } catch (error) {
      dirty = true;
      logger.error('snapshot failed; the next one tries again', error, { dataDir: dir });
    }
  }
  const flush = () => {
    running = running.then(snapshot);
    return running;
  };
  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return {
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
      client.off('commandStarted', onCommand);
    },
  };
}
