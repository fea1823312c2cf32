import type { Db } from 'mongodb';

import { ApiError, isDuplicateKeyError } from '../errors.js';
import { generateId } from '../ids.js';

interface LockDocument {
  _id: string;
  token: string;
  until: Date;
}

const ownerLocksCollection = 'owner_locks';

/**
 * One writer at a time per key (an owner's set of links), across processes, with or without
 * transactions: a read-diff-write of a set is then never interleaved with another's. The lock is
 * a document whose `_id` is the key: taking it inserts it, or takes it over once its lease has
 * run out (a holder that died); a second taker meets the unique `_id` and waits. Held for at most
 * `leaseMs`; a writer that cannot take it within `waitMs` is answered 409 `request.conflict`.
 */
export function createOwnerLocks(db: Db, { leaseMs = 10_000, waitMs = 10_000 } = {}) {
  const locks = db.collection<LockDocument>(ownerLocksCollection);

  return async function withOwnerLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const token = generateId();
    const deadline = Date.now() + waitMs;
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        await locks.updateOne({ _id: key, until: { $lt: new Date() } }, { $set: { token, until: new Date(Date.now() + leaseMs) } }, { upsert: true });
        break;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        if (Date.now() > deadline) throw new ApiError('request.conflict', 'another change to the same set is under way; try again');
        await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
      }
    }
    try {
      return await work();
    } finally {
      // A release that fails leaves the lock to its lease: the next writer takes it over then.
      await locks.deleteOne({ _id: key, token }).catch(() => undefined);
    }
  };
}

export type OwnerLocks = ReturnType<typeof createOwnerLocks>;
