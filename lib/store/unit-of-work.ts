import type { ClientSession } from 'mongodb';

import type { Database } from './database.js';
import { generateId } from '../ids.js';
import { insertOwn } from './insert-each.js';

/** What caused a write: the Management API request, or a flow of the provider. */
export interface Origin {
  method?: string;
  path?: string;
  /** The matched route pattern, e.g. `/api/users/:userId`. */
  route?: string;
  params?: Record<string, string>;
  /** The status the request answers with when it succeeds (the change commits only then). */
  status?: number;
  /** The client whose token made the request. */
  clientId?: string;
  ip?: string;
  userAgent?: string;
}

/** One change to one entity, as the webhooks issue will announce it. Never holds a secret. */
export interface Change {
  entity: string;
  /** What happened: `created`, `updated`, `deleted`, or a named part (`scopes.updated`). */
  action: string;
  id: string;
  /** The entity after the change; before it, for a delete; the ids added and removed, for a relation. */
  data: unknown;
}

export interface ChangeRecord extends Change {
  _id: string;
  origin: Origin;
  createdAt: Date;
  /** When the record leaves the log (a TTL index removes it). */
  expiresAt: Date;
}

/** How long change records are kept by default, in days. */
export const defaultChangeRetentionDays = 90;

/**
 * A change whose `Entity.action` is one of the keys `K`: a part of the service that names the
 * changes it records (its vocabulary) gets a misspelt one refused by the compiler.
 */
export type ChangeOf<K extends string> = string extends K
  ? Change
  : K extends `${infer E}.${infer A}`
    ? { entity: E; action: A; id: string; data: unknown }
    : never;

/** The entity and action a key names, one object type per key. */
export type ChangeNameOf<K extends string> = K extends `${infer E}.${infer A}` ? { entity: E; action: A } : never;

export interface Write<K extends string = string> {
  /** Pass to every query of the unit, so that they share its transaction. */
  session: ClientSession | undefined;
  record(change: ChangeOf<K>): void;
}

/**
 * Where change records go besides `changes`, inside the same transaction: the webhooks outbox.
 * `record` answers whether it queued anything, and `committed` is then called once the unit of
 * work has committed.
 */
export interface ChangeSink {
  record(records: ChangeRecord[], session: ClientSession | undefined): Promise<boolean>;
  committed(): void;
}

export type Writer<K extends string = string> = <T>(origin: Origin, work: (write: Write<K>) => Promise<T>) => Promise<T>;

export const changesCollection = 'changes';

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
}

export function createWriter<K extends string = string>(
  database: Database,
  sink?: ChangeSink,
  { retentionDays = defaultChangeRetentionDays, afterCommit }: WriterOptions = {},
): Writer<K> {
  return async (origin, work) => {
    let announce = false;
    let committed: Change[] = [];
    const result = await database.transaction(async (session) => {
      const changes: Change[] = [];
      const value = await work({
        session,
        record: (change) => {
          changes.push(change as Change);
        },
      });
      // A retried transaction runs this again; the last run is the one that committed.
      committed = changes;
      if (changes.length > 0) {
        const createdAt = new Date();
        const expiresAt = new Date(createdAt.getTime() + retentionDays * 24 * 60 * 60 * 1000);
        const records = changes.map((change) => ({ _id: generateId(), ...change, origin, createdAt, expiresAt }));
        await insertOwn(database.db.collection<ChangeRecord>(changesCollection), records, session);
        // A retried transaction runs this again; the last run is the one that committed.
        announce = (await sink?.record(records, session)) ?? false;
      }
      return value;
    });
    if (announce) sink!.committed();
    if (committed.length > 0) await afterCommit?.(committed);
    return result;
  };
}
