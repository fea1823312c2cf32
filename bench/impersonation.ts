/**
 * What an impersonation costs, all of it (`npm run bench:impersonation`; BENCHMARKS.md, "What an
 * impersonation costs", issue 37). Our server runs with `npm start`'s settings (the delivery
 * worker, the ledger and the caches' polls on) as a child pinned to core 0; stock oidc-provider
 * beside it. At each load (4, 16 and 50 concurrent requests), rounds take turns: the stock server
 * issues `client_credentials` tokens; ours issues subject tokens through `POST /api/subject-tokens`
 * (their own line); then exchanges them at the token endpoint. Our server's CPU is counted until the
 * background work each round caused has settled: every audit record chained by the ledger, its
 * event recorded, numbered and fanned out by the delivery worker, every intent settled. Nothing is deleted between rounds, so a figure that rises
 * with the data shows in its rounds. Last, a server with command monitoring counts the database
 * commands of an issuance and of an exchange, the background's included.
 *
 *   BENCH_LOADS=4,16,50 BENCH_ROUNDS=5 BENCH_ROUND_SIZE=300 (the defaults); MONGODB_URI=... for a real MongoDB
 *   BENCH_PROFILE=dir   also a CPU profile of each round's issuance and exchanges, settling included
 */
import os from 'node:os';

import type { Db } from 'mongodb';

import { openDatabase } from '../lib/store/database.js';
import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { baselineClient, benchResource } from './support/fixtures.js';
import { pinLoadGenerator, pinning, startServerChild, type ServerChild } from './support/processes.js';
import { issueSubjectTokens, managementToken, setUpImpersonation } from './support/impersonation-setup.js';
import { admin, basic, baseUrl, exchangeBody, load } from './support/token-load.js';

const loads = (process.env.BENCH_LOADS ?? '4,16,50').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 300);

/**
 * Waits until the background work of what was just done has settled: the ledger chained every
 * record (and so recorded its event), the delivery worker numbered and fanned out every event, no
 * intent is open.
 */
async function settled(db: Db) {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [unchained, unsent, intents] = await Promise.all([
      db.collection('impersonations').countDocuments({ chainDue: { $exists: true } }),
      db.collection('hook_events').countDocuments({ $or: [{ sequenceDue: { $exists: true } }, { fanOutDue: { $exists: true } }] }),
      db.collection('change_intents').countDocuments({}),
    ]);
    if (unchained === 0 && unsent === 0 && intents === 0) return;
    if (Date.now() > deadline)
      throw new Error(`not settled after 300 s: ${unchained} audit records unchained, ${unsent} events not fanned out, ${intents} intents open`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const ccBody = () => new URLSearchParams({ grant_type: 'client_credentials', resource: benchResource, scope: 'read:data' }).toString();

/** Our server's CPU and commands from `before` until what `work` caused has settled. */
async function measured(server: ServerChild, db: Db, work: () => Promise<unknown>) {
  const before = await server.stats();
  await work();
  await settled(db);
  const after = await server.stats();
  return { cpuMicros: after.cpuMicros - before.cpuMicros, commands: after.commands - before.commands };
}

async function main() {
  pinLoadGenerator();
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const dbName = `impersonation_${Date.now()}`;
  const database = await openDatabase(uri, { dbName });
  const started = performance.now();
  const say = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${message}`);
  // `npm start`'s settings, on the runner's database (one deployment: the same public URL throughout).
  const env = { ACCESS_TOKEN_ALG: 'ES256', MONGODB_URI: uri, BENCH_DB: dbName, BASE_URL: baseUrl, ...admin };
  const lines: string[] = [];
  /** Requests the server did not answer with a token, per round. */
  const notes: string[] = [];
  try {
    const baseline = await startServerChild('baseline', env);
    let identity = await startServerChild('identity', env);
    const { userId, appAuth } = await setUpImpersonation(identity);
    const baselineAuth = basic(baselineClient.id, baselineClient.secret);
    say('set up; warming both servers');
    await load(baseline, 300, baselineAuth, ccBody);
    const { tokens: warm } = await issueSubjectTokens(identity, await managementToken(identity), userId, 300, 16);
    await load(identity, 300, appAuth, (i) => exchangeBody(warm[i]!));
    await settled(database.db);

    // Microseconds per token are milliseconds per 1,000.
    const ms = (micros: number, count: number) => micros / count;
    for (const connections of loads) {
      const ratios = { issuance: [] as number[], exchange: [] as number[] };
      const perToken = { baseline: [] as number[], issuance: [] as number[], exchange: [] as number[] };
      for (let round = 1; round <= rounds; round += 1) {
        const stock = await load(baseline, roundSize, baselineAuth, ccBody, connections);
        const adminToken = await managementToken(identity);
        let tokens: string[] = [];
        let refused = '';
        // BENCH_PROFILE=dir: a CPU profile of each phase, the settling included.
        const issued = await identity.profiled(`issuance-${connections}-${round}`, () =>
          measured(identity, database.db, async () => {
            ({ tokens, refused } = await issueSubjectTokens(identity, adminToken, userId, roundSize, connections));
          }),
        );
        // The tokens issued, each exchanged once; a refused issuance costs CPU too, and counts as a request.
        const exchanged = await identity.profiled(`exchange-${connections}-${round}`, () =>
          measured(identity, database.db, () => load(identity, tokens.length, appAuth, (i) => exchangeBody(tokens[i]!), connections)),
        );
        if (refused) notes.push(`${connections} connections, round ${round}: of ${roundSize} subject-token requests ${refused}.`);
        const base = ms(stock.cpuMicros, roundSize);
        perToken.baseline.push(base);
        perToken.issuance.push(ms(issued.cpuMicros, roundSize));
        perToken.exchange.push(ms(exchanged.cpuMicros, tokens.length));
        ratios.issuance.push(ms(issued.cpuMicros, roundSize) / base);
        ratios.exchange.push(ms(exchanged.cpuMicros, tokens.length) / base);
        say(
          `${connections} connections, round ${round}: baseline ${base.toFixed(0)} ms per 1,000; exchange ${ratios.exchange.at(-1)!.toFixed(2)}×, issuance ${ratios.issuance.at(-1)!.toFixed(2)}×${refused ? ` (${refused})` : ''}`,
        );
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const rounded = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
      lines.push(
        `| ${connections} | ${median(perToken.baseline).toFixed(0)} ms | ${median(perToken.exchange).toFixed(0)} ms: **${median(ratios.exchange).toFixed(2)}×** (rounds ${rounded(ratios.exchange)}) | ${median(perToken.issuance).toFixed(0)} ms: **${median(ratios.issuance).toFixed(2)}×** (rounds ${rounded(ratios.issuance)}) |`,
      );
    }

    // Commands, the background's included, from a server that counts them (monitoring costs CPU of its own).
    await identity.stop();
    identity = await startServerChild('identity', { ...env, BENCH_COUNT_COMMANDS: '1' });
    let tokens: string[] = [];
    const adminToken = await managementToken(identity);
    const issued = await measured(identity, database.db, async () => {
      ({ tokens } = await issueSubjectTokens(identity, adminToken, userId, roundSize, 16));
    });
    const exchanged = await measured(identity, database.db, () => load(identity, tokens.length, appAuth, (i) => exchangeBody(tokens[i]!), 16));
    lines.push(
      '',
      `Database commands, the background's included (16 connections, ${roundSize} of each): a subject token's issuance ${(issued.commands / roundSize).toFixed(1)}, an exchange ${(exchanged.commands / tokens.length).toFixed(1)}.`,
    );
    await identity.stop();
    await baseline.stop();
  } finally {
    await database.close();
    await embedded?.stop();
  }
  console.log(
    `\nOn ${embedded ? 'the embedded jongodb engine' : 'MongoDB at MONGODB_URI'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ` +
      `${new Date().toISOString().slice(0, 10)}; ${pinning ? 'server pinned to core 0, load generator to core 1' : 'no CPU pinning'}; ` +
      `${rounds} rounds of ${roundSize} at each load; ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log(
    '| concurrent requests | stock client_credentials, CPU per 1,000 | token exchange, settled (ratio) | subject token issuance, settled (ratio) |\n|---|---|---|---|',
  );
  for (const line of lines) console.log(line);
  for (const note of notes) console.log(`\n${note}`);
  process.exit(0);
}

await main();
