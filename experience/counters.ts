import type { Db } from 'mongodb';

import { isDuplicateKeyError } from '../lib/errors.js';

import { sha256 } from '../lib/ids.js';

/** How many attempts a window allows, and how long the window is. */
export interface Limit {
  limit: number;
  windowMs: number;
}

const minute = 60_000;

/**
 * Every limit of the sign-in experience. A failed password counts against the identifier *and*
 * the caller's address together, so that nobody can lock a user out from elsewhere; sending
 * codes is limited per address and per caller, so that the mailer cannot be turned on a victim.
 */
export const limits = {
  failedPassword: { limit: 5, windowMs: 15 * minute },
  codePerEmail: { limit: 5, windowMs: 60 * minute },
  codePerIp: { limit: 20, windowMs: 60 * minute },
} satisfies Record<string, Limit>;

export type LimitName = keyof typeof limits;

interface CounterDocument {
  _id: string;
  count: number;
  expiresAt: Date;
}

/** One counted attempt: the window's count with it, and the seconds left in the window. */
export interface Attempt {
  count: number;
  retryAfter: number;
  /** This attempt is past the limit: refuse it without doing the work. */
  over: boolean;
  /** This attempt used the window up: the next one will be over. */
  last: boolean;
}

/**
 * Fixed-window counters in MongoDB, shared by every process. An attempt is counted *before* the
 * work it guards (one atomic upsert, the count read after it), so parallel attempts cannot all
 * pass a check made before any of them counted.
 */
export function createCounters(db: Db, now: () => number = Date.now) {
  const counters = db.collection<CounterDocument>('attempt_counters');

  const windowOf = (name: LimitName, key: string) => {
    const { windowMs } = limits[name];
    const start = Math.floor(now() / windowMs) * windowMs;
    // The key is hashed: it holds identifiers and addresses, which need not sit in clear here.
    return { id: `${name}:${sha256(key)}:${start}`, end: start + windowMs };
  };
  const secondsUntil = (end: number) => Math.max(1, Math.ceil((end - now()) / 1000));

  return {
    async hit(name: LimitName, key: string): Promise<Attempt> {
      const { id, end } = windowOf(name, key);
      const increment = () => counters.updateOne({ _id: id }, { $inc: { count: 1 }, $setOnInsert: { expiresAt: new Date(end) } }, { upsert: true });
      try {
        await increment();
      } catch (error) {
        // Two first attempts raced to insert the window; the loser increments what the winner made.
        if (!isDuplicateKeyError(error)) throw error;
        await increment();
      }
      const count = (await counters.findOne({ _id: id }))?.count ?? 1;
      const { limit } = limits[name];
      return { count, retryAfter: secondsUntil(end), over: count > limit, last: count >= limit };
    },

    async clear(name: LimitName, key: string): Promise<void> {
      await counters.deleteOne({ _id: windowOf(name, key).id });
    },
  };
}

export type Counters = ReturnType<typeof createCounters>;
