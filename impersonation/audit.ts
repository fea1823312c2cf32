import type { Db, Filter } from 'mongodb';

import { createBatch } from '../lib/store/batch.js';
import { insertEach, insertMissing } from '../lib/store/insert-each.js';
import { generateId } from '../lib/ids.js';
import type { Page } from '../lib/store/models.js';
import { createdWithin } from '../lib/store/queries/time-range.js';
import type { SubjectTokenDocument } from './subject-tokens.js';
import { insertOwn } from '../lib/store/insert-each.js';

/** One line of the impersonation audit: who acted as whom, when, why, and how it ended. */
export const impersonationRecordKinds = [
  'subject_token.issued',
  'subject_token.voided',
  'exchange.succeeded',
  'exchange.failed',
  'impersonation.revoked',
] as const;

export interface ImpersonationEvent {
  _id: string;
  kind: (typeof impersonationRecordKinds)[number];
  /** The impersonation (one subject token, and the tokens minted from it). */
  impersonationId?: string;
  /** Why an exchange failed (the error's detail), or why a subject token was voided. */
  failureReason?: string;
  /** Why the impersonation was asked for, and its ticket (from the subject token). */
  reason?: string;
  ticketId?: string;
  /** The one actor the subject token was bound to (`actorId`), when it was. */
  boundActorId?: string;
  /** When the subject token expires (epoch ms). */
  expiresAt?: number;
  /** An exchange record that failed after it was chained: the record it corrects. */
  supersedes?: string;
  targetUserId?: string;
  /** The user named by the actor token, when one was given. */
  actorUserId?: string;
  /** The client that asked for the subject token (the integrator's backend). */
  issuerClientId?: string;
  /** The console administrator (a user of ours) who issued the subject token or revoked the impersonation, when it was done in the console. */
  administratorId?: string;
  /** The client that exchanged it (the actor's application). */
  clientId?: string;
  context?: Record<string, unknown>;
  resource?: string;
  /** The permissions an exchange granted (space-separated; empty when none). */
  scope?: string;
  /** The issued access token's `jti`. */
  tokenId?: string;
  subjectTokenId?: string;
  createdAt: number;
  /** Set when written, removed once the ledger chained it (`impersonation/ledger.ts`). */
  chainDue?: Date;
  /** Its place in the deployment's one audit chain: 1, 2, 3, ... */
  sequence?: number;
  /** The hash of the record before it in the chain (64 zeros for the first). */
  prevHash?: string;
  /** SHA-256 of this record as the API shows it, with `sequence` and `prevHash` (`impersonation/chain.ts`). */
  hash?: string;
}

export interface ImpersonationFilter {
  impersonationId?: string;
  targetUserId?: string;
  actorUserId?: string;
  clientId?: string;
  since?: number;
  until?: number;
}

export function createImpersonationQueries(db: Db) {
  const collection = db.collection<ImpersonationEvent>('impersonations');
  const toFilter = ({ impersonationId, targetUserId, actorUserId, clientId, since, until }: ImpersonationFilter): Filter<ImpersonationEvent> => ({
    ...(impersonationId && { impersonationId }),
    ...(targetUserId && { targetUserId }),
    ...(actorUserId && { actorUserId }),
    ...(clientId && { $or: [{ clientId }, { issuerClientId: clientId }] }),
    ...createdWithin(since, until, (at) => at),
  });
  /** Concurrent claims go as one unordered insert; each record succeeds or fails on its own. */
  // A claim is ours when it names our token (a fresh `jti`): one whose answer the network lost, stored all the same, is not a spent token.
  const claims = createBatch(async (records: ImpersonationEvent[]): Promise<Array<string | undefined | Error>> =>
    (await insertEach(collection, records, { ours: (stored, sent) => stored.tokenId !== undefined && stored.tokenId === sent.tokenId })).map(
      (outcome, index) => {
        if (outcome === 'inserted') return records[index]._id;
        return outcome === 'duplicate' ? undefined : outcome;
      },
    ),
  );

  /** Appends a record; the ledger chains it once it has settled. */
  async function record(event: Omit<ImpersonationEvent, '_id' | 'createdAt'>) {
    const now = Date.now();
    await insertOwn(collection, [{ _id: generateId(), ...event, createdAt: now, chainDue: new Date(now) }]);
  }

  return {
    collection,

    record,

    /**
     * Spends a subject token by recording its exchange. The record's id is derived from the
     * token, and ids are unique, so of two exchanges of one token (in any processes, or in one
     * batch) exactly one insert succeeds: one conditional write decides, and it is the audit
     * record itself. Answers the record's id, or undefined when the token was already spent.
     */
    claimExchange: (event: Omit<ImpersonationEvent, '_id' | 'createdAt' | 'kind'> & { subjectTokenId: string }) =>
      claims({ _id: `exchange:${event.subjectTokenId}`, kind: 'exchange.succeeded', ...event, createdAt: Date.now(), chainDue: new Date() }),

    /**
     * Spends subject tokens without an exchange, because what they were issued on no longer holds
     * (their user's roles changed, it was suspended or deleted, the impersonation was revoked).
     * The record takes the id an exchange's would, so whichever of the two is written first
     * decides; a token already spent is left as it is.
     */
    async voidTokens(tokens: SubjectTokenDocument[], failureReason: string) {
      if (tokens.length === 0) return;
      const now = Date.now();
      await insertMissing(
        collection,
        tokens.map((token) => ({
          _id: `exchange:${token._id}`,
          kind: 'subject_token.voided' as const,
          impersonationId: token.impersonationId,
          targetUserId: token.userId,
          issuerClientId: token.clientId,
          subjectTokenId: token._id,
          failureReason,
          createdAt: now,
          chainDue: new Date(now),
        })),
      );
    },

    /** Why a spent subject token was voided, if it was (else it was used by an exchange). */
    async whyVoided(subjectTokenId: string): Promise<string | undefined> {
      const spent = await collection.findOne({ _id: `exchange:${subjectTokenId}` });
      return spent?.kind === 'subject_token.voided' ? `the subject token was voided: ${spent.failureReason}` : undefined;
    },

    /** Which of these access tokens (by `jti`) a token exchange minted. */
    async mintedByExchange(tokenIds: string[]): Promise<Set<string>> {
      const found = await collection.find({ tokenId: { $in: tokenIds }, kind: 'exchange.succeeded' }, { projection: { tokenId: 1 } }).toArray();
      return new Set(found.map(({ tokenId }) => tokenId!));
    },

    /**
     * Turns a claimed exchange that failed afterwards (its custom claims refused) into a failure:
     * in place while the ledger has not chained it (it waits a few seconds for this), else as a
     * record of its own that names the one it corrects, since a chained record never changes.
     */
    async markFailed(id: string, failureReason: string) {
      const { matchedCount } = await collection.updateOne({ _id: id, chainDue: { $type: 'date' } }, { $set: { kind: 'exchange.failed', failureReason } });
      if (matchedCount > 0) return;
      const claimed = await collection.findOne({ _id: id });
      if (!claimed) return;
      const { _id, kind, createdAt, chainDue, sequence, prevHash, hash, tokenId, ...about } = claimed;
      await record({ ...about, kind: 'exchange.failed', failureReason, supersedes: id });
    },
    find: (filter: ImpersonationFilter, page: Page) =>
      collection.find(toFilter(filter)).sort({ createdAt: -1, _id: -1 }).skip(page.skip).limit(page.limit).toArray(),
    count: (filter: ImpersonationFilter) => collection.countDocuments(toFilter(filter)),
  };
}
