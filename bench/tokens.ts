/**
 * Figures 1, 2, 3, 5 and 6 (`npm run bench`, BENCH_PARTS=tokens): the token endpoint's cost
 * against stock oidc-provider, round trips, custom-claims latency, memory and throughput.
 */
import { TestBrowser } from '../spec/support/browser.js';
import type { Database } from '../lib/store/database.js';
import { startServerChild, type ServerChild } from './support/processes.js';
import { authorizationCode } from './support/sign-in.js';
import { baselineClient, benchResource, type ChildStats } from './support/fixtures.js';
import {
  actorPassword,
  admin,
  api,
  basic,
  baseUrl,
  combine,
  customClaimsScript,
  exchangeBody,
  load,
  seedSubjectTokens,
  tokenRequest,
  type Load,
} from './support/token-load.js';

const tokensPerRun = Number(process.env.BENCH_TOKENS ?? 3000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const roundSize = Number(process.env.BENCH_ROUND_SIZE ?? 300);
const leakExchanges = Number(process.env.BENCH_LEAK_EXCHANGES ?? 100000);
const leakRoundSize = Number(process.env.BENCH_LEAK_ROUND_SIZE ?? 1000);
/** Figure 1 at loads below the 50 connections of the main rows (the baseline is measured at each too). */
const lowerLoads = [4, 16];

export interface BenchContext {
  database: Database;
  /** The servers' environment: one deployment over the benchmark's database. */
  env: Record<string, string>;
  /** The database engine, as the rows name it. */
  engine: string;
  say(message: string): void;
}

export async function tokenFigures({ database, env, engine, say }: BenchContext): Promise<Array<[string, string]>> {
  const rows: Array<[string, string]> = [];
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
    rows.push([`3. custom claims: added latency per token, ${label}`, `${(a - b).toFixed(2)} ms (${a.toFixed(2)} vs ${b.toFixed(2)} ms, 300 exchanges each)`]);
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
  return rows;
}
