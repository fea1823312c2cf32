import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { announcedEvent } from './catalog.js';
import type { Logger } from '../lib/logger.js';
import type { InteractionReport } from './outbox.js';

interface Login {
  accountId?: string;
  ts?: number;
}

/**
 * Announces PostSignIn (or, for the sign-in experience's sign-up and reset, PostRegister and
 * PostResetPassword) when oidc-provider finishes an interaction whose result logged someone in.
 * `interaction.ended` fires when the provider resumes the authorization request with the
 * interaction's result, after it has applied the login to the session. A result without a login
 * (an error) is not a sign-in, and neither is a login carried over from an earlier submission of
 * the same authorization request (a consent step merges the login it followed into its result).
 */
export function signInReports(provider: Provider, report: (report: InteractionReport, ctx: KoaContextWithOIDC) => Promise<void>, logger: Logger) {
  // What `interaction.ended` found, for the request that ended the interaction.
  const ended = new WeakMap<object, InteractionReport>();

  provider.on('interaction.ended', (ctx: KoaContextWithOIDC) => {
    const { oidc } = ctx;
    const login = (oidc.result as { login?: Login } | undefined)?.login;
    if (!login?.accountId) return;
    const earlier = (oidc.entities.Interaction?.lastSubmission as { login?: Login } | undefined)?.login;
    if (earlier && earlier.accountId === login.accountId && earlier.ts === login.ts) return;
    const userAgent = ctx.get('user-agent');
    // The sign-in experience names its flow: a sign-up or a reset ends with a login too.
    const flow = (oidc.result as { identityEvent?: keyof typeof announcedEvent } | undefined)?.identityEvent;
    ended.set(ctx, {
      event: flow && Object.hasOwn(announcedEvent, flow) ? announcedEvent[flow] : 'PostSignIn',
      userId: login.accountId,
      ...(oidc.client && { applicationId: oidc.client.clientId }),
      // The session's `uid`, as the session routes name it; never its `jti`, the value of its cookie.
      ...(oidc.session?.uid && { sessionId: oidc.session.uid }),
      ip: ctx.ip,
      ...(userAgent && { userAgent }),
    });
  });

  // An event emitter cannot wait, so the report is written here, after the provider has handled
  // the request and before Koa sends its answer: the event is recorded before the browser is sent
  // on. A failure is logged; the sign-in stands.
  provider.use(async (ctx, next) => {
    await next();
    const found = ended.get(ctx);
    if (found) await report(found, ctx as KoaContextWithOIDC).catch((error: unknown) => logger.error(`The ${found.event} event could not be recorded`, error));
  });
}
