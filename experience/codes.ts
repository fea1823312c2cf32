import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

import type { Db } from 'mongodb';

import { ApiError } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import { generateId } from '../lib/ids.js';
import type { InteractionKind } from '../hooks/catalog.js';

/** Where a code is sent: an email address, or a phone number in its stored form (lib/phone.ts). */
export interface CodeTarget {
  type: 'email' | 'phone';
  value: string;
}

/** The form a target is compared in: an address under the identifiers' normalization, a phone as stored. */
const keyOf = ({ type, value }: CodeTarget) => (type === 'email' ? emailKey(value) : value);

/** A code lives ten minutes and allows five tries. */
export const codeTtlMs = 10 * 60_000;
export const maxCodeAttempts = 5;

interface CodeDocument {
  /** The verification id the caller holds. */
  _id: string;
  interactionUid: string;
  event: InteractionKind;
  /** What the code was sent to, and its value in the form it is compared in (`keyOf`). */
  targetType: CodeTarget['type'];
  target: string;
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
 * Six-digit codes for an email address or a phone number, stored as hashes. Verifying counts the attempt before comparing (one
 * conditional update), so that parallel guesses cannot exceed the limit, and a code becomes
 * `verified` and then `used` through conditional updates too: single use holds across processes.
 */
export function createCodes(db: Db, now: () => number = Date.now) {
  const codes = db.collection<CodeDocument>('verification_codes');

  return {
    /** Makes a code for `target`; answers the verification id and the code (to send, or not). */
    async issue(interactionUid: string, event: InteractionKind, target: CodeTarget): Promise<{ verificationId: string; code: string }> {
      const verificationId = generateId();
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const createdAt = new Date(now());
      await codes.insertOne({
        _id: verificationId,
        interactionUid,
        event,
        targetType: target.type,
        target: keyOf(target),
        codeHash: hashCode(verificationId, code).toString('base64url'),
        attempts: 0,
        state: 'pending',
        createdAt,
        expiresAt: new Date(createdAt.getTime() + codeTtlMs),
      });
      return { verificationId, code };
    },

    /** Counts a try of `code` for `target` (a code verifies only what it was sent to); throws unless it is right. */
    async verify(interactionUid: string, verificationId: string, target: CodeTarget, code: string): Promise<void> {
      const counted = await codes.updateOne(
        {
          _id: verificationId,
          interactionUid,
          targetType: target.type,
          target: keyOf(target),
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
     * Spends a verified code; answers what it proved. `undefined` when this interaction has no code
     * of that id; throws when it has one that is not verified for `event`.
     */
    async spend(interactionUid: string, verificationId: string, event: InteractionKind): Promise<CodeTarget | undefined> {
      const found = await codes.findOne({ _id: verificationId, interactionUid });
      if (!found) return undefined;
      if (found.event !== event) throw invalidCode();
      // The conditional update is what decides single use; the read above only found the target.
      const spent = await codes.updateOne({ _id: verificationId, state: 'verified', expiresAt: { $gt: new Date(now()) } }, { $set: { state: 'used' } });
      if (spent.modifiedCount === 0) throw invalidCode();
      return { type: found.targetType, value: found.target };
    },
  };
}

export type Codes = ReturnType<typeof createCodes>;
