import { MongoBulkWriteError, type ClientSession, type Db, type Filter } from 'mongodb';

import { createBatch } from '../batch.js';
import { isDuplicateKeyError } from '../errors.js';
import { generateId } from '../ids.js';
import type { Page } from '../pagination.js';

/** One line of the impersonation audit: who acted as whom, when, why, and how it ended. */
export interface ImpersonationEvent {
  _id: string;
  kind: 'subject_token.issued' | 'exchange.succeeded' | 'exchange.failed';
  /** Why an exchange failed (the error description). */
  reason?: string;
  targetUserId?: string;
  /** The user named by the actor token, when one was given. */
  actorUserId?: string;
  /** The client that asked for the subject token (the integrator's backend). */
  issuerClientId?: string;
  /** The client that exchanged it (the actor's application). */
  clientId?: string;
  context?: Record<string, unknown>;
  resource?: string;
  /** The issued access token's `jti`. */
  tokenId?: string;
  subjectTokenId?: string;
  createdAt: number;
}

export interface ImpersonationFilter {
  targetUserId?: string;
  actorUserId?: string;
  clientId?: string;
  since?: number;
  until?: number;
}

export function createImpersonationQueries(db: Db) {
  const collection = db.collection<ImpersonationEvent>('impersonations');
  const toFilter = ({ targetUserId, actorUserId, clientId, since, until }: ImpersonationFilter): Filter<ImpersonationEvent> => ({
    ...(targetUserId && { targetUserId }),
    ...(actorUserId && { actorUserId }),
    ...(clientId && { $or: [{ clientId }, { issuerClientId: clientId }] }),
    ...((since !== undefined || until !== undefined) && {
      createdAt: { ...(since !== undefined && { $gte: since }), ...(until !== undefined && { $lte: until }) },
    }),
  });
  async function claimOne(record: ImpersonationEvent): Promise<string | undefined> {
    try {
      await collection.insertOne(record);
      return record._id;
    } catch (error) {
      if (isDuplicateKeyError(error)) return undefined;
      throw error;
    }
  }

  /** Concurrent claims go as one unordered insert; each record succeeds or fails on its own. */
  const claims = createBatch(async (records: ImpersonationEvent[]): Promise<Array<string | undefined | Error>> => {
    if (records.length === 1) return [await claimOne(records[0]!)];
    try {
      await collection.insertMany(records, { ordered: false });
      return records.map(({ _id }) => _id);
    } catch (error) {
      // A write concern error leaves every record's fate unknown: the whole batch fails.
      if (!(error instanceof MongoBulkWriteError) || error.writeConcernError) throw error;
      const writeErrors = [error.writeErrors].flat();
      // MongoDB names each record that failed. An engine that refuses the whole batch without
      // naming them (the embedded one does) gets each record again on its own: one that did
      // go in then reads as spent, which refuses a token rather than spending it twice.
      if (error.result.insertedCount + writeErrors.length !== records.length) {
        return Promise.all(records.map((record) => claimOne(record).catch((failure: Error) => failure)));
      }
      const failed = new Map(writeErrors.map((writeError) => [writeError.index, writeError]));
      return records.map(({ _id }, index) => {
        const writeError = failed.get(index);
        if (!writeError) return _id;
        return isDuplicateKeyError(writeError) ? undefined : new Error(writeError.errmsg ?? 'the exchange could not be recorded');
      });
    }
  });

  return {
    async record(event: Omit<ImpersonationEvent, '_id' | 'createdAt'>, session?: ClientSession) {
      await collection.insertOne({ _id: generateId(), ...event, createdAt: Date.now() }, { session });
    },

    /**
     * Spends a subject token by recording its exchange. The record's id is derived from the
     * token, and ids are unique, so of two exchanges of one token (in any processes, or in one
     * batch) exactly one insert succeeds: one conditional write decides, and it is the audit
     * record itself. Answers the record's id, or undefined when the token was already spent.
     */
    claimExchange: (event: Omit<ImpersonationEvent, '_id' | 'createdAt' | 'kind'> & { subjectTokenId: string }) =>
      claims({ _id: `exchange:${event.subjectTokenId}`, kind: 'exchange.succeeded', ...event, createdAt: Date.now() }),

    /** Turns a claimed exchange that failed afterwards (its custom claims refused) into a failure. */
    markFailed: (id: string, reason: string) => collection.updateOne({ _id: id }, { $set: { kind: 'exchange.failed', reason } }),
    find: (filter: ImpersonationFilter, page: Page) =>
      collection.find(toFilter(filter)).sort({ createdAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
    count: (filter: ImpersonationFilter) => collection.countDocuments(toFilter(filter)),
  };
}
