import type { Db } from 'mongodb';

import { generateSecret, sha256 } from '../lib/ids.js';
import type { WebAuthnFactor } from '../lib/mfa/model.js';
import type { AuthorizationChecks } from '../social/upstream.js';
import type { UpstreamUser } from '../lib/store/identities.js';
import { inUnit } from '../lib/store/session.js';

/** A passkey just registered, before it becomes a factor. */
type NewCredential = Pick<WebAuthnFactor, 'credentialId' | 'publicKey' | 'counter' | 'transports' | 'agent'>;

/** A step-up verification lives ten minutes and is spent by the one sensitive change it allows. */
export const verificationTtlMs = 10 * 60_000;

/** A social connector's sign-in, made to link its account to the user's. */
export interface SocialLink extends AuthorizationChecks {
  connectorId: string;
  target: string;
  upstream?: UpstreamUser;
}

interface VerificationRecord {
  /** The SHA-256 of the id the user's application sends back as `logto-verification-id` (unguessable): a copy of this collection allows no change. */
  _id: string;
  userId: string;
  /** The application whose token made it: a record is good only with a token of the same application. */
  clientId: string;
  /**
   * `password`: a step-up; `webAuthnRegistration`: a passkey being registered (its challenge, then
   * its credential); `social`: a sign-in with a social connector to link (its checks, then who the provider said it was).
   */
  type: 'password' | 'webAuthnRegistration' | 'social';
  /** A step-up's: the password it checked (`passwordProofOf`); spendable only while the account's password is still that one. */
  passwordProof?: string;
  challenge?: string;
  credential?: NewCredential;
  social?: SocialLink;
  usedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * Step-up verification records (Logto's `/api/verifications`): proof, made moments ago, that the
 * holder of the user's token also knows the password. Bound to the user and the application, single
 * use (a conditional update spends it, across processes), ten minutes.
 */
export function createVerificationRecords(db: Db, now: () => number = Date.now) {
  const records = db.collection<VerificationRecord>('verification_records');
  return {
    async create(
      userId: string,
      clientId: string,
      type: VerificationRecord['type'],
      { challenge, social, passwordProof, ttlMs = verificationTtlMs }: { challenge?: string; social?: SocialLink; passwordProof?: string; ttlMs?: number } = {},
    ): Promise<{ id: string; expiresAt: Date }> {
      const createdAt = new Date(now());
      const id = generateSecret();
      const record: VerificationRecord = {
        _id: sha256(id),
        userId,
        clientId,
        type,
        ...(challenge && { challenge }),
        ...(social && { social }),
        ...(passwordProof && { passwordProof }),
        usedAt: null,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + ttlMs),
      };
      await records.insertOne(record);
      return { id, expiresAt: record.expiresAt };
    },

    /** A social sign-in of this user and application (not expired), verified or not. */
    async social(id: string, userId: string, clientId: string): Promise<SocialLink | undefined> {
      const found = await records.findOne({ _id: sha256(id), userId, clientId, type: 'social', usedAt: null, expiresAt: { $gt: new Date(now()) } });
      return found?.social;
    },

    /** Stores who the provider said it was, once (a callback is answered once). */
    async completeSocial(id: string, upstream: UpstreamUser): Promise<boolean> {
      const { modifiedCount } = await records.updateOne(
        { _id: sha256(id), type: 'social', 'social.upstream': { $exists: false } },
        { $set: { 'social.upstream': upstream } },
      );
      return modifiedCount === 1;
    },

    /** Spends a verified social sign-in of this user and application; answers it. */
    async spendSocial(id: string, userId: string, clientId: string): Promise<SocialLink | undefined> {
      const filter = {
        _id: sha256(id),
        userId,
        clientId,
        type: 'social' as const,
        'social.upstream': { $exists: true },
        usedAt: null,
        expiresAt: { $gt: new Date(now()) },
      };
      const found = await records.findOne(filter, inUnit());
      if (!found) return undefined;
      const { modifiedCount } = await records.updateOne(filter, { $set: { usedAt: new Date(now()) } }, inUnit());
      return modifiedCount === 1 ? found.social : undefined;
    },

    /** A passkey registration of this user and application, still waiting for its answer. */
    async pendingRegistration(id: string, userId: string, clientId: string): Promise<{ challenge: string } | undefined> {
      const found = await records.findOne({
        _id: sha256(id),
        userId,
        clientId,
        type: 'webAuthnRegistration',
        credential: { $exists: false },
        expiresAt: { $gt: new Date(now()) },
      });
      return found?.challenge ? { challenge: found.challenge } : undefined;
    },

    /** Stores the verified credential on its registration, once (the challenge answers once). */
    async completeRegistration(id: string, credential: NewCredential): Promise<boolean> {
      const { modifiedCount } = await records.updateOne(
        { _id: sha256(id), type: 'webAuthnRegistration', credential: { $exists: false } },
        { $set: { credential } },
      );
      return modifiedCount === 1;
    },

    /** Spends a completed registration of this user and application; answers its credential. */
    async spendRegistration(id: string, userId: string, clientId: string): Promise<NewCredential | undefined> {
      const filter = {
        _id: sha256(id),
        userId,
        clientId,
        type: 'webAuthnRegistration' as const,
        credential: { $exists: true },
        usedAt: null,
        expiresAt: { $gt: new Date(now()) },
      };
      const found = await records.findOne(filter, inUnit());
      if (!found) return undefined;
      const { modifiedCount } = await records.updateOne(filter, { $set: { usedAt: new Date(now()) } }, inUnit());
      return modifiedCount === 1 ? found.credential : undefined;
    },

    /** Whether `spend` would spend the record now (nothing is changed). */
    async isSpendable(id: string, userId: string, clientId: string, passwordProof: string | undefined): Promise<boolean> {
      if (passwordProof === undefined) return false;
      const filter = { _id: sha256(id), userId, clientId, type: 'password' as const, passwordProof, usedAt: null, expiresAt: { $gt: new Date(now()) } };
      return (await records.countDocuments(filter, { limit: 1 })) === 1;
    },

    /**
     * Spends the password step-up for this user and application, made with the password the
     * account has now (`passwordProof`, of its current hash); false when it is unknown, theirs
     * not, expired, spent, or made with a password the account no longer has.
     */
    async spend(id: string, userId: string, clientId: string, passwordProof: string | undefined): Promise<boolean> {
      if (passwordProof === undefined) return false;
      const { modifiedCount } = await records.updateOne(
        { _id: sha256(id), userId, clientId, type: 'password', passwordProof, usedAt: null, expiresAt: { $gt: new Date(now()) } },
        { $set: { usedAt: new Date(now()) } },
        inUnit(),
      );
      return modifiedCount === 1;
    },
  };
}
