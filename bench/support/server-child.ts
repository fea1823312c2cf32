/**
 * A server process for the benchmarks, measured from outside. `identity` is our standalone
 * server; `baseline` is stock oidc-provider with one client_credentials client and one JWT
 * resource, mounted the same way (Koa, under /oidc) and signing with the same algorithm.
 * Over IPC it reports its own CPU time, memory and MongoDB commands, so that the figures are the
 * server's and not the load generator's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair } from 'jose';
import Koa from 'koa';
import Provider from 'oidc-provider';

import { loadSettings, type AccessTokenAlg } from '../../lib/config.js';
import { silentLogger } from '../../lib/logger.js';
import { mountApp } from '../../lib/mount.js';
import { startStandaloneServer } from '../../standalone.js';
import { baselineClient, benchResource, type ChildStats } from './fixtures.js';


/** Driver commands that are the driver's own upkeep, not the server's work. */
const upkeep = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'endSessions', 'buildInfo']);

async function startBaseline(alg: AccessTokenAlg) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg, use: 'sig', kid: 'baseline' };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const provider = new Provider(`http://localhost:${port}/oidc`, {
    clients: [{ client_id: baselineClient.id, client_secret: baselineClient.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], id_token_signed_response_alg: alg }],
    jwks: { keys: [jwk] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: () => ({ scope: 'read:data', audience: benchResource, accessTokenFormat: 'jwt', accessTokenTTL: 3600, jwt: { sign: { alg } } }),
      },
    },
  });
  const app = new Koa();
  app.use(mountApp('/oidc', provider, { strip: true }));
  server.on('request', app.callback());
  return port;
}

async function main() {
  const kind = process.argv[2];
  let commands = 0;
  let port: number;
  if (kind === 'baseline') {
    port = await startBaseline(loadSettings(process.env).accessTokenAlg);
  } else {
    const server = await startStandaloneServer({ ...loadSettings({ ...process.env, PORT: '0' }) }, {
      logger: silentLogger, dbName: process.env.BENCH_DB!, mongoClientOptions: { monitorCommands: true },
    });
    server.database.client.on('commandStarted', ({ commandName }) => { if (!upkeep.has(commandName)) commands += 1; });
    port = server.port;
  }
  process.on('message', (message) => {
    // Exiting on request (not on a signal) lets `--cpu-prof` write its profile.
    if (message === 'exit') process.exit(0);
    if (message === 'stats') {
      // A collection first, so that the memory figures are what is live, not what awaits collection.
      (globalThis as { gc?: () => void }).gc?.();
      const { user, system } = process.cpuUsage();
      const { rss, heapUsed } = process.memoryUsage();
      process.send!({ stats: { cpuMicros: user + system, rss, heapUsed, commands } satisfies ChildStats });
    }
  });
  process.send!({ port });
}

await main();
