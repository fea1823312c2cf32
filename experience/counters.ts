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
 * Every limit of the sign-in experience, each keyed as its comment says (client addresses by
 * `addressKey`: IPv6 per /64).
 * - failedPassword: wrong passwords for one account (all its identifiers together; an unknown
 *   identifier stands for itself) from one client address, so that nobody locks the owner out
 *   from elsewhere;
 * - passwordSpray: password attempts from one client address across all accounts, so that one
 *   address cannot try a few passwords on every account (password spraying);
 * - passwordHash: password hashes (sign-in, sign-up, password changes) from one client address,
 *   checked before hashing, so that nobody can keep the server's CPU hashing;
 * - codePerEmail, codePerIp: codes sent to one address, and asked for by one client address,
 *   so that the mailer cannot be turned on a victim.
 */
export const defaultLimits = {
  failedPassword: { limit: 5, windowMs: 15 * minute },
  passwordSpray: { limit: 30, windowMs: 15 * minute },
  passwordHash: { limit: 30, windowMs: minute },
  codePerEmail: { limit: 5, windowMs: 60 * minute },
  codePerIp: { limit: 20, windowMs: 60 * minute },
} satisfies Record<string, Limit>;

export type LimitName = keyof typeof defaultLimits;
export type Limits = Record<LimitName, Limit>;

interface CounterDocument {
  _id: string;
  count: number;
  expiresAt: Date;
}

/** One counted attempt: the window's count with it, and the seconds until another would be allowed. */
export interface Attempt {
  count: number;
  retryAfter: number;
  /** This attempt is past the limit: refuse it without doing the work. */
  over: boolean;
  /** This attempt used the window up: the next one will be over. */
  last: boolean;
}

/**
 * Milliseconds from `now` until the sliding count falls to `limit - 1`, so that one more attempt
 * fits: the previous window's count weighs less as the current window goes on, and once the
 * current window has ended it is the previous one.
 */
function msUntilRoom(previous: number, current: number, elapsed: number, windowMs: number, limit: number): number {
  const room = limit - 1;
  if (current <= room && previous > 0) return Math.max(0, windowMs * (1 - (room - current) / previous) - elapsed);
  return Math.max(0, windowMs + windowMs * (1 - room / Math.max(current, 1)) - elapsed);
}

/**
 * Sliding-window counters in MongoDB, shared by every process: a window's count plus the previous
 * window's, weighted by how much of it the sliding window still covers, so that no burst fits
 * astride a boundary. An attempt is counted *before* the work it guards (one atomic upsert, the
 * counts read after it), so parallel attempts cannot all pass a check made before any counted.
 */
export function createCounters(db: Db, { now = Date.now, limits = defaultLimits }: { now?: () => number; limits?: Limits } = {}) {
  const counters = db.collection<CounterDocument>('attempt_counters');

  const windowsOf = (name: LimitName, key: string) => {
    const { windowMs } = limits[name];
    const at = now();
    const start = Math.floor(at / windowMs) * windowMs;
    // The key is hashed: it holds identifiers and addresses, which need not sit in clear here.
    const id = (windowStart: number) => `${name}:${sha256(key)}:${windowStart}`;
    // Kept for two windows: the next window still reads this one.
    return { current: id(start), previous: id(start - windowMs), expiresAt: new Date(start + 2 * windowMs), elapsed: at - start, windowMs };
  };

  // Refusals this process already knows of, until they end: a flood past its limit is answered
  // from memory, without a database write per request. Bounded, oldest forgotten first.
  const refusedUntil = new Map<string, number>();
  const remember = (id: string, until: number) => {
    if (refusedUntil.size >= 10_000) refusedUntil.delete(refusedUntil.keys().next().value!);
    refusedUntil.set(id, until);
  };

  return {
    async hit(name: LimitName, key: string): Promise<Attempt> {
      const known = refusedUntil.get(`${name}:${key}`);
      if (known !== undefined && known > now()) {
        return { count: limits[name].limit + 1, over: true, last: true, retryAfter: Math.max(1, Math.ceil((known - now()) / 1000)) };
      }
      const { current, previous, expiresAt, elapsed, windowMs } = windowsOf(name, key);
      const increment = () => counters.updateOne({ _id: current }, { $inc: { count: 1 }, $setOnInsert: { expiresAt } }, { upsert: true });
      try {
        await increment();
      } catch (error) {
        // Two first attempts raced to insert the window; the loser increments what the winner made.
        if (!isDuplicateKeyError(error)) throw error;
        await increment();
      }
      const found = await counters.find({ _id: { $in: [current, previous] } }).toArray();
      const countOf = (id: string) => Math.max(0, found.find(({ _id }) => _id === id)?.count ?? 0);
      const [before, count] = [countOf(previous), Math.max(1, countOf(current))];
      const { limit } = limits[name];
      const sliding = before * (1 - elapsed / windowMs) + count;
      const attempt = {
        count, over: sliding > limit, last: sliding >= limit,
        retryAfter: Math.max(1, Math.ceil(msUntilRoom(before, count, elapsed, windowMs, limit) / 1000)),
      };
      if (attempt.over) remember(`${name}:${key}`, now() + attempt.retryAfter * 1000);
      return attempt;
    },

    /** Takes back one counted attempt that turned out not to be what the limit is about (a right password). */
    async refund(name: LimitName, key: string): Promise<void> {
      await counters.updateOne({ _id: windowsOf(name, key).current, count: { $gt: 0 } }, { $inc: { count: -1 } });
    },

    /** Forgets every attempt of the sliding window (the owner proved who it is). */
    async clear(name: LimitName, key: string): Promise<void> {
      const { current, previous } = windowsOf(name, key);
      refusedUntil.delete(`${name}:${key}`);
      await counters.deleteMany({ _id: { $in: [current, previous] } });
    },
  };
}

export type Counters = ReturnType<typeof createCounters>;
