import type { ClientSession, Db } from 'mongodb';

import { generateSecret, sha256 } from '../../ids.js';
import { insertOwn } from '../insert-each.js';

export interface SubjectTokenDocument {
  /** SHA-256 of the token: the token itself is never stored. */
  _id: string;
  userId: string;
  context: Record<string, unknown>;
  /** The client that asked for it (the integrator's backend). */
  clientId: string;
  createdAt: Date;
  expiresAt: Date;
}

export function createSubjectTokenQueries(db: Db) {
  const collection = db.collection<SubjectTokenDocument>('subject_tokens');
  return {
    /** Issues a token of 256 random bits; returns it once, stores its hash. */
    async issue(userId: string, context: Record<string, unknown>, clientId: string, ttlSeconds: number, session?: ClientSession) {
      const token = generateSecret();
      const now = Date.now();
      const document: SubjectTokenDocument = {
        _id: sha256(token),
        userId,
        context,
        clientId,
        createdAt: new Date(now),
        expiresAt: new Date(now + ttlSeconds * 1000),
      };
      await insertOwn(collection, [document], session);
      return { token, document };
    },
  };
}
