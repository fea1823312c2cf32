import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import type { Logger } from '../lib/logger.js';
import { currentRequest } from '../lib/request-context.js';
import type { GrantRevocationCause, SessionRevocationCause } from './catalog.js';
import { shownUrl } from './models.js';
import type { LifecycleReport } from './outbox.js';

type Report = (items: LifecycleReport[]) => Promise<void>;

/** What oidc-provider's models carry that the events read (its typings leave most of it out). */
interface SessionLike {
  /** The session's id everywhere we show one (`jti` is the value of its cookie, never shown). */
  uid?: string;
  accountId?: string;
  authorizations?: Record<string, { grantId?: string }>;
}
interface GrantLike {
  jti?: string;
  iat?: number;
  accountId?: string;
  clientId?: string;
  openid?: { scope?: string };
  resources?: Record<string, string | undefined>;
}
interface Entities {
  Session?: SessionLike;
  RefreshToken?: { accountId?: string };
  AccessToken?: { accountId?: string };
  Grant?: { accountId?: string };
}

const words = (value: string | undefined) => (value ?? '').split(' ').filter(Boolean);

/** Why the provider revoked a grant, from the request that made it. */
function causeOf(ctx: KoaContextWithOIDC): GrantRevocationCause {
  switch (ctx.oidc?.route) {
    case 'revocation':
      return 'revocation_endpoint';
    case 'end_session_confirm':
      return 'end_session';
    case 'token':
      // The only grants a token request revokes: a rotated refresh token presented again, a code redeemed twice.
      if (ctx.oidc.params?.grant_type === 'refresh_token') return 'refresh_token_reuse';
      if (ctx.oidc.params?.grant_type === 'authorization_code') return 'code_replay';
      return 'provider';
    default:
      return 'provider';
  }
}

/** Who made the request: its address and user agent, when known (the token events' too). */
export const requester = (ctx: KoaContextWithOIDC) => ({ ip: ctx.ip, ...(ctx.get('user-agent') && { userAgent: ctx.get('user-agent') }) });

/**
 * The provider's lifecycle as webhook events, from oidc-provider's own events: a sign-out at the
 * end-session endpoint (`PostSignOut`), a grant made (`Grant.Created`: a grant saved that was not
 * read from the store) or revoked (`Grant.Revoked`, with the replay it answered:
 * `RefreshToken.ReuseDetected`, `AuthorizationCode.ReplayDetected`), and a back-channel logout an
 * application did not take (`BackchannelLogout.Failed`).
 *
 * An event emitter cannot wait, so what a request's events found is written after the provider
 * has handled it and before its answer is sent (the same as `PostSignIn`); a failure is logged and
 * the request stands. An event outside a provider request (a grant saved by the consent page) is
 * written at once, on its own.
 */
export function lifecycleReports(provider: Provider, report: Report, logger: Logger) {
  /** The requests this middleware is around, and what each found so far. */
  const pending = new WeakMap<object, LifecycleReport[]>();
  const failed = (error: unknown) => logger.error('Lifecycle events could not be recorded', error);
  /** A listener's fault is logged, never thrown into the provider's request (a sign-out must not fail for its event). */
  const on = provider.on.bind(provider) as (event: string, listener: (...args: never[]) => void) => unknown;
  const listen = (event: string, handler: (...args: never[]) => void) =>
    on(event, (...args: never[]) => {
      try {
        handler(...args);
      } catch (error) {
        logger.error(`The provider's ${event} could not be reported`, error);
      }
    });

  function note(item: LifecycleReport) {
    const found = pending.get(currentRequest() ?? {});
    if (found) found.push(item);
    else void report([item]).catch(failed);
  }

  provider.use(async (_ctx, next) => {
    const request = currentRequest();
    if (request) pending.set(request, []);
    try {
      await next();
    } finally {
      const found = request && pending.get(request);
      if (request) pending.delete(request);
      if (found && found.length > 0) await report(found).catch(failed);
    }
  });

  listen('end_session.success', (ctx: KoaContextWithOIDC) => {
    const session = ctx.oidc.session as SessionLike | undefined;
    if (!session?.uid || !session.accountId) return;
    const client = ctx.oidc.client?.clientId;
    // `logout=yes`: the whole session (every application it signed in to); otherwise only the application that asked.
    const applicationIds = ctx.oidc.params?.logout ? Object.keys(session.authorizations ?? {}) : client ? [client] : [];
    note({
      event: 'PostSignOut',
      entity: { type: 'Session', id: session.uid },
      source: 'system',
      applicationId: client,
      fields: { sessionId: session.uid, userId: session.accountId, applicationIds, initiatedBy: client ? 'rp' : 'user', ...requester(ctx) },
    });
  });

  listen('grant.saved', (grant: GrantLike) => {
    // A grant read from the store has its issue time; a new one gets it only in what is stored.
    if (grant.iat !== undefined || !grant.jti || !grant.accountId || !grant.clientId) return;
    note({
      event: 'Grant.Created',
      entity: { type: 'Grant', id: grant.jti },
      source: 'system',
      applicationId: grant.clientId,
      fields: {
        grantId: grant.jti,
        userId: grant.accountId,
        applicationId: grant.clientId,
        scopes: words(grant.openid?.scope),
        resources: Object.entries(grant.resources ?? {}).map(([resource, scopes]) => ({ resource, scopes: words(scopes) })),
      },
    });
  });

  listen('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    const cause = causeOf(ctx);
    const entities = ctx.oidc.entities as Entities;
    const session = (ctx.oidc.session ?? entities.Session) as SessionLike | undefined;
    // At sign-out the provider revokes each application's grant of the session, whichever application asked.
    const fromSession = Object.entries(session?.authorizations ?? {}).find(([, authorization]) => authorization.grantId === grantId)?.[0];
    const applicationId = fromSession ?? ctx.oidc.client?.clientId;
    const userId = entities.RefreshToken?.accountId ?? entities.AccessToken?.accountId ?? entities.Grant?.accountId ?? session?.accountId;
    const about = { grantId, ...(userId && { userId }), ...(applicationId && { applicationId }) };
    const entity = { type: 'Grant', id: grantId } as const;
    note({ event: 'Grant.Revoked', entity, source: 'system', applicationId, fields: { ...about, cause } });
    if (cause === 'refresh_token_reuse') {
      note({ event: 'RefreshToken.ReuseDetected', entity, source: 'system', applicationId, fields: { ...about, ...requester(ctx) } });
    } else if (cause === 'code_replay') {
      // The code is gone by now (revoked with its grant): who it was for is not known here.
      const { userId: _unknown, ...replayed } = about;
      note({ event: 'AuthorizationCode.ReplayDetected', entity, source: 'system', applicationId, fields: { ...replayed, ...requester(ctx) } });
    }
  });

  listen(
    'backchannel.error',
    (ctx: KoaContextWithOIDC, error: Error, client: { clientId: string; backchannelLogoutUri?: string }, accountId: string, sid: string) => {
      const session = ctx.oidc.session as SessionLike | undefined;
      // The provider's message may name the URI, whose user information or query may carry credentials;
      // when it does not (a timeout, a dropped connection), the event still says where the request went.
      const uri = client.backchannelLogoutUri;
      // fetch says only "fetch failed"; its cause says why (a refused or dropped connection).
      const cause = (error?.cause as Error | undefined)?.message;
      let message = `${String(error?.message ?? error)}${cause ? `: ${cause}` : ''}`;
      if (uri) {
        // As written, and as the provider requests it (`new URL(uri).href`, which may differ in case or form).
        const shown = shownUrl(uri);
        for (const form of [uri, URL.canParse(uri) ? new URL(uri).href : uri]) message = message.replaceAll(form, shown);
        if (!message.includes(shown)) message = `${message} (${shown})`;
      }
      note({
        event: 'BackchannelLogout.Failed',
        entity: { type: 'Session', id: session?.uid ?? sid },
        source: 'system',
        applicationId: client.clientId,
        fields: { ...(session?.uid && { sessionId: session.uid }), userId: accountId, applicationId: client.clientId, sid, error: message },
      });
    },
  );
}

/** A user's sessions and grants the service ended (`revokeAccount`): each session with the applications it had signed in to, each grant with its application. */
export interface EndedOfAccount {
  sessions: Array<{ id: string; applicationIds: string[] }>;
  grants: Array<{ id: string; applicationId?: string | undefined }>;
}

/** The events of a user's sessions and grants ended by the service (a suspension, a deletion, a password reset, an administrator, the user). */
export function revocationReports(userId: string, ended: EndedOfAccount, cause: SessionRevocationCause): LifecycleReport[] {
  const source = cause === 'password_reset' ? 'experience' : cause === 'user' ? 'account' : 'management';
  return [
    ...ended.sessions.map(({ id, applicationIds }): LifecycleReport => ({
      event: 'Session.Revoked',
      entity: { type: 'Session', id },
      source,
      fields: { sessionId: id, userId, applicationIds, cause },
    })),
    ...ended.grants.map(({ id, applicationId }): LifecycleReport => ({
      event: 'Grant.Revoked',
      entity: { type: 'Grant', id },
      source,
      applicationId,
      fields: { grantId: id, userId, ...(applicationId && { applicationId }), cause },
    })),
  ];
}
