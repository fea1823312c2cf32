import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { requester } from './lifecycle-events.js';
import type { OptInEvents, OptInReport } from './opt-in.js';

/** What oidc-provider's tokens carry that the events read (its typings leave some out). */
interface TokenLike {
  accountId?: string;
  grantId?: string;
  sessionUid?: string;
  aud?: string | string[];
  extra?: { act?: unknown };
}
interface Entities {
  Account?: { accountId?: string };
  AccessToken?: TokenLike;
  ClientCredentials?: TokenLike;
  RefreshToken?: TokenLike;
}

/** The answers a `prompt=none` authorization request expects: a silent sign-in that found nobody. */
const expectedSilentAnswers = new Set(['login_required', 'consent_required', 'interaction_required', 'account_selection_required']);
const issuable = ['access_token', 'id_token', 'refresh_token'] as const;

const clientOf = (ctx: KoaContextWithOIDC) => ctx.oidc?.client?.clientId;
const about = (ctx: KoaContextWithOIDC, grantId: string | undefined, fields: Record<string, unknown>): Omit<OptInReport, 'event'> => ({
  ...(grantId && { entity: { type: 'Grant', id: grantId } }),
  source: 'system',
  applicationId: clientOf(ctx),
  fields: { ...fields, ...requester(ctx) },
});
const withoutUndefined = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));

/**
 * The opt-in events from oidc-provider's own: tokens issued (`grant.success`) and refused
 * (`grant.error`) at the token endpoint, authorizations refused (`authorization.error`), tokens
 * revoked at the revocation endpoint (its answer). Each is built only when some enabled hook names
 * it, after the request has been answered, and never with a token or a code: an opaque token's id
 * is the token itself, so no token id is sent.
 */
export function tokenReports(provider: Provider, optIn: OptInEvents) {
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    optIn.record('Token.Issued', () => {
      const entities = ctx.oidc.entities as Entities;
      const token = entities.AccessToken ?? entities.ClientCredentials;
      const body = (ctx.body ?? {}) as Record<string, unknown>;
      const audience = Array.isArray(token?.aud) ? token.aud[0] : token?.aud;
      return about(
        ctx,
        token?.grantId,
        withoutUndefined({
          grantType: ctx.oidc.params?.grant_type,
          applicationId: clientOf(ctx),
          userId: entities.Account?.accountId ?? token?.accountId,
          grantId: token?.grantId,
          sessionUid: token?.sessionUid,
          resource: audience,
          scope: typeof body.scope === 'string' ? body.scope : undefined,
          tokens: issuable.filter((kind) => typeof body[kind] === 'string'),
          act: token?.extra?.act,
        }),
      );
    });
  });

  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error?: string; error_description?: string }) => {
    optIn.record('Token.Failed', () =>
      about(
        ctx,
        undefined,
        withoutUndefined({
          grantType: typeof ctx.oidc?.params?.grant_type === 'string' ? ctx.oidc.params.grant_type : undefined,
          applicationId: clientOf(ctx),
          error: error.error ?? 'server_error',
          errorDescription: error.error_description,
        }),
      ),
    );
  });

  provider.on('authorization.error', (ctx: KoaContextWithOIDC, error: { error?: string; error_description?: string }) => {
    const prompts = String(ctx.oidc?.params?.prompt ?? '').split(' ');
    if (prompts.includes('none') && expectedSilentAnswers.has(error.error ?? '')) return;
    optIn.record('Authorization.Failed', () =>
      about(
        ctx,
        undefined,
        withoutUndefined({
          applicationId: clientOf(ctx),
          error: error.error ?? 'server_error',
          errorDescription: error.error_description,
          prompt: typeof ctx.oidc?.params?.prompt === 'string' ? ctx.oidc.params.prompt : undefined,
        }),
      ),
    );
  });

  // RFC 7009 answers 200 whether or not there was a token: what the revocation endpoint found and destroyed is its entity.
  provider.use(async (koa, next) => {
    await next();
    const ctx = koa as KoaContextWithOIDC;
    if (ctx.oidc?.route !== 'revocation' || ctx.status !== 200) return;
    const entities = ctx.oidc.entities as Entities;
    const [tokenType, token] = entities.RefreshToken
      ? (['refresh_token', entities.RefreshToken] as const)
      : (['access_token', entities.AccessToken ?? entities.ClientCredentials] as const);
    if (!token) return;
    optIn.record('Token.Revoked', () =>
      about(ctx, token.grantId, withoutUndefined({ tokenType, applicationId: clientOf(ctx), userId: token.accountId, grantId: token.grantId })),
    );
  });
}
