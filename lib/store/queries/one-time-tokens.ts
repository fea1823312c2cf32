import type { Db, Filter } from 'mongodb';

import { inUnit } from '../session.js';

export type OneTimeTokenStatus = 'active' | 'consumed' | 'revoked' | 'expired';

/** What a one-time token may do beyond signing its email in: the organizations it joins (Logto's `jitOrganizationIds`). */
export interface OneTimeTokenContext {
  jitOrganizationIds?: string[];
}

export interface OneTimeTokenDocument {
  _id: string;
  /** The email address it is for, lower-cased. */
  email: string;
  /** SHA-256 of the token: the token itself is shown once, when it is made, and never kept. */
  tokenHash: string;
  context: OneTimeTokenContext;
  status: OneTimeTokenStatus;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
}

/**
 * One-time tokens (Logto's `one_time_tokens`, for magic links and invitations): one email address
 * each, spent once. An active one past its time is said `expired` when read.
 */
export function createOneTimeTokenQueries(db: Db) {
  const collection = db.collection<OneTimeTokenDocument>('one_time_tokens');
  const asOf =
    (now: number) =>
    (token: OneTimeTokenDocument): OneTimeTokenDocument =>
      token.status === 'active' && token.expiresAt <= now ? { ...token, status: 'expired' } : token;

  return {
    insert: (token: OneTimeTokenDocument) => collection.insertOne(token, inUnit()),
    async find(filter: { email?: string; status?: OneTimeTokenStatus }, now = Date.now()) {
      const query: Filter<OneTimeTokenDocument> = { ...(filter.email !== undefined && { email: filter.email }) };
      const all = (await collection.find(query, inUnit()).sort({ createdAt: -1, _id: -1 }).toArray()).map(asOf(now));
      return filter.status ? all.filter(({ status }) => status === filter.status) : all;
    },
    async findById(id: string, now = Date.now()) {
      const found = await collection.findOne({ _id: id }, inUnit());
      return found && asOf(now)(found);
    },
    /**
     * Spends the active, unexpired token of this email and hash, once, however many requests race:
     * answers it, or why not (`expired`: it was active but past its time; `notFound`: anything else).
     */
    async consume(email: string, tokenHash: string, now = Date.now()): Promise<OneTimeTokenDocument | 'expired' | 'notFound'> {
      const { modifiedCount } = await collection.updateOne(
        { tokenHash, email, status: 'active', expiresAt: { $gt: now } },
        { $set: { status: 'consumed', updatedAt: now } },
        inUnit(),
      );
      const found = await collection.findOne({ tokenHash, email }, inUnit());
      if (modifiedCount === 1 && found) return found;
      if (found?.status === 'active' && found.expiresAt <= now) {
        await collection.updateOne({ _id: found._id, status: 'active' }, { $set: { status: 'expired', updatedAt: now } }, inUnit());
        return 'expired';
      }
      return 'notFound';
    },
    async setStatus(id: string, status: OneTimeTokenStatus, now = Date.now()) {
      const { matchedCount } = await collection.updateOne({ _id: id }, { $set: { status, updatedAt: now } }, inUnit());
      return matchedCount === 1;
    },
    delete: async (id: string) => (await collection.deleteOne({ _id: id }, inUnit())).deletedCount === 1,
  };
}
