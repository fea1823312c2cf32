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

import { pinLoadGenerator, startServerChild, type ServerChild } from './support/processes.js';
import { issueSubjectTokens, managementToken, setUpImpersonation } from './support/impersonation-setup.js';
import { admin, baseUrl, exchangeBody, load } from './support/token-load.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 300);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const settleSeconds = Number(process.env.BENCH_SETTLE_SECONDS ?? 15);

async function main() {
  pinLoadGenerator();
  const dataDir = await mkdtemp(join(os.tmpdir(), 'bench-snapshots-'));
  const env = { ACCESS_TOKEN_ALG: 'ES256', BASE_URL: baseUrl, ...admin };
  const servers = {
    'data directory': await startServerChild('identity', { ...env, DATA_DIR: dataDir }),
    'in memory': await startServerChild('identity', { ...env, DATA_DIR: '' }),
  };
  try {
    const fixtures = new Map<ServerChild, Awaited<ReturnType<typeof setUpImpersonation>>>();
    for (const server of Object.values(servers)) fixtures.set(server, await setUpImpersonation(server));
    const perRound: Record<string, string[]> = { 'data directory': [], 'in memory': [] };
    for (let round = 1; round <= rounds; round += 1) {
      for (const [name, server] of Object.entries(servers)) {
        const { userId, appAuth } = fixtures.get(server)!;
        const before = await server.stats();
        const { tokens } = await issueSubjectTokens(server, await managementToken(server), userId, roundSize, connections);
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
