import type { Db } from 'mongodb';

import { ApiError } from '../lib/errors.js';
import { addressKey } from '../lib/http/client-address.js';
import { emailKey } from '../lib/identifiers.js';
import type { CodeTarget } from './codes.js';

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
 * - codePerEmail, codePerPhone, codePerIp: codes sent to one address or phone number, and asked
 *   for by one client address, so that the mailer and the SMS gateway cannot be turned on a victim
 *   (nor run up a bill).
 */
export const defaultLimits = {
  failedPassword: { limit: 5, windowMs: 15 * minute },
  passwordSpray: { limit: 30, windowMs: 15 * minute },
  passwordHash: { limit: 30, windowMs: minute },
  codePerEmail: { limit: 5, windowMs: 60 * minute },
  codePerPhone: { limit: 5, windowMs: 60 * minute },
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

/** How many buckets one window is cut into: a window is counted as the buckets it touches. */
const bucketsPerWindow = 10;

/**
 * Sliding-window counters in MongoDB, shared by every process. Each window is cut into ten
 * buckets, one document each, and an attempt counts while any part of its bucket lies within the
 * last window: so every attempt of the last window counts (a burst astride a boundary included),
 * and none counts more than a tenth of a window longer than it should. An attempt is counted
 * *before* the work it guards (one atomic upsert, the counts read after it), so parallel attempts
 * cannot all pass a check made before any counted.
 */
export function createCounters(
  db: Db,
  { now = Date.now, limits = defaultLimits, sentinel }: { now?: () => number; limits?: Limits; sentinel?: () => Promise<SentinelPolicy | undefined> } = {},
) {
  const counters = db.collection<CounterDocument>('attempt_counters');

  /** A limit as it is now: the account lockout as the sign-in settings' `sentinelPolicy` sets it, every other as configured. */
  const limitOf = async (name: LimitName): Promise<Limit> =>
    name === 'failedPassword' && sentinel ? lockoutLimit(limits[name], await sentinel()) : limits[name];

  const bucketsOf = ({ windowMs }: Limit, name: LimitName, key: string) => {
    const bucketMs = Math.max(1, Math.ceil(windowMs / bucketsPerWindow));
    const at = now();
    const current = Math.floor(at / bucketMs) * bucketMs;
    // The key is hashed: it holds identifiers and addresses, which need not sit in clear here.
    const prefix = `${name}:${sha256(key)}:`;
    // Newest first: the current bucket and every earlier one that still reaches into the window.
    const starts: number[] = [];
    for (let start = current; start + bucketMs > at - windowMs; start -= bucketMs) starts.push(start);
    return {
      at,
      windowMs,
      bucketMs,
      starts,
      id: (start: number) => `${prefix}${start}`,
      // A bucket is read until its last attempt has left the window.
      expiresAt: new Date(current + bucketMs + windowMs),
    };
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
        return { count: (await limitOf(name)).limit + 1, over: true, last: true, retryAfter: Math.max(1, Math.ceil((known - now()) / 1000)) };
      }
      const current = await limitOf(name);
      const { at, windowMs, bucketMs, starts, id, expiresAt } = bucketsOf(current, name, key);
      const increment = () => counters.updateOne({ _id: id(starts[0]) }, { $inc: { count: 1 }, $setOnInsert: { expiresAt } }, { upsert: true });
      try {
        await increment();
      } catch (error) {
        // Two first attempts raced to insert the bucket; the loser increments what the winner made.
        if (!isDuplicateKeyError(error)) throw error;
        await increment();
      }
      const found = new Map((await counters.find({ _id: { $in: starts.map(id) } }).toArray()).map(({ _id, count }) => [_id, Math.max(0, count)]));
      // This attempt is counted even if a refund raced it below zero.
      const counts = starts.map((start, index) => Math.max(index === 0 ? 1 : 0, found.get(id(start)) ?? 0));
      const count = counts.reduce((sum, value) => sum + value, 0);
      const { limit } = current;
      // Until room for one more attempt: the oldest buckets leave the window one by one.
      let left = count;
      let until = at;
      for (let index = starts.length - 1; index >= 0 && left > limit - 1; index -= 1) {
        left -= counts[index];
        until = starts[index] + bucketMs + windowMs;
      }
      const attempt = { count, over: count > limit, last: count >= limit, retryAfter: Math.max(1, Math.ceil((until - at) / 1000)) };
      if (attempt.over) remember(`${name}:${key}`, at + attempt.retryAfter * 1000);
      return attempt;
    },

    /** Takes back one counted attempt that turned out not to be what the limit is about (a right password). */
    async refund(name: LimitName, key: string): Promise<void> {
      const { starts, id } = bucketsOf(await limitOf(name), name, key);
      await counters.updateOne({ _id: id(starts[0]), count: { $gt: 0 } }, { $inc: { count: -1 } });
    },

    /** Forgets every attempt of the sliding window (the owner proved who it is). */
    async clear(name: LimitName, key: string): Promise<void> {
      const { starts, id } = bucketsOf(await limitOf(name), name, key);
      refusedUntil.delete(`${name}:${key}`);
      await counters.deleteMany({ _id: { $in: starts.map(id) } });
    },
  };
}

export type Counters = ReturnType<typeof createCounters>;

/**
 * Logto's `sentinelPolicy`: how many wrong passwords (and second-factor codes) an account takes
 * from one client address (`maxAttempts`) within how many minutes (`lockoutDuration`). Here the
 * count slides: after `maxAttempts` failures within `lockoutDuration` minutes, the account is
 * locked from that address until the oldest of them is that old: at most `lockoutDuration`, and a
 * tenth more (the window is counted in tenths).
 */
export interface SentinelPolicy {
  maxAttempts?: number;
  lockoutDuration?: number;
}

export const sentinelPolicySchema = {
  type: 'object',
  properties: { maxAttempts: { type: 'integer', minimum: 1, maximum: 1000 }, lockoutDuration: { type: 'integer', minimum: 1, maximum: 1440 } },
  additionalProperties: false,
} as const;

const lockoutLimit = (configured: Limit, policy: SentinelPolicy | undefined): Limit => ({
  limit: policy?.maxAttempts ?? configured.limit,
  windowMs: policy?.lockoutDuration === undefined ? configured.windowMs : policy.lockoutDuration * minute,
});

/**
 * Counts one code sent to `target` from the client address `ip` against both limits (per recipient,
 * per client address); answers the one it exceeds, if any, for the caller to refuse the send with.
 */
export async function countCodeSend(counters: Counters, target: CodeTarget, ip: string): Promise<Attempt | undefined> {
  const attempts = await Promise.all([
    counters.hit(target.type === 'email' ? 'codePerEmail' : 'codePerPhone', target.type === 'email' ? emailKey(target.value) : target.value),
    counters.hit('codePerIp', addressKey(ip)),
  ]);
  return attempts.find((attempt) => attempt.over);
}

/** What a refused send is announced with (Logto's `Message.RateLimited`): the action and the recipient, a phone with its `+`. */
export const rateLimitedFields = (target: CodeTarget) => ({
  action: 'VerificationCodeSend',
  recipient: target.type === 'phone' ? `+${target.value}` : target.value,
});

/** The answer to a refused send. */
export const tooManyCodes = (over: Attempt) =>
  new ApiError('request.message_rate_limited', 'too many codes were asked for; try again later', { retryAfter: over.retryAfter });
