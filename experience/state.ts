import type { Db } from 'mongodb';

import { isDuplicateKeyError } from '../lib/errors.js';

import { generateSecret } from '../lib/ids.js';
import type { InteractionKind } from '../hooks/catalog.js';
import type { WebAuthnFactor } from '../lib/mfa/model.js';
import type { UserDocument } from '../lib/store/models.js';
import type { UpstreamUser } from '../lib/store/identities.js';
import type { SocialIdentity, SsoIdentity } from '../lib/store/identities.js';
import type { SsoUser } from '../sso/saml.js';
import type { Proof } from '../sign-in/proofs.js';

/** A verification made in an interaction (email codes live in `verification_codes`). */
export type Verification =
  /** Sign-in: the password of this user was right; which password (`passwordProofOf` its hash; unset in an interaction begun before proofs were bound). */
  | { type: 'password'; userId: string; passwordProof?: string }
  /** Register: a new username with its password, hashed as soon as it was given. */
  | { type: 'newPasswordIdentity'; username: string; passwordHash: string }
  /** A one-time token spent (a magic link, an invitation): the email address it was for, and the organizations it joins. */
  | { type: 'oneTimeToken'; email: string; jitOrganizationIds: string[] }
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
      /** A passkey sign-in, answered: the credential that answered it. */
      credentialId?: string;
    };

export type { SocialIdentity } from '../lib/store/identities.js';

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
  /** The organizations the account joins at submit (a one-time token's `jitOrganizationIds`). */
  jitOrganizationIds?: string[];
}

/**
 * The second factors of an interaction. Every one names the account it is for (`userId`: the
 * identified user, or at a registration the id the new account will have): the factors proved
 * (`amr`, RFC 8176) and the verifications of new factors to add at submit (`bind`). They are written
 * only while the interaction still names that account, forgotten in the same write that names
 * another, and count only for that account (`secondFactorsFor`).
 */
export interface SecondFactors {
  userId: string;
  /** The factors of the account proved, each with its `amr`: each counts only while the account still has it. */
  proved?: { factorId: string; amr: string }[];
  /** What an interaction begun before proofs named their factors proved (kept, and read, only for it). */
  amr?: string[];
  bind?: string[];
  /** The account skipped enrolling a factor (where the MFA policy lets it). */
  skipped?: boolean;
}

/**
 * What the interaction's second factors are worth for `userId`: nothing unless they name that
 * account. The one rule the submit, binding and the pages apply.
 */
export function secondFactorsFor(
  experience: Pick<ExperienceDocument, 'mfa'>,
  userId: string,
  user?: Pick<UserDocument, 'mfaVerifications'>,
): { amr: string[]; bind: string[]; skipped: boolean } {
  const mfa = experience.mfa;
  if (mfa?.userId !== userId) return { amr: [], bind: [], skipped: false };
  // A factor proved counts only while the account still has it (`user`, when given): one removed since (say, as compromised) proves nothing.
  const held = mfa.proved?.filter(({ factorId }) => !user || user.mfaVerifications?.some(({ id }) => id === factorId));
  const amr = held ? [...new Set(held.map((proof) => proof.amr))] : (mfa.amr ?? []);
  return { amr, bind: mfa.bind ?? [], skipped: mfa.skipped === true };
}

/** What identifying establishes: the user to sign in (or reset) with how they proved it, or the profile of the account to create. */
export type Identified = { userId: string; amr?: string[]; proof?: Proof; profile?: Profile } | { profile: Profile };

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
  /** What identified the user (a password, an address, a linked upstream account, a passkey): the submit goes on only while the account still has it. */
  identifiedBy?: Proof;
  profile: Profile;
  /** The id the account to create will have, fixed once a passkey is registered for it (a passkey names its user). */
  newUserId?: string;
  /** MFA in this interaction, all of it for one account (see `SecondFactors`). */
  mfa?: SecondFactors;
  /** Set by the one submit that goes ahead. */
  submittedAt: Date | null;
  expiresAt: Date;
  /** The authorization request's `ui_locales` (OIDC Core §3.1.2.1): the language of the codes the Experience API sends. */
  uiLocales?: string;
}

export function createExperienceStore(db: Db) {
  const experiences = db.collection<ExperienceDocument>('experiences');

  /** Sets `fields` of the interaction's MFA for `userId`, only while it names that account (at a sign-in or a registration). */
  async function setForSubject(uid: string, userId: string, fields: { 'mfa.bind': string[] } | { 'mfa.skipped': true }): Promise<boolean> {
    const names = {
      $or: [
        { event: 'SignIn' as const, userId },
        { event: 'Register' as const, newUserId: userId },
      ],
    };
    const { matchedCount } = await experiences.updateOne(
      { _id: uid, submittedAt: null, ...names, 'mfa.userId': { $in: [userId, null] } },
      { $set: { 'mfa.userId': userId, ...fields } },
    );
    return matchedCount === 1;
  }

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
        // Made here: it is what was written. Otherwise another first request made it meanwhile, and its is read.
        if ((await experiences.updateOne({ _id: uid }, { $setOnInsert: fresh }, { upsert: true })).upsertedCount === 1) return fresh;
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

    /**
     * Starts (or restarts) the interaction as `event`: what was verified for another event is
     * forgotten. Answers the interaction as this write left it, or undefined when it was submitted.
     */
    async start(read: ExperienceDocument, event: InteractionKind): Promise<ExperienceDocument | undefined> {
      const reset = { event, verifications: {}, userId: null, profile: {} };
      const { matchedCount } = await experiences.updateOne({ _id: read._id, submittedAt: null }, { $set: reset, $unset: { mfa: '', amr: '' } });
      if (matchedCount === 0) return undefined;
      // Every field a step reads is what this write set, or what only a first open or a registration's passkey sets.
      const { mfa: _mfa, amr: _amr, ...kept } = read;
      return { ...kept, ...reset, submittedAt: null };
    },

    /** Changes the interaction's kind, keeping its verifications (Logto's `PUT /interaction-event`): who was identified, and the profile, start over. */
    async switchEvent(uid: string, event: InteractionKind): Promise<void> {
      await experiences.updateOne({ _id: uid, submittedAt: null }, { $set: { event, userId: null, profile: {} }, $unset: { mfa: '', amr: '' } });
    },

    async addVerification(uid: string, id: string, verification: Verification): Promise<void> {
      await experiences.updateOne({ _id: uid }, { $set: { [`verifications.${id}`]: verification } });
    },

    /**
     * Adds to the profile gathered for the account the interaction is about, only while it is still
     * about `current` (the user the caller read; null at a registration): false otherwise.
     */
    async setProfile(uid: string, current: string | null, profile: Profile): Promise<boolean> {
      const fields = Object.entries(profile).map(([key, value]) => [`profile.${key}`, value]);
      const { matchedCount } = await experiences.updateOne({ _id: uid, submittedAt: null, userId: current }, { $set: Object.fromEntries(fields) });
      return matchedCount === 1;
    },

    /**
     * Records who the interaction is about, in one write, and only while it still names `current`
     * (the user the caller read): naming another account forgets, in the same write, the second
     * factors and the profile gathered for the one before, and replaces how the user was proved
     * (`amr`). False when another request changed the interaction meanwhile, or it was submitted.
     */
    async identify(uid: string, current: string | null, identified: Identified): Promise<boolean> {
      const userId = 'userId' in identified ? identified.userId : undefined;
      const another = userId !== undefined && userId !== current;
      const profile = another
        ? { profile: identified.profile ?? {} }
        : Object.fromEntries(Object.entries(identified.profile ?? {}).map(([key, value]) => [`profile.${key}`, value]));
      const amr = 'amr' in identified && identified.amr ? { amr: identified.amr } : {};
      // What identified the user, as of this identification: a way of identifying with nothing to bind forgets an earlier one's.
      const proof = 'proof' in identified ? identified.proof : undefined;
      const unset = {
        ...(another && { mfa: '' as const, ...(!('amr' in amr) && { amr: '' as const }) }),
        ...(userId !== undefined && proof === undefined && { identifiedBy: '' as const }),
      };
      const update = {
        $set: { ...(userId !== undefined && { userId }), ...amr, ...(proof && { identifiedBy: proof }), ...profile },
        ...(Object.keys(unset).length > 0 && { $unset: unset }),
      };
      const { matchedCount } = await experiences.updateOne({ _id: uid, submittedAt: null, userId: current }, update);
      return matchedCount === 1;
    },

    /** Completes verification `id` once: answers false when it is not in `state` any more (answered already). */
    async completeVerification(uid: string, id: string, state: Record<string, unknown>, set: Record<string, unknown>): Promise<boolean> {
      const filter = Object.fromEntries(Object.entries(state).map(([key, value]) => [`verifications.${id}.${key}`, value]));
      const changes = Object.fromEntries(Object.entries(set).map(([key, value]) => [`verifications.${id}.${key}`, value]));
      return (await experiences.updateOne({ _id: uid, ...filter }, { $set: changes })).modifiedCount === 1;
    },

    /**
     * Records that a second factor of `userId` was proved (its id and `amr`), only while the interaction
     * is a sign-in that still names that user: false otherwise (another account was identified meanwhile).
     */
    async proveFactor(uid: string, userId: string, amr: string, factorId: string): Promise<boolean> {
      const { matchedCount } = await experiences.updateOne(
        { _id: uid, submittedAt: null, event: 'SignIn', userId, 'mfa.userId': { $in: [userId, null] } },
        { $set: { 'mfa.userId': userId }, $addToSet: { 'mfa.proved': { factorId, amr } } },
      );
      return matchedCount === 1;
    },

    /**
     * Sets the verifications of new factors to add at submit for `userId`, only while the
     * interaction still names that account (the identified user at a sign-in, the account to create
     * at a registration): false otherwise.
     */
    bindFactors: (uid: string, userId: string, bind: string[]) => setForSubject(uid, userId, { 'mfa.bind': bind }),

    /** Marks that `userId` skips enrolling, on the same terms as `bindFactors`. */
    skipFactors: (uid: string, userId: string) => setForSubject(uid, userId, { 'mfa.skipped': true }),

    async setNewUserId(uid: string, id: string): Promise<string> {
      await experiences.updateOne({ _id: uid, newUserId: { $exists: false } }, { $set: { newUserId: id } });
      return (await experiences.findOne({ _id: uid }))!.newUserId!;
    },

    /**
     * Claims the submit of the interaction as the caller read it (`read`: its event and user): one
     * caller wins, across processes, and none wins once another request has changed whom it is about.
     * `release` undoes it when the submit then fails.
     */
    async claimSubmit(read: Pick<ExperienceDocument, '_id' | 'event' | 'userId'>): Promise<boolean> {
      const filter = { _id: read._id, submittedAt: null, event: read.event, userId: read.userId };
      return (await experiences.updateOne(filter, { $set: { submittedAt: new Date() } })).modifiedCount === 1;
    },
    async releaseSubmit(uid: string): Promise<void> {
      await experiences.updateOne({ _id: uid }, { $set: { submittedAt: null } });
    },

    /** After a password reset: the interaction starts over, with nothing verified and nobody identified (the person signs in next). */
    async startOver(uid: string): Promise<void> {
      await experiences.updateOne(
        { _id: uid },
        { $set: { event: null, verifications: {}, userId: null, profile: {}, submittedAt: null }, $unset: { mfa: '', amr: '', newUserId: '' } },
      );
    },
  };
}

export type ExperienceStore = ReturnType<typeof createExperienceStore>;
