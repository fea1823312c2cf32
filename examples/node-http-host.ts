/**
 * A plain `node:http` server adopting oidc-identity: its own request listener answers its own
 * paths and hands the rest to `nodeHandler`.
 *
 *   npm run build && node dist/examples/node-http-host.js     (MONGODB_URI=... for a real database)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

import { consoleLogger, nodeHandler, openDatabase } from '../index.js';
import { embedIdentity, runFromCommandLine, runningHost, type EmbeddedExampleOptions } from './embedded.js';

export async function startNodeHttpExample({ mongodbUri, dbName, port = 0, bootstrap, logger = consoleLogger }: EmbeddedExampleOptions) {
  let ours: ReturnType<typeof nodeHandler> | undefined;
  const server = createServer((req, res) => {
    if (req.url === '/hello') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hello: 'from the host' }));
    } else if (ours?.handles(req.url ?? '/')) {
      void ours.listener(req, res);
    } else {
      res.writeHead(ours ? 404 : 503).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  const baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const issuer = `${baseUrl}/oidc`;

  const database = await openDatabase(mongodbUri, dbName === undefined ? {} : { dbName });
  const { identity, provider, installed } = await embedIdentity({ database, issuer, baseUrl, logger, bootstrap });
  ours = nodeHandler(provider, installed);

  return runningHost({ server, baseUrl, issuer, identity, database });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runFromCommandLine(startNodeHttpExample, 'node:http host');
