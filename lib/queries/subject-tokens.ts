import type { ClientSession, Db } from 'mongodb';

import { generateSecret, sha256 } from '../ids.js';

export interface SubjectTokenDocument {
  /** SHA-256 of the token: the token itself is never stored. */
  _id: string;
  userId: string;
  context: Record<string, unknown>;
  /** The client that asked for it (the integrator's backend). */
  clientId: string;
  createdAt: Date;
  expiresAt: Date;
  consumedAt?: Date;
  consumedBy?: string;
}

export function createSubjectTokenQueries(db: Db) {
  const collection = db.collection<SubjectTokenDocument>('subject_tokens');
  return {
    /** Issues a token of 256 random bits; returns it once, stores its hash. */
    async issue(userId: string, context: Record<string, unknown>, clientId: string, ttlSeconds: number, session?: ClientSession) {
      const token = generateSecret();
      const now = Date.now();
      const document: SubjectTokenDocument = {
        _id: sha256(token), userId, context, clientId, createdAt: new Date(now), expiresAt: new Date(now + ttlSeconds * 1000),
      };
      await collection.insertOne(document, { session });
      return { token, document };
    },

    /**
     * Consumes a token if it is live and unused. One conditional write decides, so of two
     * processes presenting the same token at once exactly one wins (a read-then-write would let both).
     */
    /** The stored token, live or not (the audit of a failed exchange names its user). */
    peek: (token: string) => collection.findOne({ _id: sha256(token) }),

    async consume(token: string, clientId: string): Promise<SubjectTokenDocument | undefined> {
      const now = new Date();
      const id = sha256(token);
      const { modifiedCount } = await collection.updateOne(
        { _id: id, consumedAt: { $exists: false }, expiresAt: { $gt: now } },
        { $set: { consumedAt: now, consumedBy: clientId } },
      );
      if (modifiedCount !== 1) return undefined;
      return (await collection.findOne({ _id: id })) ?? undefined;
    },
  };
}
