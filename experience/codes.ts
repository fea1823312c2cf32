import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

import type { Db } from 'mongodb';

import { ApiError } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import { generateId } from '../lib/ids.js';
import type { InteractionKind } from '../hooks/catalog.js';

/** A code lives ten minutes and allows five tries. */
export const codeTtlMs = 10 * 60_000;
export const maxCodeAttempts = 5;

interface CodeDocument {
  /** The verification id the caller holds. */
  _id: string;
  interactionUid: string;
  event: InteractionKind;
  /** The address as typed, under the identifiers' normalization (`emailKey`). */
  email: string;
  codeHash: string;
  attempts: number;
  /** `pending` until the right code is given, `verified` then, `used` once an identification spent it. */
  state: 'pending' | 'verified' | 'used';
  createdAt: Date;
  expiresAt: Date;
}

const hashCode = (verificationId: string, code: string) => createHash('sha256').update(`${verificationId}:${code}`).digest();

// Every way a code can fail reads the same to the caller: wrong, expired, used up or never sent.
const invalidCode = () => new ApiError('verification_code.invalid', 'the verification code is wrong or has expired');

/**
 * Six-digit email codes, stored as hashes. Verifying counts the attempt before comparing (one
 * conditional update), so that parallel guesses cannot exceed the limit, and a code becomes
 * `verified` and then `used` through conditional updates too: single use holds across processes.
 */
export function createCodes(db: Db, now: () => number = Date.now) {
  const codes = db.collection<CodeDocument>('verification_codes');

  return {
    /** Makes a code for `email`; answers the verification id and the code (to send, or not). */
    async issue(interactionUid: string, event: InteractionKind, email: string): Promise<{ verificationId: string; code: string }> {
      const verificationId = generateId();
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const createdAt = new Date(now());
      await codes.insertOne({
        _id: verificationId,
        interactionUid,
        event,
        email: emailKey(email),
        codeHash: hashCode(verificationId, code).toString('base64url'),
        attempts: 0,
        state: 'pending',
        createdAt,
        expiresAt: new Date(createdAt.getTime() + codeTtlMs),
      });
      return { verificationId, code };
    },

    async verify(interactionUid: string, verificationId: string, email: string, code: string): Promise<void> {
      const counted = await codes.updateOne(
        {
          _id: verificationId,
          interactionUid,
          email: emailKey(email),
          state: 'pending',
          attempts: { $lt: maxCodeAttempts },
          expiresAt: { $gt: new Date(now()) },
        },
        { $inc: { attempts: 1 } },
      );
      if (counted.matchedCount === 0) throw invalidCode();
      const stored = await codes.findOne({ _id: verificationId });
      const expected = Buffer.from(stored!.codeHash, 'base64url');
      if (!/^\d{6}$/.test(code) || !timingSafeEqual(hashCode(verificationId, code), expected)) throw invalidCode();
      const verified = await codes.updateOne({ _id: verificationId, state: 'pending' }, { $set: { state: 'verified' } });
      if (verified.modifiedCount === 0) throw invalidCode();
    },

    /**
     * Spends a verified code; answers its email. `undefined` when this interaction has no code of
     * that id; throws when it has one that is not verified for `event`.
     */
    async spend(interactionUid: string, verificationId: string, event: InteractionKind): Promise<string | undefined> {
      const found = await codes.findOne({ _id: verificationId, interactionUid });
      if (!found) return undefined;
      if (found.event !== event) throw invalidCode();
      // The conditional update is what decides single use; the read above only found the email.
      const spent = await codes.updateOne({ _id: verificationId, state: 'verified', expiresAt: { $gt: new Date(now()) } }, { $set: { state: 'used' } });
      if (spent.modifiedCount === 0) throw invalidCode();
      return found.email;
    },
  };
}

export type Codes = ReturnType<typeof createCodes>;
