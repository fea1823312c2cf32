import type { Db } from 'mongodb';

import { insertOwn } from '../insert-each.js';
import { inUnit } from '../session.js';

/** A user's personal access token (Logto's `personal_access_tokens`): a named credential a script exchanges for the user's tokens. */
export interface PersonalAccessTokenDocument {
  _id: string;
  userId: string;
  /** Unique within the user. */
  name: string;
  /** SHA-256 of the token: the token is 256 random bits, shown once, when it is made, and never kept. */
  hash: string;
  createdAt: number;
  /** Epoch milliseconds; null: it never expires. */
  expiresAt: number | null;
}

/** A user's personal access tokens, by name; found by hash at the token exchange. */
export function createPersonalAccessTokenQueries(db: Db) {
  const tokens = db.collection<PersonalAccessTokenDocument>('personal_access_tokens');
  return {
    listFor: (userId: string) => tokens.find({ userId }, inUnit()).sort({ createdAt: 1, _id: 1 }).toArray(),
    /** A taken name is the unique index's refusal. */
    insert: (token: PersonalAccessTokenDocument) => insertOwn(tokens, [token]),
    findByHash: (hash: string) => tokens.findOne({ hash }),
    async delete(userId: string, name: string) {
      const { deletedCount } = await tokens.deleteOne({ userId, name }, inUnit());
      return deletedCount === 1;
    },
    /** Renames a token; answers it renamed, or null when there is none of that name. A taken name is the unique index's refusal. */
    async rename(userId: string, name: string, newName: string) {
      const { matchedCount } = await tokens.updateOne({ userId, name }, { $set: { name: newName } }, inUnit());
      return matchedCount === 0 ? null : tokens.findOne({ userId, name: newName }, inUnit());
    },
    removeAllOfUser: (userId: string) => tokens.deleteMany({ userId }, inUnit()),
  };
}
