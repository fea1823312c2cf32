import type Koa from 'koa';
import type { Middleware } from 'koa';

const under = (prefix: string, path: string) => path === prefix || path.startsWith(`${prefix}/`);

/**
 * Serves a whole Koa application (oidc-provider is one) under `prefix` inside another.
 * With `strip`, the inner application routes on the path without the prefix; oidc-provider
 * rebuilds its own URLs from `req.originalUrl`, so the original is kept beside it.
 */
export function mountApp(prefix: string, app: Koa, { strip = false } = {}): Middleware {
  const handle = app.callback();
  return async (ctx, next) => {
    if (!under(prefix, ctx.path)) return next();
    const { req } = ctx;
    const original = req.url!;
    if (strip) {
      (req as { originalUrl?: string }).originalUrl = original;
      const rest = original.slice(prefix.length);
      req.url = rest.startsWith('/') ? rest : `/${rest}`;
    }
    ctx.respond = false;
    try {
      await handle(req, ctx.res);
    } finally {
      req.url = original;
    }
  };
}
