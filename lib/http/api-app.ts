import type { IncomingMessage } from 'node:http';

import Koa from 'koa';

import { noteRequest, requestIds } from '../request-context.js';

import { apiErrors, type ErrorLogger } from './api-errors.js';
import { useClientAddress } from './client-address.js';

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
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      noteRequest({ ...(typeof matched === 'string' && { route: matched }), clientId: ctx.state.auth?.clientId as string | undefined });
    }
  });
  app.use(useClientAddress(clientAddress));
  app.use(apiErrors(log));
  return app;
}
