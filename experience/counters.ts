import type { Db } from 'mongodb';

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

/**
 * Fixed-window counters in MongoDB, shared by every process. One conditional upsert increments;
 * the count is read after it, so a caller sees at least its own increment.
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
    /** Seconds until `key` may try again, when its window is used up; otherwise `undefined`. */
    async blockedFor(name: LimitName, key: string): Promise<number | undefined> {
      const { id, end } = windowOf(name, key);
      const counter = await counters.findOne({ _id: id });
      return counter && counter.count >= limits[name].limit ? secondsUntil(end) : undefined;
    },

    /** Counts one attempt; answers the seconds to wait when this one used the window up. */
    async hit(name: LimitName, key: string): Promise<number | undefined> {
      const { id, end } = windowOf(name, key);
      const increment = () => counters.updateOne({ _id: id }, { $inc: { count: 1 }, $setOnInsert: { expiresAt: new Date(end) } }, { upsert: true });
      try {
        await increment();
      } catch (error) {
        // Two first attempts raced to insert the window; the loser increments what the winner made.
        if ((error as { code?: number }).code !== 11000) throw error;
        await increment();
      }
      const counter = await counters.findOne({ _id: id });
      return counter && counter.count >= limits[name].limit ? secondsUntil(end) : undefined;
    },

    async clear(name: LimitName, key: string): Promise<void> {
      await counters.deleteOne({ _id: windowOf(name, key).id });
    },
  };
}

export type Counters = ReturnType<typeof createCounters>;
