import type { Db } from 'mongodb';

import { generateId, sha256 } from '../lib/ids.js';
import { insertOwn } from '../lib/store/insert-each.js';
import type { SubjectTokenFacts, SubjectTokenSeal } from './subject-token.js';

export interface SubjectTokenDocument {
  /** SHA-256 of the token: the token itself is never stored. */
  _id: string;
  userId: string;
  context: Record<string, unknown>;
  /** The client that asked for it (the integrator's backend). */
  clientId: string;
  /** The impersonation this token starts: in every token minted from it (`impersonation_id`), in its audit, its events and its revocation. */
  impersonationId: string;
  /** RFC 8693 §4.4 `may_act`: the one user who may exchange it (with an actor token of theirs). */
  actorId?: string;
  /** Why, and under which ticket: first-class, in the audit and the events, and in the claims script's context. */
  reason?: string;
  ticketId?: string;
  createdAt: Date;
  expiresAt: Date;
}

/** What a subject token is issued with, besides its user and issuer. */
export interface SubjectTokenTerms {
  context: Record<string, unknown>;
  actorId?: string;
  reason?: string;
  ticketId?: string;
}

/** Which live subject tokens to void: a user's, or an impersonation's. */
export type SubjectTokenSelection = { userIds: string[] } | { impersonationId: string };

/**
 * A new subject token, sealed with its facts and the user's role ids (`impersonation/subject-token.ts`),
 * and the record it is stored as: its hash with the same facts, so that a change to the user can
 * find and void it. The exchange reads nothing of the record: voiding and the audit use it.
 */
export function sealSubjectToken(
  seal: SubjectTokenSeal,
  { userId, roleIds, hostAccount }: { userId: string; roleIds: string[]; hostAccount?: true },
  { context, actorId, reason, ticketId }: SubjectTokenTerms,
  clientId: string,
  ttlSeconds: number,
) {
  const now = Date.now();
  const facts: SubjectTokenFacts = {
    userId,
    clientId,
    impersonationId: generateId(),
    ...(actorId !== undefined && { actorId }),
    ...(reason !== undefined && { reason }),
    ...(ticketId !== undefined && { ticketId }),
    context,
    roleIds,
    ...(hostAccount && { hostAccount }),
    expiresAt: now + ttlSeconds * 1000,
  };
  // The AES-GCM seal's fresh IV makes each token unique, whatever it says.
  const token = seal.seal(facts);
  const { roleIds: _sealedOnly, hostAccount: _alsoSealedOnly, expiresAt, ...stored } = facts;
  const document: SubjectTokenDocument = { _id: sha256(token), ...stored, createdAt: new Date(now), expiresAt: new Date(expiresAt) };
  return { token, document };
}

export function createSubjectTokenQueries(db: Db) {
  const collection = db.collection<SubjectTokenDocument>('subject_tokens');
  return {
    /** Issues a subject token (`sealSubjectToken`) and stores its record; the token itself is answered once, never stored. */
    async issue(
      seal: SubjectTokenSeal,
      user: { userId: string; roleIds: string[]; hostAccount?: true },
      terms: SubjectTokenTerms,
      clientId: string,
      ttlSeconds: number,
    ) {
      const issued = sealSubjectToken(seal, user, terms, clientId, ttlSeconds);
      await insertOwn(collection, [issued.document]);
      return issued;
    },

    /** The live (unexpired) tokens of some users, or of one impersonation. */
    live: (selection: SubjectTokenSelection) =>
      collection
        .find({
          ...('userIds' in selection ? { userId: { $in: selection.userIds } } : { impersonationId: selection.impersonationId }),
          expiresAt: { $gt: new Date() },
        })
        .toArray(),
  };
}
