import type { ClientSession, Db } from 'mongodb';

import { generateId, generateSecret, sha256 } from '../../ids.js';
import { insertOwn } from '../insert-each.js';

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

export function createSubjectTokenQueries(db: Db) {
  const collection = db.collection<SubjectTokenDocument>('subject_tokens');
  return {
    /** Issues a token of 256 random bits; returns it once, stores its hash. */
    async issue(userId: string, { context, actorId, reason, ticketId }: SubjectTokenTerms, clientId: string, ttlSeconds: number, session?: ClientSession) {
      const token = generateSecret();
      const now = Date.now();
      const document: SubjectTokenDocument = {
        _id: sha256(token),
        userId,
        context,
        clientId,
        impersonationId: generateId(),
        ...(actorId !== undefined && { actorId }),
        ...(reason !== undefined && { reason }),
        ...(ticketId !== undefined && { ticketId }),
        createdAt: new Date(now),
        expiresAt: new Date(now + ttlSeconds * 1000),
      };
      await insertOwn(collection, [document], session);
      return { token, document };
    },
  };
}
