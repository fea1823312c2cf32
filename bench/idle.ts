/**
 * What a server with nothing to do costs (`npm run bench:idle`; BENCHMARKS.md, "What an
 * impersonation costs", issue 37). Our server with `npm start`'s settings (the delivery worker, the
 * ledger and the caches' polls on), and stock oidc-provider, each a child; after a warm-up, each
 * one's CPU (all its threads) over a window with no request; then a second child of ours with
 * command monitoring counts the database commands of the same window, by command and collection
 * (monitoring costs CPU of its own, so the first child has none). A benchmark round that waits for
 * its background to settle pays this for every second it waits.
 *
 *   BENCH_IDLE_SECONDS=30 (the default); MONGODB_URI=... for a real MongoDB
 */
import os from 'node:os';

import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { startServerChild, type ServerChild } from './support/processes.js';
import { admin, baseUrl } from './support/token-load.js';

const seconds = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The child's CPU (ms a second) and commands (a second) over the window, after a warm-up. */
async function idle(server: ServerChild) {
  await pause(10_000);
  const before = await server.stats();
  await pause(seconds * 1000);
  const after = await server.stats();
  return { cpuMs: (after.cpuMicros - before.cpuMicros) / 1000 / seconds, commands: (after.commands - before.commands) / seconds };
}

async function main() {
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const env = { ACCESS_TOKEN_ALG: 'ES256', MONGODB_URI: uri, BENCH_DB: `idle_${Date.now()}`, BASE_URL: baseUrl, ...admin };
  try {
    const rows: string[] = [];
    for (const kind of ['baseline', 'identity'] as const) {
      const server = await startServerChild(kind, env);
      const { cpuMs } = await idle(server);
      rows.push(`| ${kind === 'baseline' ? 'stock oidc-provider' : 'oidc-identity'} | ${cpuMs.toFixed(1)} ms |`);
      await server.stop();
    }
    const counting = await startServerChild('identity', { ...env, BENCH_COUNT_COMMANDS: '1' });
    const { commands } = await idle(counting);
    await counting.stop();
    console.log(
      `\nOn ${embedded ? 'the embedded jongodb engine' : 'MongoDB at MONGODB_URI'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ` +
        `${new Date().toISOString().slice(0, 10)}; ${seconds} s after a 10 s warm-up\n`,
    );
    console.log('| idle server | CPU a second, all threads |\n|---|---|');
    for (const row of rows) console.log(row);
    console.log(`\nDatabase commands a second while idle (oidc-identity): ${commands.toFixed(1)}.`);
  } finally {
    await embedded?.stop();
  }
  process.exit(0);
}

await main();
