import type { ClientSession, Db, Filter } from 'mongodb';

import { createBatch } from '../batch.js';
import { insertEach } from '../insert-each.js';
import { generateId } from '../../ids.js';
import type { Page } from '../models.js';
import { createdWithin } from './time-range.js';
import { insertOwn } from '../insert-each.js';

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
    ...createdWithin(since, until, (at) => at),
  });
  /** Concurrent claims go as one unordered insert; each record succeeds or fails on its own. */
  const claims = createBatch(async (records: ImpersonationEvent[]): Promise<Array<string | undefined | Error>> =>
    (await insertEach(collection, records)).map((outcome, index) => {
      if (outcome === 'inserted') return records[index]._id;
      return outcome === 'duplicate' ? undefined : outcome;
    }),
  );

  return {
    async record(event: Omit<ImpersonationEvent, '_id' | 'createdAt'>, session?: ClientSession) {
      await insertOwn(collection, [{ _id: generateId(), ...event, createdAt: Date.now() }], session);
    },

    /**
     * Spends a subject token by recording its exchange. The record's id is derived from the
     * token, and ids are unique, so of two exchanges of one token (in any processes, or in one
     * batch) exactly one insert succeeds: one conditional write decides, and it is the audit
     * record itself. Answers the record's id, or undefined when the token was already spent.
     */
    claimExchange: (event: Omit<ImpersonationEvent, '_id' | 'createdAt' | 'kind'> & { subjectTokenId: string }) =>
      claims({ _id: `exchange:${event.subjectTokenId}`, kind: 'exchange.succeeded', ...event, createdAt: Date.now() }),

    /** Which of these access tokens (by `jti`) a token exchange minted. */
    async mintedByExchange(tokenIds: string[]): Promise<Set<string>> {
      const found = await collection.find({ tokenId: { $in: tokenIds }, kind: 'exchange.succeeded' }, { projection: { tokenId: 1 } }).toArray();
      return new Set(found.map(({ tokenId }) => tokenId!));
    },

    /** Turns a claimed exchange that failed afterwards (its custom claims refused) into a failure. */
    markFailed: (id: string, reason: string) => collection.updateOne({ _id: id }, { $set: { kind: 'exchange.failed', reason } }),
    find: (filter: ImpersonationFilter, page: Page) =>
      collection.find(toFilter(filter)).sort({ createdAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
    count: (filter: ImpersonationFilter) => collection.countDocuments(toFilter(filter)),
  };
}
