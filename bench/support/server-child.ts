/**
 * A server process for the benchmarks, measured from outside. `identity` is our standalone
 * server; `baseline` is stock oidc-provider with one client_credentials client and one JWT
 * resource, mounted the same way (Koa, under /oidc) and signing with the same algorithm.
 * Over IPC it reports its own CPU time (its child processes' included), memory and MongoDB
 * commands, so that the figures are the server's and not the load generator's.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair } from 'jose';
import Koa from 'koa';
import Provider from 'oidc-provider';

import type { AccessTokenAlg } from '../../lib/config.js';
import { loadSettings } from '../../settings.js';
import { consoleLogger, silentLogger } from '../../lib/logger.js';
import { mountApp } from '../../lib/http/mount.js';
import { startStandaloneServer } from '../../standalone.js';
import { childrenCpuMicros } from './child-cpu.js';
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
    clients: [
      {
        client_id: baselineClient.id,
        client_secret: baselineClient.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        id_token_signed_response_alg: alg,
      },
    ],
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
  let profiling: string | undefined;
  let port: number;
  if (kind === 'baseline') {
    port = await startBaseline(loadSettings(process.env).accessTokenAlg);
  } else {
    const server = await startStandaloneServer(
      // The benchmarks measure the engine, not its snapshots: in memory only unless DATA_DIR says otherwise.
      { ...loadSettings({ DATA_DIR: '', ...process.env, PORT: '0' }) },
      {
        // Command monitoring costs CPU of its own (the driver copies every command and reply), so
        // only the child that counts round trips has it.
        logger: process.env.BENCH_SERVER_LOG ? consoleLogger : silentLogger,
        dbName: process.env.BENCH_DB,
        mongoClientOptions: { monitorCommands: process.env.BENCH_COUNT_COMMANDS === '1' },
      },
    );
    server.database.client.on('commandStarted', ({ commandName }) => {
      if (!upkeep.has(commandName)) commands += 1;
    });
    port = server.port;
  }
  const profiler = new Session();
  profiler.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => {
      profiler.post(method, params, (error, result) => (error ? reject(error) : resolve(result)));
    });
  process.on('message', async (message) => {
    if (message === 'exit') process.exit(0);
    // BENCH_PROFILE: a CPU profile of one phase, written where the runner says.
    if (typeof message === 'object' && message !== null && 'profile' in message) {
      const { profile } = message as { profile: string | null };
      // Where the time goes (.cpuprofile) and what is allocated (.heapprofile, sampled), both for DevTools.
      if (profile === null) {
        const { profile: data } = (await post('Profiler.stop')) as { profile: object };
        writeFileSync(profiling!, JSON.stringify(data));
        const { profile: heap } = (await post('HeapProfiler.stopSampling')) as { profile: object };
        writeFileSync(profiling!.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(heap));
        process.send!({ profiled: profiling });
      } else {
        profiling = profile;
        await post('Profiler.enable');
        await post('Profiler.start');
        await post('HeapProfiler.enable');
        await post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
        process.send!({ profiling: profile });
      }
      return;
    }
    if (message === 'stats') {
      // A collection first, so that the memory figures are what is live, not what awaits collection.
      (globalThis as { gc?: () => void }).gc?.();
      const { user, system } = process.cpuUsage();
      const { rss, heapUsed } = process.memoryUsage();
      const { active } = performance.eventLoopUtilization();
      // The processes it started count as its own (the claims sandbox runs in one).
      process.send!({ stats: { cpuMicros: user + system + childrenCpuMicros(), busyMs: active, rss, heapUsed, commands } satisfies ChildStats });
    }
  });
  process.send!({ port });
}

await main();
