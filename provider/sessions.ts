import type { Db } from 'mongodb';

import type { EndedOfAccount as Ended } from '../hooks/lifecycle-events.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { inUnit } from '../lib/store/session.js';
import { grantableModels, providerCollection, sessionContexts } from './collections.js';

/** A stored provider model: its payload as JSON text, and the fields lifted out beside it (`adapter.ts`). */
interface Stored {
  _id: string;
  payload: string;
  expiresAt?: Date;
  accountId?: string;
  uid?: string;
  savedAt?: Date;
}

interface Authorization {
  sid?: string;
  grantId?: string;
  persistsLogout?: boolean;
}

interface SessionPayload {
  uid: string;
  accountId?: string;
  authorizations?: Record<string, Authorization>;
  [field: string]: unknown;
}

/** Where and how a session began (written at sign-in by `session-contexts.ts`). */
export interface SessionContext {
  _id: string;
  accountId: string;
  clientId?: string;
  ip?: string;
  userAgent?: string;
  signedInAt: Date;
  expiresAt?: Date;
  /** The sign-in itself, as Logto's JWT customizer context names it (`interaction`); none from before it was kept. */
  interaction?: SignInInteraction;
}

/**
 * What a sign-in proved (Logto's `JwtCustomizerUserInteractionContext`): its kind, the account, and
 * its verification records without any secret (no password hash, code, TOTP secret, challenge or
 * token), only those for that account.
 */
export interface SignInInteraction {
  interactionEvent: 'SignIn' | 'Register';
  userId: string;
  verificationRecords: Array<{ id: string; type: string; [field: string]: unknown }>;
}

/** A session as Logto's session routes answer it. */
export interface SessionView {
  payload: SessionPayload;
  lastSubmission: { signInContext: { ip?: string; userAgent?: string } } | null;
  clientId: string | null;
  accountId: string | null;
  expiresAt: number;
  lastActiveAt?: string;
}

/** A grant as Logto's grant routes answer it. */
export interface GrantView {
  id: string;
  payload: Record<string, unknown> & { clientId: string; accountId: string };
  expiresAt: number;
}

/** Which of a session's grants end with it: none (`undefined`: those that do not outlive a sign-out), every one, or first-party applications' only. */
export type GrantsTarget = 'all' | 'firstParty' | undefined;

export interface SessionStoreOptions {
  /** Whether an application is one of ours and not third-party (its grants end with `firstParty`). */
  isFirstParty(clientId: string): Promise<boolean>;
}

const parse = <T>(stored: Stored) => JSON.parse(stored.payload) as T;

/**
 * A user's sessions and grants as the provider stores them (`adapter.ts`), shown and ended as
 * Logto's session and grant routes do. Ending a session deletes it, the grants `GrantsTarget`
 * names and every token under them; revoking a grant deletes it and its tokens and takes it out of
 * the session that held it. Every write runs in the caller's unit of work (`inUnit`), which
 * announces what was ended (`hooks/lifecycle-events.ts`), so that with transactions the end and
 * its events commit together.
 */
export function createSessionStore(db: Db, options: SessionStoreOptions) {
  const sessions = db.collection<Stored>(providerCollection('Session'));
  const grants = db.collection<Stored>(providerCollection('Grant'));
  const contexts = db.collection<SessionContext>(sessionContexts);
  const live = () => ({ $or: [{ expiresAt: { $exists: false } }, { expiresAt: { $gt: new Date() } }] });
  /** Set when a host's adapter keeps the provider's models: they are not here to show or end. */
  let elsewhere = false;
  const here = () =>
    assertThat(
      !elsewhere,
      () =>
        new ApiError(
          'oidc.sessions_stored_elsewhere',
          'the host’s oidc-provider adapter keeps sessions and grants: they cannot be listed or ended here',
          undefined,
          501,
        ),
    );

  function viewOf(stored: Stored, context: SessionContext | undefined): SessionView {
    const payload = parse<SessionPayload>(stored);
    const signInContext = context && { ...(context.ip && { ip: context.ip }), ...(context.userAgent && { userAgent: context.userAgent }) };
    return {
      payload,
      lastSubmission: signInContext ? { signInContext } : null,
      clientId: context?.clientId ?? null,
      accountId: payload.accountId ?? null,
      expiresAt: stored.expiresAt?.getTime() ?? 0,
      ...(stored.savedAt && { lastActiveAt: stored.savedAt.toISOString() }),
    };
  }

  async function storedSessions(userId: string, uid?: string) {
    here();
    const found = await sessions.find({ accountId: userId, ...(uid !== undefined && { uid }), ...live() }, inUnit()).toArray();
    return found.filter((stored) => parse<SessionPayload>(stored).accountId === userId);
  }

  async function views(found: Stored[]) {
    const known = await contexts.find({ _id: { $in: found.map((stored) => parse<SessionPayload>(stored).uid) } }).toArray();
    const byUid = new Map(known.map((context) => [context._id, context]));
    return found.map((stored) => viewOf(stored, byUid.get(parse<SessionPayload>(stored).uid)));
  }

  /** Deletes grants and every token under them, in the unit of work; answers the ids this call deleted (not one another request deleted first). */
  async function deleteGrants(ids: string[]): Promise<string[]> {
    // Each grant by itself, so that of two requests ending one grant only the one whose delete took
    // it announces it. One after the other: in a unit of work, a session takes one operation at a time.
    const deleted: string[] = [];
    for (const id of new Set(ids)) if ((await grants.deleteOne({ _id: id }, inUnit())).deletedCount === 1) deleted.push(id);
    if (deleted.length === 0) return deleted;
    for (const model of grantableModels) await db.collection(providerCollection(model)).deleteMany({ grantId: { $in: deleted } }, inUnit());
    return deleted;
  }

  /** The grants of `authorizations` that `target` names. */
  async function grantsOf(authorizations: Record<string, Authorization>, target: GrantsTarget) {
    const chosen: Array<{ id: string; applicationId: string }> = [];
    for (const [applicationId, { grantId, persistsLogout }] of Object.entries(authorizations)) {
      if (!grantId) continue;
      const ends = target === 'all' || (target === 'firstParty' ? await options.isFirstParty(applicationId) : !persistsLogout);
      if (ends) chosen.push({ id: grantId, applicationId });
    }
    return chosen;
  }

  return {
    /** A host's adapter keeps the provider's models (`configure`): every method answers 501. */
    storedElsewhere() {
      elsewhere = true;
    },

    /** The user's live sessions, newest first. */
    async list(userId: string): Promise<SessionView[]> {
      const found = await storedSessions(userId);
      return (await views(found)).sort((a, b) => Number(b.payload.loginTs ?? 0) - Number(a.payload.loginTs ?? 0));
    },

    /** Whose the live session `uid` is (Logto tells another user's session from none). */
    async ownerOf(uid: string): Promise<string | undefined> {
      here();
      const found = await sessions.findOne({ uid, ...live() });
      return found ? parse<SessionPayload>(found).accountId : undefined;
    },

    /** One live session of the user, by its `uid`. */
    async find(userId: string, uid: string): Promise<SessionView | undefined> {
      const [found] = await storedSessions(userId, uid);
      return found ? (await views([found]))[0] : undefined;
    },

    /**
     * Ends the user's session `uid` (or every session but `keep`'s when `uid` is undefined) with the
     * grants `target` names; answers what it ended (no session: nothing was found).
     */
    async end(userId: string, { uid, keep, target }: { uid?: string; keep?: string; target: GrantsTarget }): Promise<Ended> {
      const found = (await storedSessions(userId, uid)).filter((stored) => keep === undefined || parse<SessionPayload>(stored).uid !== keep);
      const ended: Ended = { sessions: [], grants: [] };
      for (const stored of found) {
        const payload = parse<SessionPayload>(stored);
        const authorizations = payload.authorizations ?? {};
        // Only what this deletion removed: a concurrent end of the same session announces it once.
        const { deletedCount } = await sessions.deleteOne({ _id: stored._id }, inUnit());
        if (deletedCount === 0) continue;
        ended.sessions.push({ id: payload.uid, applicationIds: Object.keys(authorizations) });
        ended.grants.push(...(await grantsOf(authorizations, target)));
      }
      const deleted = new Set(await deleteGrants(ended.grants.map(({ id }) => id)));
      ended.grants = ended.grants.filter(({ id }) => deleted.has(id));
      await contexts.deleteMany({ _id: { $in: found.map((stored) => parse<SessionPayload>(stored).uid) } }, inUnit());
      return ended;
    },

    /** The user's live grants, of first-party or third-party applications only when `appType` says so. */
    async grants(userId: string, appType?: 'firstParty' | 'thirdParty'): Promise<GrantView[]> {
      here();
      const found = await grants.find({ accountId: userId, ...live() }).toArray();
      const shown: GrantView[] = [];
      for (const stored of found) {
        const payload = parse<GrantView['payload']>(stored);
        if (payload.accountId !== userId) continue;
        if (appType && (await options.isFirstParty(payload.clientId)) !== (appType === 'firstParty')) continue;
        shown.push({ id: stored._id, payload, expiresAt: stored.expiresAt?.getTime() ?? 0 });
      }
      return shown;
    },

    /** Revokes the user's grant `grantId` and its tokens, and takes it out of its session; answers what it ended (none: no such grant of the user). */
    async revokeGrant(userId: string, grantId: string): Promise<Ended> {
      here();
      const stored = await grants.findOne({ _id: grantId, accountId: userId }, inUnit());
      const payload = stored && parse<GrantView['payload']>(stored);
      if (!payload || payload.accountId !== userId) return { sessions: [], grants: [] };
      if ((await deleteGrants([grantId])).length === 0) return { sessions: [], grants: [] };
      for (const held of await storedSessions(userId)) {
        const session = parse<SessionPayload>(held);
        const entries = Object.entries(session.authorizations ?? {});
        const kept = entries.filter(([, authorization]) => authorization.grantId !== grantId);
        if (kept.length === entries.length) continue;
        // As the provider's own sign-out of one application: the session forgets it. Only over the
        // session as read: a session the provider saved meanwhile keeps the entry, whose grant is gone.
        await sessions.updateOne(
          { _id: held._id, payload: held.payload },
          { $set: { payload: JSON.stringify({ ...session, authorizations: Object.fromEntries(kept) }) } },
          inUnit(),
        );
      }
      return { sessions: [], grants: [{ id: grantId, applicationId: payload.clientId }] };
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
