import type { Collection, Db } from 'mongodb';

import { isDuplicateKeyError } from '../lib/errors.js';

/** One hook's sends in one second: `_id` is `<hookId>:<unix second>`. */
interface WindowDocument {
  _id: string;
  count: number;
  expiresAt: Date;
}

export const rateWindowCollection = 'hook_rate_windows';

/**
 * A hook's `config.maxPerSecond`, shared by every process: each send takes a place in the current
 * second's window with one conditional upsert (`count < max` matched and incremented, or inserted
 * at 1); when the window is full, the upsert's insert meets the existing document and fails with a
 * duplicate key, atomically, with no read before. A delivery that finds no place is held back to
 * the next second (never dropped, never counted as an attempt); the spread within that second keeps
 * a backlog from arriving all at once at its start.
 */
export function createRateLimiter(db: Db) {
  const windows: Collection<WindowDocument> = db.collection(rateWindowCollection);

  /** Takes a place for one send of the hook at `now`; answers when to look again instead, or undefined when it may go. */
  async function take(hookId: string, maxPerSecond: number, now: Date): Promise<Date | undefined> {
    const second = Math.floor(now.getTime() / 1000);
    try {
      await windows.updateOne(
        { _id: `${hookId}:${second}`, count: { $lt: maxPerSecond } },
        { $inc: { count: 1 }, $setOnInsert: { expiresAt: new Date((second + 60) * 1000) } },
        { upsert: true },
      );
      return undefined;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return new Date((second + 1) * 1000 + Math.floor(Math.random() * 1000));
    }
  }

  return { take };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
