/**
 * What the provider's lifecycle and opt-in events cost a token (`npm run bench:token-events`;
 * BENCHMARKS.md, "What the token events cost", issue 38). Our server runs with `npm start`'s
 * settings as a child pinned to core 0, stock oidc-provider beside it. At each load (4, 16 and 50
 * concurrent requests), rounds take turns: stock `client_credentials` tokens; ours with no hook
 * naming an opt-in event; ours with a hook on `Token.Issued` (a receiver on loopback answering 204),
 * its CPU counted until every token's event is recorded and delivered. Last, a server that counts
 * database commands gives the commands per token, the background's included, without and with the hook.
 *
 *   BENCH_LOADS=4,16,50 BENCH_ROUNDS=3 BENCH_ROUND_SIZE=500 (the defaults); MONGODB_URI=... for a real MongoDB
 *   BENCH_OPT_IN=0      only the rounds without the hook (for a build that has no opt-in events)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';

import type { Db } from 'mongodb';

import { openDatabase } from '../lib/store/database.js';
import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { baselineClient, benchResource } from './support/fixtures.js';
import { pinLoadGenerator, pinning, startServerChild, type ServerChild } from './support/processes.js';
import { admin, api, basic, baseUrl, load, tokenRequest } from './support/token-load.js';

const loads = (process.env.BENCH_LOADS ?? '4,16,50').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 500);
const withOptIn = process.env.BENCH_OPT_IN !== '0';

const ccBody = () => new URLSearchParams({ grant_type: 'client_credentials', resource: benchResource, scope: 'read:data' }).toString();

/** A webhook receiver on loopback that takes everything (204) and counts it. */
async function startSink() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Waits until `count` Token.Issued events are recorded and none waits to be numbered, fanned out or delivered. */
async function settled(db: Db, count: number) {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const [recorded, unsent, pending] = await Promise.all([
      db.collection('hook_events').countDocuments({ event: 'Token.Issued' }),
      db.collection('hook_events').countDocuments({ $or: [{ sequenceDue: { $exists: true } }, { fanOutDue: { $exists: true } }] }),
      db.collection('hook_deliveries').countDocuments({ state: 'pending' }),
    ]);
    if (recorded >= count && unsent === 0 && pending === 0) return;
    if (Date.now() > deadline) throw new Error(`not settled after 300 s: ${recorded} of ${count} recorded, ${unsent} events and ${pending} deliveries waiting`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function main() {
  pinLoadGenerator();
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const dbName = `token_events_${Date.now()}`;
  const database = await openDatabase(uri, { dbName });
  const sink = await startSink();
  const started = performance.now();
  const say = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${message}`);
  const env = { ACCESS_TOKEN_ALG: 'ES256', MONGODB_URI: uri, BENCH_DB: dbName, BASE_URL: baseUrl, HOOKS_ALLOWED_HOSTS: '127.0.0.1', ...admin };
  const lines: string[] = [];
  try {
    const baseline = await startServerChild('baseline', env);
    let identity = await startServerChild('identity', env);
    const adminToken = () =>
      tokenRequest(identity, basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), {
        grant_type: 'client_credentials',
        resource: `${baseUrl}/api`,
        scope: 'all',
      });
    const setUpToken = await adminToken();
    const resource = await api(identity, setUpToken, 'POST', '/api/resources', { name: 'Bench API', indicator: benchResource });
    const scope = await api(identity, setUpToken, 'POST', `/api/resources/${resource.id}/scopes`, { name: 'read:data' });
    const role = await api(identity, setUpToken, 'POST', '/api/roles', { name: 'machine reader', type: 'MachineToMachine', scopeIds: [scope.id] });
    const machine = await api(identity, setUpToken, 'POST', '/api/applications', { name: 'Bench machine', type: 'MachineToMachine' });
    await api(identity, setUpToken, 'POST', `/api/applications/${machine.id}/roles`, { roleIds: [role.id] });
    const machineAuth = basic(machine.id, machine.secret);
    const baselineAuth = basic(baselineClient.id, baselineClient.secret);
    let issued = 0;
    /** Our tokens under a hook on Token.Issued: its CPU until every event is recorded and delivered. */
    async function withHook(server: ServerChild, connections: number) {
      const token = await adminToken();
      const hook = await api(server, token, 'POST', '/api/hooks', { name: 'token stream', events: ['Token.Issued'], config: { url: sink.url } });
      const before = await server.stats();
      await load(server, roundSize, machineAuth, ccBody, connections);
      issued += roundSize;
      await settled(database.db, issued);
      const after = await server.stats();
      await api(server, token, 'DELETE', `/api/hooks/${hook.id}`);
      return { cpuMicros: after.cpuMicros - before.cpuMicros, commands: after.commands - before.commands };
    }
    say('set up; warming both servers');
    await load(baseline, roundSize, baselineAuth, ccBody);
    await load(identity, roundSize, machineAuth, ccBody);
    if (withOptIn) await withHook(identity, 16);

    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const list = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
    for (const connections of loads) {
      const stock: number[] = [];
      const off: number[] = [];
      const on: number[] = [];
      for (let round = 1; round <= rounds; round += 1) {
        stock.push((await load(baseline, roundSize, baselineAuth, ccBody, connections)).cpuMicros / roundSize / 1000);
        off.push((await load(identity, roundSize, machineAuth, ccBody, connections)).cpuMicros / roundSize / 1000);
        if (withOptIn) on.push((await withHook(identity, connections)).cpuMicros / roundSize / 1000);
        say(
          `${connections} connections, round ${round}: stock ${stock.at(-1)!.toFixed(2)} ms, ours ${off.at(-1)!.toFixed(2)} ms${withOptIn ? `, with Token.Issued ${on.at(-1)!.toFixed(2)} ms` : ''} per token`,
        );
      }
      const ratios = (values: number[]) => values.map((value, index) => value / stock[index]!);
      lines.push(
        `| ${connections} | ${median(stock).toFixed(2)} ms | ${median(off).toFixed(2)} ms: **${median(ratios(off)).toFixed(2)}×** (rounds ${list(ratios(off))}) | ${
          withOptIn
            ? `${median(on).toFixed(2)} ms: **${median(ratios(on)).toFixed(2)}×** (rounds ${list(ratios(on))}); added ${(median(on) - median(off)).toFixed(2)} ms`
            : 'not measured'
        } |`,
      );
    }

    // Commands per token, the background's included, from a server that counts them.
    await identity.stop();
    identity = await startServerChild('identity', { ...env, BENCH_COUNT_COMMANDS: '1' });
    const plain = await load(identity, roundSize, machineAuth, ccBody, 16);
    const streamed = withOptIn ? await withHook(identity, 16) : undefined;
    lines.push(
      '',
      `Database commands per token, the background's included (16 connections, ${roundSize} tokens): ${(plain.commands / roundSize).toFixed(2)} without a hook on an opt-in event` +
        (streamed
          ? `, ${(streamed.commands / roundSize).toFixed(2)} with one on Token.Issued (recording, numbering, fan-out and delivery of each event).`
          : '.'),
    );
    await identity.stop();
    await baseline.stop();
  } finally {
    await sink.close();
    await database.close();
    await embedded?.stop();
  }
  console.log(
    `\nOn ${embedded ? 'the embedded jongodb engine' : 'MongoDB at MONGODB_URI'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ` +
      `${new Date().toISOString().slice(0, 10)}; ${pinning ? 'server pinned to core 0, load generator to core 1' : 'no CPU pinning'}; ` +
      `${rounds} rounds of ${roundSize} at each load; ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log(
    '| concurrent requests | stock client_credentials, CPU per token | ours, no opt-in hook (ratio) | ours, a hook on Token.Issued, settled (ratio) |\n|---|---|---|---|',
  );
  for (const line of lines) console.log(line);
  process.exit(0);
}

await main();
