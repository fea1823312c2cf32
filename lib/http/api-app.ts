import type { IncomingMessage } from 'node:http';

import Koa from 'koa';

import { noteRequest, requestIds } from '../request-context.js';

import { apiErrors, type ErrorLogger } from './api-errors.js';
import { useClientAddress } from './client-address.js';

/** A layer as @koa/router leaves it in `ctx.matched`: its path, and the methods of a route (none for `router.use`). */
interface MatchedLayer {
  path: unknown;
  methods: string[];
}

/**
 * The pattern of the route that matched the request (`/api/users/:userId`). Not `_matchedRoute`:
 * while a router's middleware runs, that is the middleware's own path, a regular expression's
 * source for `router.use` (`/api(?:\/|$)`), and it stays so when the middleware fails (an outage).
 */
function routePatternOf(ctx: { matched?: MatchedLayer[]; method: string }): string | undefined {
  const layers = ctx.matched ?? [];
  for (let index = layers.length - 1; index >= 0; index -= 1) {
    const { path, methods } = layers[index]!;
    if (methods.includes(ctx.method) && typeof path === 'string') return path;
  }
  return undefined;
}

/**
 * A Koa app for one of our JSON APIs, set up as every one of them is: its own error answers (JSON,
 * logged through `log`, never Koa's own), the caller's address as the trusted proxies tell it.
 * The caller adds its routes.
 */
export function jsonApiApp({ proxy, clientAddress, log }: { proxy: boolean; clientAddress: (req: IncomingMessage) => string; log: ErrorLogger }): Koa {
  const app = new Koa();
  app.silent = true;
  app.proxy = proxy;
  app.use(requestIds);
  // What answered, for the request's access-log line: the router's matched route, and the token's client.
  app.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      const route = routePatternOf(ctx);
      noteRequest({ ...(route && { route }), clientId: ctx.state.auth?.clientId as string | undefined });
    }
  });
  app.use(useClientAddress(clientAddress));
  app.use(apiErrors(log));
  return app;
}
