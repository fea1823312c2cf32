/**
 * What role filtering costs user grants, and what the hash limits do under a sign-up flood
 * (`npm run bench:grants`; see BENCHMARKS.md). Two servers, each a child process pinned to core 0:
 * `before`, a build of the commit before the filtering (BENCH_BEFORE, a folder holding that
 * build's dist/), and `after`, this build. Figures:
 *   A. server CPU per token of authorization_code and refresh_token, at 1, 4, 16 and 50 concurrent
 *      requests, the two servers taking turns round by round;
 *   B. a legitimate sign-in's latency (the password check) alone, and while 12 connections flood
 *      sign-ups from another address.
 *
 *   BENCH_BEFORE=/tmp/before npm run bench:grants
 *   knobs: BENCH_GRANT_TOKENS=400 BENCH_GRANT_ROUNDS=3 BENCH_GRANT_CONCURRENCY=1,4,16,50 (the defaults),
 *          BENCH_GRANTS=refresh_token (figure A for one grant), BENCH_GRANT_PARTS=tokens or flood (one figure)
 */
import { join } from 'node:path';

import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { TestBrowser } from '../spec/support/browser.js';
import { pinLoadGenerator, startServerChild, type ServerChild } from './support/processes.js';
import { authorizationCode } from './support/sign-in.js';

const tokensPerRound = Number(process.env.BENCH_GRANT_TOKENS ?? 400);
const rounds = Number(process.env.BENCH_GRANT_ROUNDS ?? 3);
const signInsPerPhase = 20;
/** Which figures: `tokens` (A) and `flood` (B); both by default. */
const parts = (process.env.BENCH_GRANT_PARTS ?? 'tokens,flood').split(',');
/** Which grants figure A measures (both by default). */
const grants = (process.env.BENCH_GRANTS ?? 'authorization_code,refresh_token').split(',');
const concurrencies = (process.env.BENCH_GRANT_CONCURRENCY ?? '1,4,16,50').split(',').map(Number);
const admin = { BOOTSTRAP_CLIENT_ID: 'bench-admin', BOOTSTRAP_CLIENT_SECRET: 'bench-admin-secret-0123456789' };
const redirectUri = 'http://127.0.0.1:9/callback';
const resource = 'https://orders.bench.test';
const password = 'correct horse battery staple';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

interface Variant {
  name: 'before' | 'after';
  server: ServerChild;
  client: { id: string; secret: string };
  /** A browser signed in to the provider: its /auth requests get codes without a page. */
  browser: TestBrowser;
  refreshToken: string;
}

async function api(server: ServerChild, token: string, path: string, body: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<Record<string, string>>;
}

async function token(server: ServerChild, body: Record<string, string>, authorization: string) {
  const response = await fetch(`${server.url}/oidc/token`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
  });
  const answer = (await response.json()) as Record<string, string>;
  if (!response.ok) throw new Error(`token: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** One authorization request in a signed-in browser: a code and its verifier. */
const authorize = (browser: TestBrowser, clientId: string, extra: Record<string, string> = {}) =>
  authorizationCode(browser, {
    clientId,
    redirectUri,
    username: 'bench_user',
    password,
    params: { scope: 'openid read:orders write:orders', resource, ...extra },
  });

async function prepare(name: Variant['name'], server: ServerChild): Promise<Variant> {
  const cc = await token(
    server,
    { grant_type: 'client_credentials', resource: `${server.url}/api`, scope: 'all' },
    basic(admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET),
  );
  const bearer = cc.access_token;
  const app = await api(server, bearer, '/api/applications', {
    name: 'Web',
    type: 'Traditional',
    oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
  });
  const orders = await api(server, bearer, '/api/resources', { name: 'Orders', indicator: resource });
  const read = await api(server, bearer, `/api/resources/${orders.id}/scopes`, { name: 'read:orders' });
  await api(server, bearer, `/api/resources/${orders.id}/scopes`, { name: 'write:orders' });
  const role = await api(server, bearer, '/api/roles', { name: 'reader', scopeIds: [read.id] } as never);
  const user = await api(server, bearer, '/api/users', { username: 'bench_user', password });
  await api(server, bearer, `/api/users/${user.id}/roles`, { roleIds: [role.id] } as never);
  const browser = new TestBrowser(server.url, '198.51.100.1');
  await authorize(browser, app.id);
  const consented = await authorize(browser, app.id, { scope: 'openid offline_access read:orders write:orders', prompt: 'consent' });
  const client = { id: app.id, secret: app.secret };
  const tokens = await token(
    server,
    { grant_type: 'authorization_code', code: consented.code, code_verifier: consented.verifier, redirect_uri: redirectUri, resource },
    basic(client.id, client.secret),
  );
  if (!tokens.refresh_token) throw new Error('no refresh token');
  return { name, server, client, browser, refreshToken: tokens.refresh_token };
}

/** Runs `count` requests, `concurrency` at a time; answers the server's CPU microseconds per request. */
async function cpuPer(server: ServerChild, count: number, concurrency: number, request: (index: number) => Promise<unknown>) {
  const before = await server.stats();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await request(next++);
    }),
  );
  const after = await server.stats();
  return (after.cpuMicros - before.cpuMicros) / count;
}

async function grantFigures(variants: Variant[]) {
  const results: Record<string, number[]> = {};
  const push = (key: string, value: number) => {
    (results[key] ??= []).push(value);
  };
  for (let round = 0; round < rounds; round += 1) {
    for (const concurrency of concurrencies) {
      // Alternate which variant goes first.
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        const auth = basic(variant.client.id, variant.client.secret);
        if (grants.includes('authorization_code')) {
          const codes: Array<{ code: string; verifier: string }> = [];
          for (let i = 0; i < tokensPerRound; i += 1) codes.push(await authorize(variant.browser, variant.client.id));
          push(
            `authorization_code ${concurrency} ${variant.name}`,
            await cpuPer(variant.server, tokensPerRound, concurrency, (i) =>
              token(
                variant.server,
                { grant_type: 'authorization_code', code: codes[i].code, code_verifier: codes[i].verifier, redirect_uri: redirectUri, resource },
                auth,
              ),
            ),
          );
        }
        if (grants.includes('refresh_token')) {
          push(
            `refresh_token ${concurrency} ${variant.name}`,
            await cpuPer(variant.server, tokensPerRound, concurrency, () =>
              token(variant.server, { grant_type: 'refresh_token', refresh_token: variant.refreshToken, resource }, auth),
            ),
          );
        }
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log('\nA. Server CPU per token (µs, median of rounds), before and after role filtering');
  console.log('| grant | concurrency | before | after | after / before |');
  console.log('|---|---|---|---|---|');
  for (const grant of grants) {
    for (const concurrency of concurrencies) {
      const before = median(results[`${grant} ${concurrency} before`]);
      const after = median(results[`${grant} ${concurrency} after`]);
      console.log(`| ${grant} | ${concurrency} | ${before.toFixed(0)} | ${after.toFixed(0)} | ${(after / before).toFixed(2)}× |`);
    }
  }
}

/** B: a sign-in's password check, timed, alone and while 12 connections flood sign-ups from another address. */
async function floodFigures(variant: Variant) {
  const { server, client } = variant;
  let signIns = 0;
  // Each sign-in from an address of its own, as different people sign in.
  const signIn = async () => {
    const browser = new TestBrowser(server.url, `198.51.${100 + Math.floor(signIns / 250)}.${(signIns += 1) % 250}`);
    const started = await authorizePage(browser, client.id);
    if (!started) throw new Error('no sign-in page');
    await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
    const begin = performance.now();
    const answer = await browser.json('POST', '/api/experience/verification/password', { identifier: { type: 'username', value: 'bench_user' }, password });
    const took = performance.now() - begin;
    if (answer.status !== 200 && answer.status !== 429) throw new Error(`sign-in answered ${answer.status}`);
    return answer.status === 200 ? took : undefined;
  };
  const latencies = async (count: number) => {
    const taken: number[] = [];
    let refused = 0;
    for (let i = 0; i < count; i += 1) {
      const took = await signIn();
      if (took === undefined) refused += 1;
      else taken.push(took);
    }
    taken.sort((a, b) => a - b);
    return { p50: taken[Math.floor(taken.length / 2)] ?? NaN, p95: taken[Math.floor(taken.length * 0.95)] ?? NaN, refused };
  };
  const quiet = await latencies(signInsPerPhase);
  let flooding = true;
  const statuses = new Map<number | string, number>();
  const flooders = await Promise.all(
    Array.from({ length: 12 }, async (_, index) => {
      const browser = new TestBrowser(server.url, '203.0.113.66');
      await authorizePage(browser, client.id);
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      // Wrapped, so that the set-up's Promise.all does not wait for the loop itself.
      return {
        done: (async () => {
          let n = 0;
          while (flooding) {
            const answer = await browser
              .json('POST', '/api/experience/verification/new-password-identity', {
                identifier: { type: 'username', value: `flood_${index}_${(n += 1)}` },
                password,
              })
              .catch((error: Error) => ({ status: `${error.message}: ${(error.cause as Error | undefined)?.message}` }));
            statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          }
        })(),
      };
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  const loaded = await latencies(signInsPerPhase);
  flooding = false;
  await Promise.all(flooders.map(({ done }) => done));
  return { quiet, loaded, statuses: Object.fromEntries(statuses) };
}

async function authorizePage(browser: TestBrowser, clientId: string) {
  const url = new URL(`${browser.base}/oidc/auth`);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: redirectUri,
    code_challenge: 'x'.repeat(43),
    code_challenge_method: 'S256',
  }).toString();
  const { url: at } = await browser.follow(url, redirectUri);
  return at.pathname.startsWith('/interaction/');
}

async function main() {
  const beforeDir = process.env.BENCH_BEFORE;
  if (!beforeDir) throw new Error('BENCH_BEFORE must name a folder holding the build (dist/) of the commit before role filtering; see BENCHMARKS.md');
  pinLoadGenerator();
  const mongo = await startEmbeddedMongo();
  const env = (db: string) => ({ ...admin, MONGODB_URI: mongo.uri, BENCH_DB: db, TRUST_PROXY: 'true', HOOKS_DELIVERY: 'false' });
  const servers = [
    await startServerChild('identity', env('grants_before'), join(beforeDir, 'dist/bench/support/server-child.js')),
    await startServerChild('identity', env('grants_after')),
  ];
  try {
    const variants = [await prepare('before', servers[0]), await prepare('after', servers[1])];
    console.log(`node ${process.version}, ${tokensPerRound} tokens a round, ${rounds} rounds, concurrency ${concurrencies.join(', ')}`);
    if (parts.includes('tokens')) await grantFigures(variants);
    if (!parts.includes('flood')) return;
    console.log("\nB. A legitimate sign-in's password check (ms) while 12 connections flood sign-ups from another address");
    console.log('| server | alone p50 | alone p95 | flooded p50 | flooded p95 | sign-ins refused while flooded | flood answers |');
    console.log('|---|---|---|---|---|---|---|');
    for (const variant of variants) {
      const { quiet, loaded, statuses } = await floodFigures(variant);
      console.log(
        `| ${variant.name} | ${quiet.p50.toFixed(0)} | ${quiet.p95.toFixed(0)} | ${loaded.p50.toFixed(0)} | ${loaded.p95.toFixed(0)} | ${loaded.refused}/${signInsPerPhase} | ${JSON.stringify(statuses)} |`,
      );
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await mongo.stop();
  }
}

await main();
