import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import type { Db } from 'mongodb';

import { systemClock, type Clock } from '../lib/clock.js';
import { generateSecret, sha256 } from '../lib/ids.js';
import { expiring, type CollectionIndexes } from '../lib/store/database.js';

/** The console's collections: signed-in administrators' sessions, and sign-ins under way. Both end by their `expiresAt`. */
export const consoleCollections: CollectionIndexes = {
  console_sessions: [expiring, { key: { userId: 1 }, name: 'userId' }],
  console_logins: [expiring],
};

/** How long a console session lasts from its sign-in, whatever is done in it. */
export const consoleSessionMs = 8 * 60 * 60 * 1000;
/** How long a secret just made waits for the page that shows it. */
const revealMs = 60 * 1000;
/** The key a session's revealed secret is sealed with: from the cookie's value, under another name than the session's id. */
const revealKey = (token: string) => createHash('sha256').update(`console-reveal:${token}`).digest();

/** How long a sign-in may take between leaving the console and coming back to its callback. */
export const consoleLoginMs = 10 * 60 * 1000;

/** A secret to show once on the next page, sealed with a key only the browser's cookie gives (the database alone cannot open it). */
interface SealedReveal {
  /** What it belongs to: the application whose page shows it. */
  subject: string;
  name: string;
  /** AES-256-GCM: iv, tag and ciphertext, base64url, joined by dots. */
  sealed: string;
  expiresAt: Date;
}

/** A signed-in administrator: kept under the hash of the cookie's value, never the value itself. */
export interface ConsoleSession {
  _id: string;
  reveal?: SealedReveal;
  userId: string;
  /** The token every form of this session carries (compared in constant time). */
  csrf: string;
  /** How the administrator proved who they are (RFC 8176), from the authorization code. */
  amr: string[];
  /** The provider's session the sign-in came from (its `uid`): the console's lasts no longer than it. */
  providerSessionUid: string;
  createdAt: Date;
  expiresAt: Date;
}

/** A sign-in under way: what the callback checks the provider's answer against (RFC 6749 §10.12 `state`, RFC 7636 PKCE). */
export interface ConsoleLogin {
  _id: string;
  state: string;
  verifier: string;
  /** Where the administrator was going: a path inside the console. */
  returnTo: string;
  expiresAt: Date;
}

export function createConsoleStore(db: Db, clock: Clock = systemClock) {
  const sessions = db.collection<ConsoleSession>('console_sessions');
  const logins = db.collection<ConsoleLogin>('console_logins');
  const live = () => ({ expiresAt: { $gt: clock.now() } });

  return {
    /** Starts a sign-in; answers the browser's token for it (its cookie) and what goes into the authorization request. */
    async beginLogin(returnTo: string): Promise<{ token: string; state: string; verifier: string }> {
      const token = generateSecret();
      const login = { state: generateSecret(), verifier: generateSecret() };
      await logins.insertOne({ _id: sha256(token), ...login, returnTo, expiresAt: new Date(clock.now().getTime() + consoleLoginMs) });
      return { token, ...login };
    },

    /**
     * The sign-in the browser's token names, spent: one conditional delete decides, so that of two
     * callbacks with the same token only one goes on. Undefined when unknown, expired or spent.
     */
    async spendLogin(token: string | undefined): Promise<ConsoleLogin | undefined> {
      if (!token) return undefined;
      const login = await logins.findOne({ _id: sha256(token), ...live() });
      if (!login) return undefined;
      const { deletedCount } = await logins.deleteOne({ _id: login._id });
      return deletedCount === 1 ? login : undefined;
    },

    /** A new session for `userId`, signed in within the provider's session `providerSessionUid`; answers the cookie's value. */
    async createSession(userId: string, amr: string[], providerSessionUid: string): Promise<{ token: string; session: ConsoleSession }> {
      const token = generateSecret();
      const now = clock.now();
      const session: ConsoleSession = {
        _id: sha256(token),
        userId,
        csrf: generateSecret(),
        amr,
        providerSessionUid,
        createdAt: now,
        expiresAt: new Date(now.getTime() + consoleSessionMs),
      };
      await sessions.insertOne(session);
      return { token, session };
    },

    /** The live session a cookie's value names. */
    async findSession(token: string | undefined): Promise<ConsoleSession | undefined> {
      if (!token) return undefined;
      return (await sessions.findOne({ _id: sha256(token), ...live() })) ?? undefined;
    },

    /** Ends the session a cookie's value names. */
    async endSession(token: string | undefined): Promise<void> {
      if (token) await sessions.deleteOne({ _id: sha256(token) });
    },

    /**
     * Keeps `value` (a secret just made) for the next page of this session to show, once, within a
     * minute: the redirect after the form cannot carry it. Sealed with a key derived from the
     * cookie's value, which is stored nowhere.
     */
    async reveal(token: string, session: ConsoleSession, item: { subject: string; name: string; value: string }): Promise<void> {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', revealKey(token), iv);
      const body = Buffer.concat([cipher.update(item.value, 'utf8'), cipher.final()]);
      const sealed = [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
      const reveal: SealedReveal = { subject: item.subject, name: item.name, sealed, expiresAt: new Date(clock.now().getTime() + revealMs) };
      await sessions.updateOne({ _id: session._id }, { $set: { reveal } });
    },

    /** The secret kept for `subject`'s page, taken: one conditional write decides, so it is shown once. */
    async takeReveal(token: string, session: ConsoleSession, subject: string): Promise<{ name: string; value: string } | undefined> {
      const { reveal } = session;
      if (!reveal || reveal.subject !== subject || reveal.expiresAt <= clock.now()) return undefined;
      const { modifiedCount } = await sessions.updateOne({ _id: session._id, 'reveal.sealed': reveal.sealed }, { $unset: { reveal: '' } });
      if (modifiedCount !== 1) return undefined;
      const [iv, tag, body] = reveal.sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
      const decipher = createDecipheriv('aes-256-gcm', revealKey(token), iv!);
      decipher.setAuthTag(tag!);
      return { name: reveal.name, value: Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8') };
    },

    /** Ends every console session of a user (who lost the role, or was suspended). */
    async endSessionsOf(userId: string): Promise<void> {
      await sessions.deleteMany({ userId });
    },
  };
}

export type ConsoleStore = ReturnType<typeof createConsoleStore>;

/** Whether a form's CSRF field is the session's token, compared in constant time. */
export function csrfMatches(session: ConsoleSession, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const [expected, actual] = [Buffer.from(session.csrf), Buffer.from(given)];
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
