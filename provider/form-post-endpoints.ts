import type { Middleware } from 'koa';

/** Largest form a POST to these endpoints may carry (a request object fits; a URL this long is still followed by browsers). */
const formLimit = 32 * 1024;

/**
 * OIDC Core §3.1.2.1 and RP-Initiated Logout §2: the authorization and end-session endpoints
 * MUST accept POST (form-encoded) as well as GET. oidc-provider's own POST support requires the
 * session cookie to be `SameSite=None`, because the relying party's form posts cross-site and a
 * `Lax` cookie is not sent with it; that would weaken every session against cross-site requests.
 * Instead, a POST is answered with a 303 to the same endpoint with the form's parameters as the
 * query: the browser's top-level GET that follows carries the `Lax` cookie, and the provider
 * handles it as the GET it is. Nothing is decided on the POST itself.
 */
export function formPostEndpoints(paths: string[]): Middleware {
  const endpoints = new Set(paths);
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || !endpoints.has(ctx.path)) return next();
    if (!ctx.is('application/x-www-form-urlencoded')) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'a POST here must be application/x-www-form-urlencoded' };
      return undefined;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > formLimit) {
        ctx.status = 413;
        ctx.body = { error: 'invalid_request', error_description: `the form is larger than ${formLimit} bytes` };
        return undefined;
      }
      chunks.push(chunk);
    }
    const query = new URLSearchParams(ctx.querystring);
    for (const [name, value] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) query.append(name, value);
    // A reference relative to the request's own URL (its last segment), so that it holds wherever
    // the provider is mounted.
    const endpoint = ctx.path.slice(ctx.path.lastIndexOf('/') + 1);
    ctx.status = 303;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(`${endpoint}?${query.toString()}`);
    return undefined;
  };
}
