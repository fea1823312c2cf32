/**
 * An Express application adopting oidc-identity: the same provider configuration and identity as
 * `embedded.ts` (Koa), mounted with `nodeHandler` before the host's own body parser and routes.
 *
 *   npm run build && node dist/examples/express-host.js     (MONGODB_URI=... for a real database)
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

import express from 'express';

import { consoleLogger, nodeHandler, openDatabase } from '../index.js';
import { embedIdentity, runFromCommandLine, runningHost, type EmbeddedExampleOptions } from './embedded.js';

export async function startExpressExample({ mongodbUri, dbName, port = 0, bootstrap, logger = consoleLogger }: EmbeddedExampleOptions) {
  const app = express();
  // The port, and so the issuer, is known once the server listens; requests before the identity is ready are 503.
  let ours: ReturnType<typeof nodeHandler> | undefined;
  app.use((req, res, next) => (ours ? ours.middleware(req, res, next) : res.status(503).end()));
  // The host's own: a body parser and a route, after oidc-identity, which reads its own bodies.
  app.use(express.json());
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'from the host' });
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(port, () => resolve(listening));
  });
  const baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const issuer = `${baseUrl}/oidc`;

  const database = await openDatabase(mongodbUri, dbName === undefined ? {} : { dbName });
  const { identity, provider, installed } = await embedIdentity({ database, issuer, baseUrl, logger, bootstrap });
  ours = nodeHandler(provider, installed, { providerPrefix: '/oidc' });

  return runningHost({ server, baseUrl, issuer, identity, database });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runFromCommandLine(startExpressExample, 'Express host');
