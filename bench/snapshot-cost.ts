/**
 * What the embedded engine's data directory costs under load (`npm run bench:snapshots`;
 * BENCHMARKS.md, "What the data directory costs", issue 37). `npm start` without `MONGODB_URI`
 * keeps its data in `DATA_DIR`, snapshotting the whole store every `DATA_SNAPSHOT_MS` after a
 * write; the other benchmarks run in memory. Here two servers as `npm start` runs them, each with
 * its own engine (one with a data directory, one in memory), take the same rounds in turn: subject
 * tokens issued through the API and exchanged, then a quiet wait of `BENCH_SETTLE_SECONDS` for the
 * background. Each round's server CPU per exchange is reported, so that a cost that grows with the
 * data shows.
 *
 *   BENCH_ROUNDS=4 BENCH_ROUND_SIZE=300 BENCH_CONNECTIONS=16 BENCH_SETTLE_SECONDS=15 (the defaults)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

import { pinLoadGenerator, startServerChild, type ServerChild } from './support/processes.js';
import { admin, api, basic, baseUrl, exchangeBody, load, tokenRequest } from './support/token-load.js';
import { benchResource } from './support/fixtures.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 300);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const settleSeconds = Number(process.env.BENCH_SETTLE_SECONDS ?? 15);

const managementToken = (server: ServerChild) =>
  tokenRequest(server, basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), {
    grant_type: 'client_credentials',
    resource: `${baseUrl}/api`,
    scope: 'all',
  });

async function setUp(server: ServerChild) {
  const token = await managementToken(server);
  const resource = await api(server, token, 'POST', '/api/resources', { name: 'Bench API', indicator: benchResource });
  const scope = await api(server, token, 'POST', `/api/resources/${resource.id}/scopes`, { name: 'read:data' });
  const role = await api(server, token, 'POST', '/api/roles', { name: 'reader', scopeIds: [scope.id] });
  const target = await api(server, token, 'POST', '/api/users', { username: 'target' });
  await api(server, token, 'POST', `/api/users/${target.id}/roles`, { roleIds: [role.id] });
  const app = await api(server, token, 'POST', '/api/applications', {
    name: 'support console',
    type: 'Traditional',
    customClientMetadata: { allowTokenExchange: true },
    oidcClientMetadata: { redirectUris: ['http://localhost/callback'], postLogoutRedirectUris: [] },
  });
  return { userId: target.id, appAuth: basic(app.id, app.secret) };
}

async function issue(server: ServerChild, token: string, userId: string) {
  const tokens: string[] = [];
  await autocannon({
    url: server.url,
    connections,
    amount: roundSize,
    timeout: 60,
    requests: [
      {
        method: 'POST',
        path: '/api/subject-tokens',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId, reason: 'benchmark', ticketId: 'BENCH-1' }),
        onResponse: (status: number, body: string) => {
          if (status === 201) tokens.push((JSON.parse(body) as { subjectToken: string }).subjectToken);
        },
      },
    ],
  });
  return tokens;
}

async function main() {
  pinLoadGenerator();
  const dataDir = await mkdtemp(join(os.tmpdir(), 'bench-snapshots-'));
  const env = { ACCESS_TOKEN_ALG: 'ES256', BASE_URL: baseUrl, ...admin };
  const servers = {
    'data directory': await startServerChild('identity', { ...env, DATA_DIR: dataDir }),
    'in memory': await startServerChild('identity', { ...env, DATA_DIR: '' }),
  };
  try {
    const fixtures = new Map<ServerChild, Awaited<ReturnType<typeof setUp>>>();
    for (const server of Object.values(servers)) fixtures.set(server, await setUp(server));
    const perRound: Record<string, string[]> = { 'data directory': [], 'in memory': [] };
    for (let round = 1; round <= rounds; round += 1) {
      for (const [name, server] of Object.entries(servers)) {
        const { userId, appAuth } = fixtures.get(server)!;
        const before = await server.stats();
        const tokens = await issue(server, await managementToken(server), userId);
        await load(server, tokens.length, appAuth, (index) => exchangeBody(tokens[index]!), connections);
        await new Promise((resolve) => setTimeout(resolve, settleSeconds * 1000));
        const after = await server.stats();
        const perExchange = (after.cpuMicros - before.cpuMicros) / 1000 / tokens.length;
        perRound[name]!.push(perExchange.toFixed(1));
        console.error(`round ${round}, ${name}: ${perExchange.toFixed(1)} ms of server CPU per issued and exchanged token (${tokens.length})`);
      }
    }
    console.log(
      `\n${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ` +
        `${roundSize} a round at ${connections} connections, ${settleSeconds} s quiet after each\n`,
    );
    console.log('| server | CPU per subject token issued and exchanged, ms, each round |\n|---|---|');
    for (const [name, values] of Object.entries(perRound)) console.log(`| ${name} | ${values.join(', ')} |`);
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()));
    await rm(dataDir, { recursive: true, force: true });
  }
  process.exit(0);
}

await main();
