import type { KoaContextWithOIDC } from 'oidc-provider';

/** What oidc-provider says when a client asks for a grant type it may not use. */
const grantTypeNotAllowed = 'requested grant type is not allowed for this client';

/**
 * The token endpoint's answers, where RFC 6749 asks for other than oidc-provider gives. Runs
 * around the provider's own handling (`provider.use`), so that every grant, ours and its own,
 * answers alike.
 */
export async function tokenResponseConformance(ctx: KoaContextWithOIDC, next: () => Promise<void>) {
  await next();
  if (ctx.oidc?.route !== 'token' || !ctx.body || typeof ctx.body !== 'object' || Buffer.isBuffer(ctx.body)) return;
  const body = ctx.body as Record<string, unknown>;
  // RFC 6749 §5.2: a client using a grant type it is not allowed is `unauthorized_client`.
  if (ctx.status === 400 && body.error === 'invalid_request' && body.error_description === grantTypeNotAllowed) {
    body.error = 'unauthorized_client';
  }
  // RFC 6749 §3.3 and §5.1: `scope` is required whenever the issued scope differs from the one
  // asked for; an empty issued scope (nothing asked for was granted) is said, not left out.
  if (ctx.status === 200 && typeof body.access_token === 'string' && body.scope === undefined) {
    body.scope = '';
  }
}
