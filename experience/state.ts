import type { Db } from 'mongodb';

import { isDuplicateKeyError } from '../lib/errors.js';

import { generateSecret } from '../lib/ids.js';
import type { InteractionKind } from '../hooks/catalog.js';
import type { WebAuthnFactor } from '../lib/mfa/model.js';
import type { UpstreamUser } from '../social/upstream.js';
import type { SocialIdentity, SsoIdentity } from '../social/identities.js';
import type { SsoUser } from '../sso/saml.js';

/** A verification made in an interaction (email codes live in `verification_codes`). */
export type Verification =
  /** Sign-in: the password of this user was right. */
  | { type: 'password'; userId: string }
  /** Register: a new username with its password, hashed as soon as it was given. */
  | { type: 'newPasswordIdentity'; username: string; passwordHash: string }
  | MfaVerificationRecord
  /** A sign-in with a social connector: what the callback is checked against, then who the provider said it was. */
  | {
      type: 'social';
      connectorId: string;
      target: string;
      redirectUri: string;
      state: string;
      nonce: string;
      codeVerifier: string;
      verified: boolean;
      upstream?: UpstreamUser;
    }
  /**
   * A sign-in with an enterprise SSO connector. OIDC: what the callback is checked against. SAML:
   * the AuthnRequest's id and time, then what the assertion consumer found (the person, or why not).
   * Then, verified, who the IdP said it was.
   */
  | {
      type: 'enterpriseSso';
      connectorId: string;
      providerName: 'OIDC' | 'SAML';
      redirectUri: string;
      state: string;
      nonce?: string;
      codeVerifier?: string;
      samlRequestId?: string;
      requestedAt?: number;
      samlAnswered?: boolean;
      samlError?: string;
      verified: boolean;
      upstream?: SsoUser;
    };

/**
 * An MFA step of this interaction, for `userId` (the identified user, or the account to create):
 * a new TOTP secret (sealed) or an existing one checked; new backup codes (their hashes) or one
 * used; a WebAuthn challenge (5 minutes, answered once) and, after a registration, the credential.
 */
export type MfaVerificationRecord =
  | { type: 'totp'; userId: string; secret?: string; verified: boolean }
  | { type: 'backupCode'; userId: string; codes?: string[]; verified: boolean }
  | {
      type: 'webAuthn';
      /** Empty for a passkey sign-in until it is answered: the credential names the user. */
      userId: string | null;
      mode: 'registration' | 'authentication';
      /** A passkey sign-in (the first factor, before identification), not a second factor. */
      firstFactor?: boolean;
      challenge: string;
      expiresAt: number;
      verified: boolean;
      credential?: Pick<WebAuthnFactor, 'credentialId' | 'publicKey' | 'counter' | 'transports' | 'agent'>;
    };

export type { SocialIdentity } from '../social/identities.js';

/** What the person has established so far, for the account to create or change at submit. */
export interface Profile {
  /** A social identity to add: to the account to create, or at sign-in to the identified user (linking on request). */
  socialIdentity?: SocialIdentity;
  /** An enterprise SSO identity to add (or refresh): to the account to create, or to the identified user. */
  ssoIdentity?: SsoIdentity;
  /** At a sign-in through a connector with `syncProfile`: the name, avatar and email the provider now gives. */
  synced?: { name?: string; avatar?: string; email?: string };
  username?: string;
  email?: string;
  /** Verified by a code, in its stored form (E.164 digits). */
  phone?: string;
  passwordHash?: string;
}

/** One authorization request's sign-in experience: oidc-provider's interaction uid is its id. */
export interface ExperienceDocument {
  _id: string;
  /** The form token of this interaction's pages. */
  csrf: string;
  event: InteractionKind | null;
  verifications: Record<string, Verification>;
  /** The user this interaction signs in, or resets the password of. */
  userId: string | null;
  /** How the user proved who they are, for the ID token's `amr` (unset: a password). */
  amr?: string[];
  profile: Profile;
  /** The id the account to create will have, fixed once a passkey is registered for it (a passkey names its user). */
  newUserId?: string;
  /** MFA in this interaction: how factors were proved (`amr` values), and the verifications of factors to add at submit. */
  mfa?: { amr?: string[]; bind?: string[] };
  /** Set by the one submit that goes ahead. */
  submittedAt: Date | null;
  expiresAt: Date;
  /** The authorization request's `ui_locales` (OIDC Core §3.1.2.1): the language of the codes the Experience API sends. */
  uiLocales?: string;
}

export function createExperienceStore(db: Db) {
  const experiences = db.collection<ExperienceDocument>('experiences');

  return {
    /** The interaction's experience, made on first use; it expires with the interaction. */
    async open(uid: string, expiresAt: Date, uiLocales?: unknown): Promise<ExperienceDocument> {
      const existing = await experiences.findOne({ _id: uid });
      if (existing) return existing;
      const fresh: ExperienceDocument = {
        _id: uid,
        csrf: generateSecret(),
        event: null,
        verifications: {},
        userId: null,
        profile: {},
        submittedAt: null,
        expiresAt,
        // A parameter as the request gave it: kept only as a short string (the catalogs pick from it).
        ...(typeof uiLocales === 'string' && uiLocales.length <= 200 && { uiLocales }),
      };
      try {
        await experiences.updateOne({ _id: uid }, { $setOnInsert: fresh }, { upsert: true });
      } catch (error) {
        // Two first requests raced to create it; the other made it.
        if (!isDuplicateKeyError(error)) throw error;
      }
      return (await experiences.findOne({ _id: uid }))!;
    },

    async get(uid: string): Promise<ExperienceDocument> {
      const found = await experiences.findOne({ _id: uid });
      if (!found) throw new TypeError(`experience ${uid} was not opened`);
      return found;
    },

    /** Starts (or restarts) the interaction as `event`: what was verified for another event is forgotten. */
    async start(uid: string, event: InteractionKind): Promise<void> {
      await experiences.updateOne(
        { _id: uid, submittedAt: null },
        { $set: { event, verifications: {}, userId: null, profile: {} }, $unset: { mfa: '', amr: '' } },
      );
    },

    /** Changes the interaction's kind, keeping its verifications (Logto's `PUT /interaction-event`): who was identified, and the profile, start over. */
    async switchEvent(uid: string, event: InteractionKind): Promise<void> {
      await experiences.updateOne({ _id: uid, submittedAt: null }, { $set: { event, userId: null, profile: {} }, $unset: { mfa: '', amr: '' } });
    },

    async addVerification(uid: string, id: string, verification: Verification): Promise<void> {
      await experiences.updateOne({ _id: uid }, { $set: { [`verifications.${id}`]: verification } });
    },

    async set(uid: string, changes: { userId?: string; amr?: string[]; profile?: Profile }): Promise<void> {
      // An identification's `amr` replaces the one before it (a social sign-in proves none of RFC 8176's kinds).
      const profile = Object.entries(changes.profile ?? {}).map(([key, value]) => [`profile.${key}`, value]);
      await experiences.updateOne(
        { _id: uid },
        { $set: { ...(changes.userId && { userId: changes.userId }), ...(changes.amr && { amr: changes.amr }), ...Object.fromEntries(profile) } },
      );
    },

    /** Completes verification `id` once: answers false when it is not in `state` any more (answered already). */
    async completeVerification(uid: string, id: string, state: Record<string, unknown>, set: Record<string, unknown>): Promise<boolean> {
      const filter = Object.fromEntries(Object.entries(state).map(([key, value]) => [`verifications.${id}.${key}`, value]));
      const changes = Object.fromEntries(Object.entries(set).map(([key, value]) => [`verifications.${id}.${key}`, value]));
      return (await experiences.updateOne({ _id: uid, ...filter }, { $set: changes })).modifiedCount === 1;
    },

    /** Records a factor proved in this interaction (its `amr`), and the factors to add at submit. */
    async setMfa(uid: string, mfa: NonNullable<ExperienceDocument['mfa']>): Promise<void> {
      await experiences.updateOne({ _id: uid }, { $set: { mfa } });
    },

    async forgetMfa(uid: string): Promise<void> {
      await experiences.updateOne({ _id: uid }, { $unset: { mfa: '' } });
    },

    async setNewUserId(uid: string, id: string): Promise<string> {
      await experiences.updateOne({ _id: uid, newUserId: { $exists: false } }, { $set: { newUserId: id } });
      return (await experiences.findOne({ _id: uid }))!.newUserId!;
    },

    /** Claims the submit: one caller wins, across processes. `release` undoes it when the submit then fails. */
    async claimSubmit(uid: string): Promise<boolean> {
      return (await experiences.updateOne({ _id: uid, submittedAt: null }, { $set: { submittedAt: new Date() } })).modifiedCount === 1;
    },
    async releaseSubmit(uid: string): Promise<void> {
      await experiences.updateOne({ _id: uid }, { $set: { submittedAt: null } });
    },
  };
}

export type ExperienceStore = ReturnType<typeof createExperienceStore>;
