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

import autocannon from 'autocannon';
import type { Db } from 'mongodb';

import { openDatabase } from '../lib/store/database.js';
import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { generateSecret, sha256 } from '../lib/ids.js';
import { accessTokenType, tokenExchangeGrantType } from '../provider/token-types.js';
import { TestBrowser } from '../spec/support/browser.js';
import { pinLoadGenerator, pinning, startServerChild, type ServerChild } from './support/processes.js';
import { authorizationCode } from './support/sign-in.js';
import { baselineClient, benchResource, type ChildStats } from './support/fixtures.js';
import { startReceiver, webhookFigures } from './webhooks.js';

const tokensPerRun = Number(process.env.BENCH_TOKENS ?? 3000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 300);
const leakExchanges = Number(process.env.BENCH_LEAK_EXCHANGES ?? 100000);
const leakRoundSize = Number(process.env.BENCH_LEAK_ROUND_SIZE ?? 1000);
/** Figure 1 at loads below the 50 connections of the main rows (the baseline is measured at each too). */
const lowerLoads = [4, 16];
/** Which figures to take: `tokens` (1, 2, 3, 5, 6) and `webhooks` (4); both by default. */
const parts = new Set((process.env.BENCH_PARTS ?? 'tokens,webhooks').split(','));
const admin = { BOOTSTRAP_CLIENT_ID: 'bench-admin', BOOTSTRAP_CLIENT_SECRET: 'bench-admin-secret-0123456789' };
const baseUrl = 'http://id.bench.test';
const actorPassword = 'correct horse battery staple';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The custom-claims function of the README, stored as the operator would. */
const customClaimsScript = `const getCustomJwtClaims = async ({ token, context, environmentVariables }) => {
  if (context.grant?.type === 'urn:ietf:params:oauth:grant-type:token-exchange') {
    return { impersonation_context: context.grant.subjectTokenContext, tier: environmentVariables.TIER };
  }
  return {};
};`;

interface Load {
  count: number;
  cpuMicros: number;
  commands: number;
  p50: number;
  p99: number;
  rps: number;
}

/** Sends `amount` POSTs to the token endpoint, each with the body `body(i)`, and measures the server meanwhile. */
async function load(server: ServerChild, amount: number, authorization: string, body: (index: number) => string, connections = 50): Promise<Load> {
  let next = 0;
  const before = await server.stats();
  const result = await autocannon({
    url: server.url,
    connections: Math.min(connections, amount),
    amount,
    timeout: 60,
    requests: [
      {
        method: 'POST',
        path: '/oidc/token',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (request) => ({ ...request, body: body(next++) }),
      },
    ],
  });
  const after = await server.stats();
  if (result.non2xx > 0 || result.errors > 0) {
    // One more, by hand, to say what the answers were.
    const sample = await fetch(`${server.url}/oidc/token`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: body(0),
    });
    throw new Error(`${server.kind}: ${result.non2xx} answers were not 2xx, ${result.errors} errors; one of them: ${sample.status} ${await sample.text()}`);
  }
  return {
    count: amount,
    cpuMicros: after.cpuMicros - before.cpuMicros,
    commands: after.commands - before.commands,
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
  };
}

const combine = (loads: Load[]): Load => ({
  count: loads.reduce((sum, l) => sum + l.count, 0),
  cpuMicros: loads.reduce((sum, l) => sum + l.cpuMicros, 0),
  commands: loads.reduce((sum, l) => sum + l.commands, 0),
  // Rounds are alike: their mean latency and rate stand for the whole.
  p50: loads.reduce((sum, l) => sum + l.p50, 0) / loads.length,
  p99: Math.max(...loads.map((l) => l.p99)),
  rps: loads.reduce((sum, l) => sum + l.rps, 0) / loads.length,
});

async function api(server: ServerChild, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response.status === 204 ? undefined : (response.json() as Promise<any>); // eslint-disable-line @typescript-eslint/no-explicit-any -- set-up reads arbitrary JSON
}

async function tokenRequest(server: ServerChild, authorization: string, params: Record<string, string>) {
  const response = await fetch(`${server.url}/oidc/token`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`token request failed: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Subject tokens written straight to the database (their issuance is not what is measured). */
async function seedSubjectTokens(db: Db, count: number, userId: string, clientId: string) {
  const now = Date.now();
  const tokens = Array.from({ length: count }, () => generateSecret());
  await db.collection('subject_tokens').insertMany(
    tokens.map((token) => ({
      _id: sha256(token) as never,
      userId,
      context: { ticket: 'BENCH-1', reason: 'benchmark' },
      clientId,
      createdAt: new Date(now),
      expiresAt: new Date(now + 600_000),
    })),
  );
  return tokens;
}

const exchangeBody = (token: string, actorToken?: string) =>
  new URLSearchParams({
    grant_type: tokenExchangeGrantType,
    subject_token: token,
    subject_token_type: accessTokenType,
    resource: benchResource,
    scope: 'read:data',
    ...(actorToken && { actor_token: actorToken, actor_token_type: accessTokenType }),
  }).toString();

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
    if (parts.has('tokens')) {
      const baseline = await startServerChild('baseline', env);
      const identity = await startServerChild('identity', env);

      // Set-up through the Management API: an API resource with a permission, a role holding it,
      // the target and actor users, a first-party application allowed to exchange, and a
      // machine-to-machine application with the same permission.
      const adminToken = await tokenRequest(identity, basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), {
        grant_type: 'client_credentials',
        resource: `${baseUrl}/api`,
        scope: 'all',
      });
      const resource = await api(identity, adminToken, 'POST', '/api/resources', { name: 'Bench API', indicator: benchResource });
      const scope = await api(identity, adminToken, 'POST', `/api/resources/${resource.id}/scopes`, { name: 'read:data' });
      const role = await api(identity, adminToken, 'POST', '/api/roles', { name: 'reader', scopeIds: [scope.id] });
      const machineRole = await api(identity, adminToken, 'POST', '/api/roles', { name: 'machine reader', type: 'MachineToMachine', scopeIds: [scope.id] });
      const target = await api(identity, adminToken, 'POST', '/api/users', { username: 'target' });
      const actor = await api(identity, adminToken, 'POST', '/api/users', { username: 'actor', password: actorPassword });
      for (const user of [target, actor]) await api(identity, adminToken, 'POST', `/api/users/${user.id}/roles`, { roleIds: [role.id] });
      const app = await api(identity, adminToken, 'POST', '/api/applications', {
        name: 'support console',
        type: 'Traditional',
        customClientMetadata: { allowTokenExchange: true },
        oidcClientMetadata: { redirectUris: ['http://localhost/callback'], postLogoutRedirectUris: [] },
      });
      const machine = await api(identity, adminToken, 'POST', '/api/applications', { name: 'machine', type: 'MachineToMachine' });
      await api(identity, adminToken, 'POST', `/api/applications/${machine.id}/roles`, { roleIds: [machineRole.id] });
      const appAuth = basic(app.id, app.secret);
      // The support engineer's own access token, from signing in to the console (an exchanged
      // token cannot act): a JWT for the bench resource.
      const signedIn = await authorizationCode(new TestBrowser(identity.url), {
        clientId: app.id,
        redirectUri: 'http://localhost/callback',
        username: 'actor',
        password: actorPassword,
        params: { resource: benchResource, scope: 'openid read:data' },
      });
      const actorToken = await tokenRequest(identity, appAuth, {
        grant_type: 'authorization_code',
        code: signedIn.code,
        code_verifier: signedIn.verifier,
        redirect_uri: 'http://localhost/callback',
        resource: benchResource,
      });
      say('set up; warming both servers');

      const ccBody = () => new URLSearchParams({ grant_type: 'client_credentials', resource: benchResource, scope: 'read:data' }).toString();
      const baselineAuth = basic(baselineClient.id, baselineClient.secret);
      const machineAuth = basic(machine.id, machine.secret);

      /**
       * Token exchanges in rounds of fresh subject tokens. Between rounds the spent tokens and the
       * audit records are cleared: the embedded engine's writes cost time in proportion to an
       * indexed collection's size (an audit insert takes 2 ms at 500 records, 36 ms at 2,000), which
       * would otherwise slow every round more than the last. The server's CPU time is not affected.
       */
      const exchanges = async (count: number, actorTokenValue?: string, connections = 50, server = identity, round = roundSize) => {
        const loads: Load[] = [];
        for (let done = 0; done < count; done += round) {
          const size = Math.min(round, count - done);
          const tokens = await seedSubjectTokens(database.db, size, target.id, app.id);
          loads.push(await load(server, size, appAuth, (i) => exchangeBody(tokens[i], actorTokenValue), connections));
          await database.db.collection('subject_tokens').deleteMany({});
          await database.db.collection('impersonations').deleteMany({});
        }
        return combine(loads);
      };
      const customizer = {
        on: () =>
          api(identity, adminToken, 'PUT', '/api/configs/jwt-customizer/access-token', { script: customClaimsScript, environmentVariables: { TIER: 'gold' } }),
        off: () => api(identity, adminToken, 'DELETE', '/api/configs/jwt-customizer/access-token'),
      };

      await load(baseline, 500, baselineAuth, ccBody);
      await load(identity, 500, machineAuth, ccBody);
      await exchanges(roundSize);
      await exchanges(roundSize, actorToken);
      await customizer.on();
      await exchanges(roundSize);
      await customizer.off();
      say('both servers warm');

      /**
       * 1. Server CPU per token under load, against stock oidc-provider's client_credentials. The
       * variants take turns, round after round, and each round's ratios are to that round's
       * baseline: this machine's speed drifts by a fifth from minute to minute, which would
       * otherwise land on whichever variant ran at a slow moment. The first round is profiled.
       */
      const measured = {
        stock: [] as Load[],
        ours: [] as Load[],
        plain: [] as Load[],
        acting: [] as Load[],
        customized: [] as Load[],
        stockAt: {} as Record<number, Load[]>,
        plainAt: {} as Record<number, Load[]>,
      };
      for (let round = 0; round < rounds; round += 1) {
        const profiled = <T>(server: ServerChild, name: string, work: () => Promise<T>) => (round === 0 ? server.profiled(name, work) : work());
        measured.stock.push(await profiled(baseline, 'baseline-client-credentials', () => load(baseline, tokensPerRun / rounds, baselineAuth, ccBody)));
        measured.ours.push(await profiled(identity, 'client-credentials', () => load(identity, tokensPerRun / rounds, machineAuth, ccBody)));
        measured.plain.push(await profiled(identity, 'token-exchange', () => exchanges(2 * roundSize)));
        measured.acting.push(await profiled(identity, 'token-exchange-actor', () => exchanges(2 * roundSize, actorToken)));
        await customizer.on();
        await exchanges(50);
        measured.customized.push(await profiled(identity, 'token-exchange-custom-claims', () => exchanges(2 * roundSize)));
        await customizer.off();
        // At the loads impersonation actually sees, too: the baseline and the plain exchange at 4 and 16 connections.
        for (const connections of lowerLoads) {
          (measured.stockAt[connections] ??= []).push(await load(baseline, tokensPerRun / rounds, baselineAuth, ccBody, connections));
          (measured.plainAt[connections] ??= []).push(
            await profiled(identity, `token-exchange-${connections}-connections`, () => exchanges(2 * roundSize, undefined, connections)),
          );
        }
        say(`round ${round + 1} of ${rounds} measured`);
      }
      const perToken = (l: Load) => l.cpuMicros / l.count / 1000;
      const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
      const ratios = (variant: Load[]) => variant.map((l, round) => perToken(l) / perToken(measured.stock[round]));
      const cpuRow = (variant: Load[]) => {
        const each = ratios(variant);
        return `${(perToken(combine(variant)) * 1000).toFixed(0)} ms (${median(each).toFixed(2)}×; rounds ${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)})`;
      };
      rows.push([
        '1. server CPU per 1,000 tokens: stock oidc-provider client_credentials (baseline)',
        `${(perToken(combine(measured.stock)) * 1000).toFixed(0)} ms`,
      ]);
      rows.push(['1. our client_credentials', cpuRow(measured.ours)]);
      rows.push(['1. token exchange, no actor (target ≤ 1.5×)', cpuRow(measured.plain)]);
      rows.push(['1. token exchange with an actor token (target ≤ 1.5×)', cpuRow(measured.acting)]);
      rows.push(['1. token exchange with custom claims (target ≤ 2×)', cpuRow(measured.customized)]);
      for (const connections of lowerLoads) {
        const each = measured.plainAt[connections].map((l, round) => perToken(l) / perToken(measured.stockAt[connections][round]));
        rows.push([
          `1. token exchange, no actor, ${connections} connections (target ≤ 1.5×)`,
          `${(perToken(combine(measured.plainAt[connections])) * 1000).toFixed(0)} ms (${median(each).toFixed(2)}× the baseline at ${connections}, ${(perToken(combine(measured.stockAt[connections])) * 1000).toFixed(0)} ms; rounds ${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)})`,
        ]);
      }
      const [stock, ours, plain, acting, customized] = [measured.stock, measured.ours, measured.plain, measured.acting, measured.customized].map(combine);

      // 3. Custom-claims overhead, one request at a time so that queueing does not hide it, timed
      // here to the microsecond; blocks with and without the script take turns.
      const sequential = async (count: number) => {
        const tokens = await seedSubjectTokens(database.db, count, target.id, app.id);
        const times: number[] = [];
        for (const token of tokens) {
          const started = performance.now();
          const response = await fetch(`${identity.url}/oidc/token`, {
            method: 'POST',
            headers: { authorization: appAuth, 'content-type': 'application/x-www-form-urlencoded' },
            body: exchangeBody(token),
          });
          await response.arrayBuffer();
          times.push(performance.now() - started);
          if (response.status !== 200) throw new Error(`a sequential exchange answered ${response.status}`);
        }
        await database.db.collection('subject_tokens').deleteMany({});
        await database.db.collection('impersonations').deleteMany({});
        return times;
      };
      const withScript: number[] = [];
      const withoutScript: number[] = [];
      for (let block = 0; block < 6; block += 1) {
        await customizer.on();
        await sequential(5);
        withScript.push(...(await sequential(50)));
        await customizer.off();
        withoutScript.push(...(await sequential(50)));
      }
      const percentileOf = (values: number[], p: number) =>
        [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;
      for (const [p, label] of [
        [50, 'p50 (target ≤ 2 ms)'],
        [99, 'p99'],
      ] as const) {
        const [a, b] = [percentileOf(withScript, p), percentileOf(withoutScript, p)];
        rows.push([
          `3. custom claims: added latency per token, ${label}`,
          `${(a - b).toFixed(2)} ms (${a.toFixed(2)} vs ${b.toFixed(2)} ms, 300 exchanges each)`,
        ]);
      }
      say('custom-claims latency measured');

      // 2. Round trips, counted by a server of their own: command monitoring costs CPU that figure 1 must not include.
      const counter = await startServerChild('identity', { ...env, BENCH_COUNT_COMMANDS: '1' });
      await exchanges(50, actorToken, 50, counter);
      // One at a time, nothing to share a command with: what a lone exchange costs.
      const countedAlone = await exchanges(100, undefined, 1, counter);
      const countedPlain = await exchanges(roundSize, undefined, 50, counter);
      const countedActing = await exchanges(roundSize, actorToken, 50, counter);
      // Through the counting server, whose own change reaches its cache at once.
      await api(counter, adminToken, 'PUT', '/api/configs/jwt-customizer/access-token', { script: customClaimsScript, environmentVariables: { TIER: 'gold' } });
      await exchanges(50, undefined, 50, counter);
      const countedCustom = await exchanges(roundSize, undefined, 50, counter);
      await api(counter, adminToken, 'DELETE', '/api/configs/jwt-customizer/access-token');
      await counter.stop();
      const trips = (l: Load) => (l.commands / l.count).toFixed(2);
      say('round trips counted');
      rows.push(['2. database round trips per token exchange, one at a time (target ≤ 3)', trips(countedAlone)]);
      rows.push([
        '2. database round trips per token exchange under load (50 connections; concurrent exchanges share commands)',
        `${trips(countedPlain)} (with an actor ${trips(countedActing)}, with custom claims ${trips(countedCustom)})`,
      ]);

      // 5. Memory: RSS and live heap before and after many exchanges.
      // Read at the start, halfway and at the end: a leak grows with the count, noise does not.
      const memory = [await identity.stats()];
      for (const half of [Math.floor(leakExchanges / 2), leakExchanges - Math.floor(leakExchanges / 2)]) {
        await exchanges(half, undefined, 50, identity, leakRoundSize);
        memory.push(await identity.stats());
      }
      const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
      const series = (read: (stats: ChildStats) => number) => memory.map((stats) => mib(read(stats))).join(' / ');
      rows.push([`5. server RSS before / halfway / after ${leakExchanges.toLocaleString('en')} token exchanges`, series(({ rss }) => rss)]);
      rows.push(['5. live heap before / halfway / after (after a full collection)', series(({ heapUsed }) => heapUsed)]);
      say('memory measured');

      // 6. Throughput, the secondary figure, labelled with the database.
      for (const [name, l] of [
        ['stock client_credentials', stock],
        ['our client_credentials', ours],
        ['token exchange', plain],
        ['token exchange with an actor', acting],
        ['token exchange with custom claims', customized],
      ] as const) {
        rows.push([`6. ${name} (${engine}, 50 connections)`, `${l.rps.toFixed(0)} req/s, p50 ${l.p50.toFixed(0)} ms, p99 ${l.p99.toFixed(0)} ms`]);
      }
      await Promise.all([baseline.stop(), identity.stop()]);
    }

    // 4. Webhooks: what a Management API write pays for recording its event, then delivery.
    if (parts.has('webhooks')) {
      const receiver = await startReceiver();
      const hookEnv = { HOOKS_ALLOWED_HOSTS: '127.0.0.1', HOOKS_POLL_MS: '100' };
      const writeCount = 600;
      type WriteCost = { cpu: number; busy: number; count: number };
      /** `count` role creations, one at a time, each announcing Role.Created; the server's CPU and busy time in all. */
      const writes = (server: ServerChild, bearer: string, label: string, count = writeCount, settled: () => Promise<void> = async () => {}) =>
        server.profiled(`writes-${label.replaceAll(' ', '-')}`, async (): Promise<WriteCost> => {
          const before = await server.stats();
          for (let i = 0; i < count; i += 1) await api(server, bearer, 'POST', '/api/roles', { name: `${label} ${Math.random()}` });
          await settled();
          const after = await server.stats();
          return { cpu: (after.cpuMicros - before.cpuMicros) / 1000, busy: after.busyMs - before.busyMs, count };
        });
      const perWrite = (costs: WriteCost[]) => {
        const count = costs.reduce((sum, { count: n }) => sum + n, 0);
        return { cpu: costs.reduce((sum, { cpu }) => sum + cpu, 0) / count, busy: costs.reduce((sum, { busy }) => sum + busy, 0) / count };
      };
      const adminOf = (server: ServerChild) =>
        tokenRequest(server, basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET), {
          grant_type: 'client_credentials',
          resource: `${baseUrl}/api`,
          scope: 'all',
        });
      const hook = { name: 'bench', events: ['Role.Created'], config: { url: receiver.url } };

      // Recording: a process that only records (delivery is another process's work), without and with a hook.
      const writer = await startServerChild('identity', { ...env, ...hookEnv, BENCH_DB: `${dbName}_writes` });
      const writerToken = await adminOf(writer);
      await writes(writer, writerToken, 'warm-up', 200);
      const { id: hookId } = await api(writer, writerToken, 'POST', '/api/hooks', { ...hook, enabled: false });
      // Blocks with and without the hook take turns: the engine slows as its collections grow,
      // which would otherwise weigh on whichever ran second.
      const blocks = { off: [] as WriteCost[], on: [] as WriteCost[] };
      for (let block = 0; block < 6; block += 1) {
        // Which goes first alternates too, so that neither is always the later one.
        for (const enabled of block % 2 === 0 ? [false, true] : [true, false]) {
          await api(writer, writerToken, 'PATCH', `/api/hooks/${hookId}`, { enabled });
          (enabled ? blocks.on : blocks.off).push(await writes(writer, writerToken, `${enabled ? 'hooked' : 'no hook'} ${block}`, writeCount / 6));
        }
      }
      const [off, on] = [perWrite(blocks.off), perWrite(blocks.on)];
      await writer.stop();

      // Everything: a process that also makes the deliveries, signs and sends them, and settles them.
      const delivering = await startServerChild('identity', { ...env, ...hookEnv, HOOKS_DELIVERY: 'true', BENCH_DB: `${dbName}_delivered` });
      const deliveringToken = await adminOf(delivering);
      await api(delivering, deliveringToken, 'POST', '/api/hooks', hook);
      let expected = 0;
      const allReceived = async (count: number) => {
        expected += count;
        const deadline = Date.now() + 120_000;
        while (receiver.seen.size < expected) {
          if (Date.now() > deadline) throw new Error(`the receiver got ${receiver.seen.size} of ${expected} events within 120 s`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await writes(delivering, deliveringToken, 'delivered warm-up', 200, () => allReceived(200));
      const delivered = perWrite([await writes(delivering, deliveringToken, 'delivered', writeCount, () => allReceived(writeCount))]);
      await delivering.stop();
      await receiver.close();

      const change = (a: number, b: number) => `${((b / a - 1) * 100).toFixed(0)}%`;
      // Both: process CPU counts every thread, including background work per second that a slower
      // phase accumulates more of; the main thread's busy time is what a write itself costs.
      rows.push([
        '4. recording: main-thread busy time per Management API write, no hook subscribed / one hook (target ≤ +15%)',
        `${off.busy.toFixed(2)} ms / ${on.busy.toFixed(2)} ms (${change(off.busy, on.busy)})`,
      ]);
      rows.push([
        '4. recording: process CPU per Management API write, no hook / one hook',
        `${off.cpu.toFixed(2)} ms / ${on.cpu.toFixed(2)} ms (${change(off.cpu, on.cpu)})`,
      ]);
      rows.push([
        '4. recording and delivering in one process: process CPU per write with its event delivered to one hook',
        `${delivered.cpu.toFixed(2)} ms (${change(off.cpu, delivered.cpu)} over no hook)`,
      ]);
      for (const [name, value] of await webhookFigures(uri)) rows.push([`4. ${name}`, value]);
      say('webhooks measured');
    }
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
