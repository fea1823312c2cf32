import type { ClientSession, Db } from 'mongodb';

import { generateId, sha256 } from '../../ids.js';
import { insertOwn } from '../insert-each.js';
import type { SubjectTokenSeal } from '../../../impersonation/subject-token.js';

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

export function createSubjectTokenQueries(db: Db) {
  const collection = db.collection<SubjectTokenDocument>('subject_tokens');
  return {
    /**
     * Issues a token sealed with its facts and the user's role ids (`impersonation/subject-token.ts`);
     * returns it once, stores its hash with the facts, so that a change to the user can find and
     * void it. The exchange reads nothing of this: the record is what voiding and the audit use.
     */
    async issue(
      seal: SubjectTokenSeal,
      user: { userId: string; roleIds: string[] },
      { context, actorId, reason, ticketId }: SubjectTokenTerms,
      clientId: string,
      ttlSeconds: number,
      session?: ClientSession,
    ) {
      const now = Date.now();
      const terms = {
        ...(actorId !== undefined && { actorId }),
        ...(reason !== undefined && { reason }),
        ...(ticketId !== undefined && { ticketId }),
      };
      const impersonationId = generateId();
      const expiresAt = now + ttlSeconds * 1000;
      // The AES-GCM seal's fresh IV makes each token unique, whatever it says.
      const token = seal.seal({ userId: user.userId, clientId, impersonationId, ...terms, context, roleIds: user.roleIds, expiresAt });
      const document: SubjectTokenDocument = {
        _id: sha256(token),
        userId: user.userId,
        context,
        clientId,
        impersonationId,
        ...terms,
        createdAt: new Date(now),
        expiresAt: new Date(expiresAt),
      };
      await insertOwn(collection, [document], session);
      return { token, document };
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
