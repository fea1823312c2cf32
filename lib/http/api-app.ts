import type { IncomingMessage } from 'node:http';

import Koa from 'koa';

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
  app.use(useClientAddress(clientAddress));
  app.use(apiErrors(log));
  return app;
}
