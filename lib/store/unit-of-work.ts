import { currentRequestId } from '../request-context.js';

import type { Database } from './database.js';
import { ApiError, isDuplicateKeyError } from '../errors.js';
import { generateId } from '../ids.js';
import { createIntents, type Intent } from './intents.js';
import {
  changesCollection,
  defaultChangeRetentionDays,
  type Change,
  type ChangeOf,
  type ChangeRecord,
  type ChangeSink,
  type IntentOf,
  type Origin,
} from './changes.js';
import { insertOwn } from './insert-each.js';
import { withSession } from './session.js';

/**
 * What a unit of work's code is given. Its queries need no session: the store's queries read the
 * unit's from `session.ts`, so that they share its transaction.
 */
export interface Write<K extends string = string> {
  /**
   * Says, before the writes that make them, which changes the unit is about to make (the entity,
   * the action, its id, and for a relation the owner's linked ids before). Without transactions it
   * is stored first, so that a crash after the writes but before their records is found and
   * resolved by looking at the entities (`intents.ts`); with transactions it costs nothing.
   */
  intend(...intents: Array<IntentOf<K>>): Promise<void>;
  record(change: ChangeOf<K>): void;
}

export type Writer<K extends string = string> = <T>(origin: Origin, work: (write: Write<K>) => Promise<T>) => Promise<T>;

/**
 * The one write path. A unit of work runs in one transaction and records what it changed in
 * the `changes` collection inside that same transaction, so a change and its record commit or
 * roll back together (the transactional outbox that webhooks deliver from). On a server without
 * transactions the records are written right after the work.
 */
export interface WriterOptions {
  /** How long change records are kept, in days. */
  retentionDays?: number;
  /** Runs once the unit of work has committed, with what it changed (clearing what those changes make stale). */
  afterCommit?(changes: Change[]): Promise<void>;
  /**
   * Which changes must be intended before they are written (those whose loss a crash would make
   * unseen: the ones that announce events). Without transactions, recording one of them without
   * its intent is a programming error, refused. By default none.
   */
  mustIntend?(change: Change): boolean;
}

export function createWriter<K extends string = string>(
  database: Database,
  sink?: ChangeSink,
  { retentionDays = defaultChangeRetentionDays, afterCommit, mustIntend = () => false }: WriterOptions = {},
): Writer<K> {
  const intents = database.transactions ? undefined : createIntents(database.db);
  return async (given, work) => {
    // The request being served, when the origin does not name one.
    const requestId = given.requestId ?? currentRequestId();
    const origin: Origin = requestId ? { ...given, requestId } : given;
    let announce = false;
    let committed: Change[] = [];
    const unit = intents?.unit(origin);
    let result;
    try {
      // Every query of the unit, and the records and events it writes, read its session from here (`session.ts`).
      result = await database.transaction((session) =>
        withSession(session, async () => {
          const changes: Array<Change & { _id?: string }> = [];
          const value = await work({
            intend: async (...planned) => {
              if (!unit) return;
              const stored: Intent[] = [];
              for (const { before, ...intent } of planned as Array<IntentOf<string>>) {
                if (!mustIntend({ ...intent, data: undefined })) continue;
                stored.push({ ...intent, ...(before !== undefined && { before: typeof before === 'function' ? await before() : before }) });
              }
              await unit.intend(stored);
            },
            record: (change) => {
              const intended = unit?.claim(change as Change);
              if (unit && !intended && mustIntend(change as Change)) {
                throw new TypeError(`the change ${change.entity}.${change.action} was recorded without being intended first`);
              }
              changes.push({ ...(change as Change), ...(intended && { _id: intended }) });
            },
          });
          // A retried transaction runs this again; the last run is the one that committed.
          committed = changes;
          if (changes.length > 0) {
            // An intended change keeps its intent's id: whoever writes it first (this unit, or a
            // resolver that found the unit crashed) writes it once.
            const records = dated(
              changes.map(({ _id = generateId(), ...change }) => ({ _id, ...change, origin })),
              retentionDays,
            );
            announce = await persist(database, sink, records);
          }
          return value;
        }),
      );
    } catch (error) {
      // A refusal decided before writing: its intents announce nothing. Any other failure (the
      // database gone mid-unit) leaves them to the resolver, which looks at what was written.
      if (error instanceof ApiError || isDuplicateKeyError(error)) await unit?.abandon().catch(() => undefined);
      throw error;
    }
    unit?.settle();
    if (announce) sink!.committed();
    if (committed.length > 0) await afterCommit?.(committed);
    return result;
  };
}

/**
 * Writes, as the writer would have, what a resolver found a stopped unit of work left unwritten
 * (`intents.ts`): the records of changes it made (`found`), and the events of records it wrote
 * (`recorded`: it may have stopped between the two). Events take their record's id, so one
 * written already stays the one.
 */
export function createRecordWriter(database: Database, sink: ChangeSink | undefined, retentionDays = defaultChangeRetentionDays) {
  return async (found: Array<Change & { _id: string; origin: Origin }>, recorded: ChangeRecord[]) => {
    const records = dated(found, retentionDays);
    if (records.length > 0) await insertOwn(database.db.collection<ChangeRecord>(changesCollection), records);
    const announced = [...recorded, ...records];
    if (announced.length > 0 && (await sink?.record(announced))) sink!.committed();
  };
}

/** Change records as stored: written now, kept `retentionDays`. */
function dated(changes: Array<Change & { _id: string; origin: Origin }>, retentionDays: number): ChangeRecord[] {
  const createdAt = new Date();
  const expiresAt = new Date(createdAt.getTime() + retentionDays * 24 * 60 * 60 * 1000);
  return changes.map((change) => ({ ...change, createdAt, expiresAt }));
}

/** Writes the records, then their events (the sink's); answers whether there were events. */
async function persist(database: Database, sink: ChangeSink | undefined, records: ChangeRecord[]) {
  await insertOwn(database.db.collection<ChangeRecord>(changesCollection), records);
  return (await sink?.record(records)) ?? false;
}
