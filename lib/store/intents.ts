import type { Db } from 'mongodb';

import type { Clock } from '../clock.js';
import { generateId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { CollectionIndexes } from './database.js';
import { insertOwn } from './insert-each.js';
import type { Change, ChangeRecord, Origin } from './changes.js';

/**
 * A change a unit of work is about to make. For a relation, `before` holds the owner's linked ids
 * before the write, so that what the write added and removed can be told afterwards.
 */
export interface Intent {
  entity: string;
  action: string;
  id: string;
  before?: string[];
  /** For a relation owned by a pair (an organization's member): the owner's second part (the user). */
  key?: string;
}

export interface IntentDocument extends Intent {
  _id: string;
  /** The unit of work that stored it. */
  unit: string;
  origin: Origin;
  createdAt: Date;
}

export const intentsCollection = 'change_intents';

/** Read oldest first by the resolver, removed by unit when a refused unit abandons them. */
export const intentCollections: CollectionIndexes = {
  [intentsCollection]: [
    { key: { createdAt: 1 }, name: 'createdAt' },
    { key: { unit: 1 }, name: 'unit' },
  ],
};

/** One unit of work's intents: stored before its writes, claimed by the changes it records. */
export interface UnitIntents {
  intend(intents: Intent[]): Promise<void>;
  /** The id of the stored intent this change fulfils, if any (each intent is claimed once). */
  claim(change: Change): string | undefined;
  /**
   * The unit finished: its intents are spent (those claimed are recorded, the others were writes
   * that changed nothing). They are removed off the request's path; any left (a process that
   * stopped first) the resolver removes once it has looked.
   */
  settle(): void;
  /** Removes every intent of the unit: it was refused before it wrote. */
  abandon(): Promise<void>;
}

/**
 * The write-ahead half of the outbox on a database without transactions. A unit of work stores
 * what it is about to change before it writes; its change records (and their events) take the
 * intents' ids, so that they are written once whoever writes them. A process that stops between
 * the writes and the records leaves intents behind, which the resolver below finds and settles.
 */
export function createIntents(db: Db) {
  const collection = db.collection<IntentDocument>(intentsCollection);
  return {
    unit(origin: Origin): UnitIntents {
      const unit = generateId();
      const stored: IntentDocument[] = [];
      const claimed = new Set<string>();
      return {
        async intend(intents) {
          if (intents.length === 0) return;
          const createdAt = new Date();
          const documents = intents.map((intent) => ({ _id: generateId(), unit, ...intent, origin, createdAt }));
          await insertOwn(collection, documents);
          stored.push(...documents);
        },
        claim({ entity, action, id }) {
          const intent = stored.find(
            (candidate) => !claimed.has(candidate._id) && candidate.entity === entity && candidate.action === action && candidate.id === id,
          );
          if (intent) claimed.add(intent._id);
          return intent?._id;
        },
        settle() {
          if (stored.length > 0) void collection.deleteMany({ unit }).catch(() => undefined);
        },
        async abandon() {
          if (stored.length > 0) await collection.deleteMany({ unit });
        },
      };
    },
  };
}

/**
 * What an intent's entity shows now: the change to record (its data), or nothing when the write
 * did not happen (an entity to create that does not exist, one to delete that still does, links
 * that did not move).
 */
export type IntentState = (intent: IntentDocument) => Promise<{ data: unknown } | undefined>;

export interface IntentResolverOptions {
  /** Looks at the entities. */
  state: IntentState;
  /** Writes the change records (and so their events) of the changes found made, and the events of those recorded. */
  write(found: Array<Change & { _id: string; origin: Origin }>, recorded: ChangeRecord[]): Promise<void>;
  logger: Logger;
  clock: Clock;
  /** An intent older than this belongs to a unit that is no longer running, in milliseconds. */
  ageMs?: number;
  everyMs?: number;
}

/**
 * Settles the intents of units that did not finish: for each one older than `ageMs` whose record
 * was not written, it looks at the entity and records the change if it was made. Several
 * processes may do this at once, and a slow unit may still finish meanwhile: the records take the
 * intent's id, so each is written once.
 */
export function startIntentResolver(db: Db, { state, write, logger, clock, ageMs = 30_000, everyMs = 10_000 }: IntentResolverOptions) {
  const collection = db.collection<IntentDocument>(intentsCollection);
  const changes = db.collection<ChangeRecord>('changes');
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function resolve(): Promise<number> {
    const due = await collection
      .find({ createdAt: { $lt: new Date(clock.now().getTime() - ageMs) } })
      .sort({ createdAt: 1 })
      .limit(200)
      .toArray();
    if (due.length === 0) return 0;
    const ids = due.map(({ _id }) => _id);
    // A record written means the change was made; its events may not have been (written after it).
    const recorded = await changes.find({ _id: { $in: ids } }).toArray();
    const written = new Set(recorded.map(({ _id }) => _id));
    const found: Array<Change & { _id: string; origin: Origin }> = [];
    for (const intent of due) {
      if (written.has(intent._id)) continue;
      const made = await state(intent);
      if (made) found.push({ _id: intent._id, entity: intent.entity, action: intent.action, id: intent.id, data: made.data, origin: intent.origin });
    }
    await write(found, recorded);
    await collection.deleteMany({ _id: { $in: ids } });
    if (found.length > 0) {
      logger.warn(
        `Recorded ${found.length} changes that a stopped process had made without recording them: ${found.map(({ entity, action, id }) => `${entity}.${action} ${id}`).join(', ')}`,
      );
    }
    return due.length;
  }

  const loop = () => {
    if (stopped) return;
    running = resolve()
      .catch((error: unknown) => logger.error('Unfinished writes could not be resolved (retried later)', error))
      .then(() => undefined);
    void running.then(() => {
      if (!stopped) timer = setTimeout(loop, everyMs).unref();
    });
  };
  timer = setTimeout(loop, everyMs).unref();

  return {
    /** Resolves what is due now (tests, and a shutdown that wants it done). */
    resolveNow: resolve,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
