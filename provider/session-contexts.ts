import type { Db } from 'mongodb';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import type { Logger } from '../lib/logger.js';
import { providerCollection, sessionContexts } from './collections.js';
import type { SessionContext, SignInInteraction } from './sessions.js';

/** oidc-provider's default session life (14 days). */
const defaultSessionLifeMs = 14 * 24 * 60 * 60 * 1000;

interface SignedIn {
  uid?: string;
  accountId?: string;
}

/**
 * Keeps where and how each session began (the application, the address, the user agent), by the
 * session's `uid`, for the session routes to show (Logto's `lastSubmission.signInContext`). Written
 * once per sign-in, when oidc-provider resumes an authorization with an interaction's login
 * (`interaction.ended`), after the provider has saved the session; a failure is logged and the
 * sign-in stands. It ends with the session (`expiresAt`, and when the session is ended).
 */
/**
 * What the sign-in behind a session proved (`SignInInteraction`), for tokens minted under it: only
 * while the session's recorded sign-in is `accountId`'s (a session that another account signed in
 * to since gives nothing to the first one's tokens).
 */
export function createSignInLookup(db: Db) {
  const contexts = db.collection<SessionContext>(sessionContexts);
  return async (sessionUid: string, accountId: string): Promise<SignInInteraction | undefined> => {
    const context = await contexts.findOne({ _id: sessionUid, accountId });
    return context?.interaction?.userId === accountId ? context.interaction : undefined;
  };
}

export function recordSessionContexts(provider: Provider, db: Db, logger: Logger) {
  const contexts = db.collection<SessionContext>(sessionContexts);
  const sessions = db.collection<{ _id: string; uid?: string; expiresAt?: Date }>(providerCollection('Session'));
  const found = new WeakMap<object, SessionContext>();

  provider.on('interaction.ended', (ctx: KoaContextWithOIDC) => {
    const result = ctx.oidc.result as { login?: { accountId?: string }; signIn?: SignInInteraction } | undefined;
    const login = result?.login;
    const session = ctx.oidc.session as SignedIn | undefined;
    if (!login?.accountId || !session?.uid || session.accountId !== login.accountId) return;
    const userAgent = ctx.get('user-agent');
    found.set(ctx, {
      _id: session.uid,
      accountId: login.accountId,
      ...(ctx.oidc.client && { clientId: ctx.oidc.client.clientId }),
      ip: ctx.ip,
      ...(userAgent && { userAgent: userAgent.slice(0, 512) }),
      signedInAt: new Date(),
      // What the sign-in proved, when our experience made it (a host's own login page gives none).
      ...(result?.signIn?.userId === login.accountId && { interaction: result.signIn }),
    });
  });

  provider.use(async (ctx, next) => {
    await next();
    const context = found.get(ctx);
    if (!context) return;
    const { _id, interaction, ...fields } = context;
    try {
      // The session as the provider saved it: the context expires with it (or, kept elsewhere, after oidc-provider's default session life).
      const saved = await sessions.findOne({ uid: _id }, { projection: { expiresAt: 1 } });
      const expiresAt = saved?.expiresAt ?? new Date(Date.now() + defaultSessionLifeMs);
      await contexts.updateOne(
        { _id },
        { $set: { ...fields, expiresAt, ...(interaction && { interaction }) }, ...(!interaction && { $unset: { interaction: '' } }) },
        { upsert: true },
      );
    } catch (error) {
      logger.error('A session’s sign-in context could not be kept', error);
    }
  });
}
