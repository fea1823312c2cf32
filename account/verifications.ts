import type { ClientSession, Db } from 'mongodb';

import { generateSecret, sha256 } from '../lib/ids.js';

/** A step-up verification lives ten minutes and is spent by the one sensitive change it allows. */
export const verificationTtlMs = 10 * 60_000;

interface VerificationRecord {
  /** The SHA-256 of the id the user's application sends back as `logto-verification-id` (unguessable): a copy of this collection allows no change. */
  _id: string;
  userId: string;
  /** The application whose token made it: a record is good only with a token of the same application. */
  clientId: string;
  type: 'password';
  usedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * Step-up verification records (Logto's `/api/verifications`): proof, made moments ago, that the
 * holder of the user's token also knows the password. Bound to the user and the application, single
 * use (a conditional update spends it, across processes), ten minutes.
 */
export function createVerificationRecords(db: Db, now: () => number = Date.now) {
  const records = db.collection<VerificationRecord>('verification_records');
  return {
    async create(userId: string, clientId: string, type: VerificationRecord['type']): Promise<{ id: string; expiresAt: Date }> {
      const createdAt = new Date(now());
      const id = generateSecret();
      const record: VerificationRecord = {
        _id: sha256(id),
        userId,
        clientId,
        type,
        usedAt: null,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + verificationTtlMs),
      };
      await records.insertOne(record);
      return { id, expiresAt: record.expiresAt };
    },

    /** Spends the record for this user and application; false when it is unknown, theirs not, expired or spent. */
    async spend(id: string, userId: string, clientId: string, session: ClientSession | undefined): Promise<boolean> {
      const { modifiedCount } = await records.updateOne(
        { _id: sha256(id), userId, clientId, usedAt: null, expiresAt: { $gt: new Date(now()) } },
        { $set: { usedAt: new Date(now()) } },
        { session },
      );
      return modifiedCount === 1;
    },
  };
}
