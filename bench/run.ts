/**
 * Every benchmark, in one run, with a table at the end (`npm run bench`; see BENCHMARKS.md).
 * Servers run as child processes pinned to core 0, the load generator here on core 1; CPU time
 * and memory are the server's own, read by it and sent over IPC.
 *
 *   npm run bench                              (embedded engine; MONGODB_URI=... for a real server)
 *   BENCH_TOKENS=3000 BENCH_ROUNDS=5 BENCH_ROUND_SIZE=300 BENCH_LEAK_EXCHANGES=100000 BENCH_LEAK_ROUND_SIZE=1000 (the defaults)
 *   BENCH_PARTS=tokens,webhooks   which figures to take (both by default)
 *   BENCH_PROFILE=dir   also writes a CPU profile and a sampled allocation profile of each measured phase to dir (open in Chrome DevTools)
 */
import os from 'node:os';

import { openDatabase } from '../lib/store/database.js';
import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { pinLoadGenerator, pinning } from './support/processes.js';
import { admin, baseUrl } from './support/token-load.js';
import { tokenFigures } from './tokens.js';
import { writeCostFigures } from './write-costs.js';

/** Which figures to take: `tokens` (1, 2, 3, 5, 6) and `webhooks` (4); both by default. */
const parts = new Set((process.env.BENCH_PARTS ?? 'tokens,webhooks').split(','));

async function main() {
  pinLoadGenerator();
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const engine = embedded ? 'embedded jongodb engine' : 'MongoDB at MONGODB_URI';
  const dbName = `bench_${Date.now()}`;
  const database = await openDatabase(uri, { dbName });
  const rows: Array<[string, string]> = [];
  const started = performance.now();
  const say = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${message}`);

  try {
    // The same signing algorithm on both sides; no webhook worker or cache polling during the token figures.
    // One deployment: every identity server has the same public URL, so each accepts the others' tokens.
    const env = {
      ACCESS_TOKEN_ALG: 'ES256',
      MONGODB_URI: uri,
      BENCH_DB: dbName,
      BASE_URL: baseUrl,
      HOOKS_DELIVERY: 'false',
      CACHE_REFRESH_MS: '600000',
      ...admin,
    };
    if (parts.has('tokens')) rows.push(...(await tokenFigures({ database, env, engine, say })));
    // 4. Webhooks: what a Management API write pays for recording its event, then delivery.
    if (parts.has('webhooks')) rows.push(...(await writeCostFigures({ env, say }, { uri, dbName })));
  } finally {
    await database.close();
    await embedded?.stop();
  }

  console.log(
    `\nOn ${engine}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ` +
      `${pinning ? 'server pinned to core 0, load generator to core 1' : 'no CPU pinning (taskset not available)'}; ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log('| figure | value |\n|---|---|');
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
}

await main();
