import type { Db, Document, Filter, MatchKeysAndValues } from 'mongodb';

import { ApiError, duplicateKeyIndex, isDuplicateKeyError, notFound } from '../errors.js';
import type { Page } from './models.js';
import { insertOwn } from './insert-each.js';
import { inUnit } from './session.js';

export interface EntityDocument {
  _id: string;
  createdAt: number;
}

/** Maps a unique index (by name, which is its field's) to the 422 that a duplicate gets. */
export type ConflictTable = Record<string, () => ApiError>;

export interface EntityOptions {
  collection: string;
  /** Singular, for messages: `role`, `organization`. */
  label: string;
  conflicts?: ConflictTable;
}

/**
 * The queries every entity has: insert, find by id (or 404), list a page newest first, count,
 * update, delete. A write that a unique index refuses becomes the 422 named in `conflicts`.
 */
/**
 * Runs a write that a unique index may refuse, turning the refusal into the 422 the API promises:
 * the one named for that index in a table, or the only one there is.
 */
export async function refusingDuplicates<R>(write: () => Promise<R>, conflicts: ConflictTable | (() => ApiError)): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const conflict = typeof conflicts === 'function' ? conflicts : conflicts[duplicateKeyIndex(error) ?? ''];
    throw conflict ? conflict() : error;
  }
}

export function createEntityQueries<T extends EntityDocument & Document>(db: Db, { collection: name, label, conflicts = {} }: EntityOptions) {
  const collection = db.collection<T>(name);
  const byId = (id: string) => ({ _id: id }) as Filter<T>;

  return {
    collection,

    async insert(document: T): Promise<T> {
      await refusingDuplicates(() => insertOwn(collection, [document]), conflicts);
      return document;
    },

    findById: (id: string) => collection.findOne(byId(id), inUnit()) as Promise<T | null>,

    async findByIdOrThrow(id: string): Promise<T> {
      const found = (await collection.findOne(byId(id), inUnit())) as T | null;
      if (!found) throw notFound(label, id);
      return found;
    },

    /** All of `ids` that exist, in no particular order. */
    findByIds: (ids: string[]) =>
      ids.length === 0 ? Promise.resolve([]) : (collection.find({ _id: { $in: ids } } as Filter<T>, inUnit()).toArray() as Promise<T[]>),

    /** Throws 404 naming the first of `ids` that does not exist. */
    async assertAllExist(ids: string[]): Promise<T[]> {
      const found = (await collection.find({ _id: { $in: ids } } as Filter<T>, inUnit()).toArray()) as T[];
      const known = new Set(found.map(({ _id }) => _id));
      const missing = ids.find((id) => !known.has(id));
      if (missing !== undefined) throw notFound(label, missing);
      return found;
    },

    /** Newest first; a page of them, or every one when no page is given (a list Logto answers whole). */
    find: (filter: Filter<T>, page?: Page, { maxTimeMS }: { maxTimeMS?: number } = {}) => {
      const sorted = collection.find(filter, { ...(maxTimeMS && { maxTimeMS }), ...inUnit() }).sort({ createdAt: -1, _id: -1 });
      return (page ? sorted.skip(page.skip).limit(page.limit) : sorted).toArray() as Promise<T[]>;
    },

    /** Sets fields only while the document still matches `condition` (a compare-and-set); answers whether it did. */
    async updateIf(id: string, condition: Filter<T>, set: Partial<Omit<T, '_id'>>): Promise<boolean> {
      const { modifiedCount } = await collection.updateOne({ ...condition, _id: id } as Filter<T>, { $set: set as MatchKeysAndValues<T> }, inUnit());
      return modifiedCount === 1;
    },

    count: (filter: Filter<T>, { maxTimeMS }: { maxTimeMS?: number } = {}) =>
      collection.countDocuments(filter, { ...(maxTimeMS && { maxTimeMS }), ...inUnit() }),

    async update(id: string, set: Partial<Omit<T, '_id'>>): Promise<T> {
      const { matchedCount } = await refusingDuplicates(() => collection.updateOne(byId(id), { $set: set as MatchKeysAndValues<T> }, inUnit()), conflicts);
      if (matchedCount === 0) throw notFound(label, id);
      return (await collection.findOne(byId(id), inUnit())) as T;
    },

    /** Deletes and returns the document as it was; 404 when there was none. */
    async delete(id: string): Promise<T> {
      const before = (await collection.findOne(byId(id), inUnit())) as T | null;
      if (!before) throw notFound(label, id);
      const { deletedCount } = await collection.deleteOne(byId(id), inUnit());
      if (deletedCount === 0) throw notFound(label, id);
      return before;
    },
  };
}

export type EntityQueries<T extends EntityDocument & Document> = ReturnType<typeof createEntityQueries<T>>;

/** A case-insensitive substring match for a user-typed search (Logto's `%` wildcards are dropped). */
export function containsPattern(search: string): RegExp {
  return new RegExp(search.replaceAll('%', '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
}
