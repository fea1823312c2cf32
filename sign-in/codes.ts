import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

import type { Db } from 'mongodb';

import { ApiError } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import { generateId } from '../lib/ids.js';
import { requirePhone } from '../lib/phone.js';
import type { InteractionKind } from '../hooks/catalog.js';
import { expiring } from '../lib/store/database.js';
import { inUnit } from '../lib/store/session.js';

/** What a code is for: an interaction's step, or a signed-in user's verification through the Account API. */
export type CodePurpose = InteractionKind | 'Account';

/** The owner of the Account API's codes: one user through one application (a code is good only with a token of both). */
export const accountCodeOwner = (userId: string, clientId: string) => `account:${userId}:${clientId}`;

/** Where a code is sent: an email address, or a phone number in its stored form (lib/phone.ts). */
export interface CodeTarget {
  type: 'email' | 'phone';
  value: string;
}

/** A target as it is compared and sent: a phone number in its stored form (422 `user.invalid_phone` for one that cannot exist). */
export function codeTargetOf({ type, value }: CodeTarget, field?: string): CodeTarget {
  return type === 'email' ? { type, value } : { type, value: requirePhone(value, field) };
}

/** The form a target is compared in: an address under the identifiers' normalization, a phone as stored. */
const keyOf = ({ type, value }: CodeTarget) => (type === 'email' ? emailKey(value) : value);

/** A code lives ten minutes and allows five tries. */
export const codeTtlMs = 10 * 60_000;
export const maxCodeAttempts = 5;

interface CodeDocument {
  /** The verification id the caller holds. */
  _id: string;
  /** Whose it is: the interaction's uid, or `accountCodeOwner(user, application)` for the Account API. */
  owner: string;
  event: CodePurpose;
  /** What the code was sent to, and its value in the form it is compared in (`keyOf`). */
  targetType: CodeTarget['type'];
  target: string;
  codeHash: string;
  attempts: number;
  /**
   * `pending` until the right code is given, `verified` then, `used` once an identification spent
   * it; `replaced` once a newer code was sent to the same address for the same owner.
   */
  state: 'pending' | 'verified' | 'used' | 'replaced';
  createdAt: Date;
  expiresAt: Date;
}

/** Codes expire by themselves; an owner's codes to one address are found together (a new one replaces them). */
export const codeIndexes = [expiring, { key: { owner: 1, targetType: 1, target: 1 }, name: 'owner_target' }];

const hashCode = (verificationId: string, code: string) => createHash('sha256').update(`${verificationId}:${code}`).digest();

/**
 * Why a code did not verify, in Logto's order and with its codes (its `libraries/passcode.ts`):
 * an id this caller holds no code under (404), a code sent to another address or number, one
 * verified already, expired, out of tries, or wrong. Only the holder of the verification id (the
 * interaction, or the account's session) learns which; the tries are counted all the same.
 */
function refusal(found: CodeDocument | null, target: CodeTarget, at: number): ApiError {
  if (!found) return new ApiError('session.verification_session_not_found', 'no verification code of this interaction has that id');
  if (found.targetType !== target.type || found.target !== keyOf(target)) {
    return target.type === 'email'
      ? new ApiError('verification_code.email_mismatch', 'this code was sent to another email address')
      : new ApiError('verification_code.phone_mismatch', 'this code was sent to another phone number');
  }
  if (found.state === 'replaced') return new ApiError('verification_code.not_found', 'a newer code was sent to this address; use that one');
  if (found.state !== 'pending') return new ApiError('verification_code.not_found', 'this code was used already; ask for a new one');
  if (found.expiresAt.getTime() <= at) return new ApiError('verification_code.expired', 'the verification code has expired; ask for a new one');
  if (found.attempts >= maxCodeAttempts) return new ApiError('verification_code.exceed_max_try', 'too many wrong codes; ask for a new one');
  return wrongCode();
}
const wrongCode = () => new ApiError('verification_code.code_mismatch', 'the verification code is wrong');
/** A code that is not verified for what it is spent on (Logto's answer to identifying with one). */
const unverified = () => new ApiError('session.verification_failed', 'the verification code is not verified for this step');

/**
 * Whether a code sent for `sentFor` may be spent on `event`: its own, or, as in Logto, a sign-in's
 * for a registration and back (a registration that finds the address taken goes on as a sign-in
 * with the same code; both prove only that the person holds the address). A reset's code resets,
 * and the Account API's stays there.
 */
const spendableOn = (sentFor: CodePurpose, event: CodePurpose) =>
  sentFor === event || ((sentFor === 'SignIn' || sentFor === 'Register') && (event === 'SignIn' || event === 'Register'));

/**
 * Six-digit codes for an email address or a phone number, stored as hashes. Verifying counts the attempt before comparing (one
 * conditional update), so that parallel guesses cannot exceed the limit, and a code becomes
 * `verified` and then `used` through conditional updates too: single use holds across processes.
 */
export function createCodes(db: Db, now: () => number = Date.now) {
  const codes = db.collection<CodeDocument>('verification_codes');

  return {
    /**
     * Makes a code for `target`; answers the verification id and the code (to send, or not). As
     * Logto keeps one verification per identifier, the owner's earlier codes to the same address
     * stop counting first (verified or not), so that asking again and again does not multiply the
     * guesses a code allows. (Two sends at the same instant may both stay live: each retires only
     * what was there before it.)
     */
    async issue(owner: string, event: CodePurpose, target: CodeTarget): Promise<{ verificationId: string; code: string; expiresAt: Date }> {
      await codes.updateMany(
        { owner, targetType: target.type, target: keyOf(target), state: { $in: ['pending', 'verified'] } },
        { $set: { state: 'replaced' } },
      );
      const verificationId = generateId();
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const createdAt = new Date(now());
      const expiresAt = new Date(createdAt.getTime() + codeTtlMs);
      await codes.insertOne({
        _id: verificationId,
        owner,
        event,
        targetType: target.type,
        target: keyOf(target),
        codeHash: hashCode(verificationId, code).toString('base64url'),
        attempts: 0,
        state: 'pending',
        createdAt,
        expiresAt,
      });
      return { verificationId, code, expiresAt };
    },

    /** Counts a try of `code` for `target` (a code verifies only what it was sent to); throws unless it is right. */
    async verify(owner: string, verificationId: string, target: CodeTarget, code: string): Promise<void> {
      const counted = await codes.updateOne(
        {
          _id: verificationId,
          owner,
          targetType: target.type,
          target: keyOf(target),
          state: 'pending',
          attempts: { $lt: maxCodeAttempts },
          expiresAt: { $gt: new Date(now()) },
        },
        { $inc: { attempts: 1 } },
      );
      // The conditional update decides; the read after a refusal only says why.
      if (counted.matchedCount === 0) throw refusal(await codes.findOne({ _id: verificationId, owner }), target, now());
      const stored = await codes.findOne({ _id: verificationId });
      const expected = Buffer.from(stored!.codeHash, 'base64url');
      if (!/^\d{6}$/.test(code) || !timingSafeEqual(hashCode(verificationId, code), expected)) throw wrongCode();
      const verified = await codes.updateOne({ _id: verificationId, state: 'pending' }, { $set: { state: 'verified' } });
      if (verified.modifiedCount === 0) throw new ApiError('verification_code.not_found', 'this code was used already; ask for a new one');
    },

    /**
     * Spends a verified code; answers what it proved. `undefined` when `owner` has no code of that
     * id; throws when it has one that is not verified for `event`, or (given `accept`) proved none of
     * those targets. In a unit of work it is spent in the unit: a change that fails leaves the code unspent.
     */
    async spend(owner: string, verificationId: string, event: CodePurpose, { accept }: { accept?: CodeTarget[] } = {}): Promise<CodeTarget | undefined> {
      const found = await codes.findOne({ _id: verificationId, owner }, inUnit());
      if (!found) return undefined;
      if (!spendableOn(found.event, event)) throw unverified();
      if (accept && !accept.some((target) => target.type === found.targetType && keyOf(target) === found.target)) throw unverified();
      // The conditional update is what decides single use; the read above only found the target.
      const spent = await codes.updateOne(
        { _id: verificationId, state: 'verified', expiresAt: { $gt: new Date(now()) } },
        { $set: { state: 'used' } },
        inUnit(),
      );
      if (spent.modifiedCount === 0) throw unverified();
      return { type: found.targetType, value: found.target };
    },

    /**
     * What a verified, unspent, unexpired code of `owner` proved, if it may be spent on `event`,
     * without spending it: for the checks a step makes before it spends (an identifier taken must
     * not cost the person the code they would go on with).
     */
    async provedBy(owner: string, verificationId: string, event: CodePurpose): Promise<CodeTarget | undefined> {
      const found = await codes.findOne({ _id: verificationId, owner, state: 'verified', expiresAt: { $gt: new Date(now()) } });
      return found && spendableOn(found.event, event) ? { type: found.targetType, value: found.target } : undefined;
    },

    /** The codes `owner` spent (on an identification or a profile field): what they proved, by verification id. */
    async spentBy(owner: string): Promise<Array<{ verificationId: string; target: CodeTarget }>> {
      const spent = await codes.find({ owner, state: 'used' }).toArray();
      return spent.map(({ _id, targetType, target }) => ({ verificationId: _id, target: { type: targetType, value: target } }));
    },

    /** Whether `owner` has a verified, unspent, unexpired code of that id for one of `accept` (a check before a unit of work spends it). */
    async isSpendable(owner: string, verificationId: string, event: CodePurpose, accept: CodeTarget[]): Promise<boolean> {
      const found = await codes.findOne({ _id: verificationId, owner, event, state: 'verified', expiresAt: { $gt: new Date(now()) } });
      return found !== null && accept.some((target) => target.type === found.targetType && keyOf(target) === found.target);
    },
  };
}

export type Codes = ReturnType<typeof createCodes>;
