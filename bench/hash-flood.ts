/**
 * What a flood of made-up step-ups costs everyone else (BENCHMARKS.md, "A password change flooded
 * with made-up step-ups"): the latency of a legitimate sign-in through the pages (one password
 * check) alone, then while 12 connections keep posting `POST /api/my-account/password` with a
 * made-up `logto-verification-id` and a new password that passes the policy.
 *
 *   npm run bench:hash-flood        BENCH_SIGN_INS=40 (sign-ins per phase), BENCH_FLOOD=12 (connections)
 *
 * The server runs as a child process pinned to core 0 (the load to core 1), on the embedded engine
 * or MONGODB_URI. Each person signing in comes from an address of their own, the flood from another
 * (TRUST_PROXY), as on the Internet.
 */
import os from 'node:os';

import { TestBrowser } from '../spec/support/browser.js';
import { openDatabase } from '../lib/store/database.js';
import { startEmbeddedMongo } from '../lib/store/embedded-mongo.js';
import { pinLoadGenerator, pinning, startServerChild } from './support/processes.js';
import { authorizationCode } from './support/sign-in.js';

const signIns = Number(process.env.BENCH_SIGN_INS ?? 40);
const floodConnections = Number(process.env.BENCH_FLOOD ?? 12);
const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const admin = { BOOTSTRAP_CLIENT_ID: 'bench-admin', BOOTSTRAP_CLIENT_SECRET: 'bench-admin-secret-0123456789' };

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const describe = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `median ${quantile(sorted, 0.5).toFixed(0)} ms, p95 ${quantile(sorted, 0.95).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`;
};

async function main() {
  pinLoadGenerator();
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const uri = process.env.MONGODB_URI ?? embedded!.uri;
  const dbName = `bench_flood_${Date.now()}`;
  const server = await startServerChild('identity', { MONGODB_URI: uri, BENCH_DB: dbName, TRUST_PROXY: 'true', HOOKS_DELIVERY: 'false', ...admin });
  const base = server.url;
  try {
    const tokenOf = async (body: Record<string, string>, basic?: string) =>
      (
        (await (
          await fetch(`${base}/oidc/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', ...(basic && { authorization: `Basic ${basic}` }) },
            body: new URLSearchParams(body),
          })
        ).json()) as { access_token: string }
      ).access_token;
    const adminToken = await tokenOf(
      { grant_type: 'client_credentials', resource: `${new URL(base).origin}/api`, scope: 'all' },
      Buffer.from(`${admin.BOOTSTRAP_CLIENT_ID}:${admin.BOOTSTRAP_CLIENT_SECRET}`).toString('base64'),
    );
    const api = async (method: string, path: string, body: unknown) =>
      (await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((response) => response.json())) as { id: string; secret: string };
    const app = await api('POST', '/api/applications', {
      name: 'Account app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    await api('POST', '/api/users', { username: 'flooder', password });
    for (let index = 0; index < signIns * 2; index += 1) await api('POST', '/api/users', { username: `person_${index}`, password });

    // The flooder is any signed-in user: their own Account API token.
    const flooderBrowser = new TestBrowser(base, '203.0.113.66');
    const flooded = await authorizationCode(flooderBrowser, {
      clientId: app.id,
      redirectUri,
      username: 'flooder',
      password,
      params: { scope: 'openid profile' },
    });
    const accountToken = await tokenOf(
      { grant_type: 'authorization_code', code: flooded.code, redirect_uri: redirectUri, code_verifier: flooded.verifier },
      Buffer.from(`${app.id}:${app.secret}`).toString('base64'),
    );

    let person = 0;
    /** Legitimate sign-ins, one after another, each by a person from an address of their own: their latencies. */
    const measureSignIns = async () => {
      const latencies: number[] = [];
      for (let index = 0; index < signIns; index += 1) {
        const browser = new TestBrowser(base, `198.51.${Math.floor(person / 250)}.${(person % 250) + 1}`);
        const username = `person_${person}`;
        person += 1;
        const started = performance.now();
        await authorizationCode(browser, { clientId: app.id, redirectUri, username, password });
        latencies.push(performance.now() - started);
      }
      return latencies;
    };

    const quiet = await measureSignIns();

    let flooding = true;
    const floodAnswers = new Map<number, number>();
    const flood = async () => {
      while (flooding) {
        const response = await fetch(`${base}/api/my-account/password`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${accountToken}`,
            'content-type': 'application/json',
            'logto-verification-id': `made-up-${Math.random().toString(36).slice(2)}`,
            'x-forwarded-for': '203.0.113.66',
          },
          body: JSON.stringify({ password: 'a brand new passphrase that passes' }),
        });
        await response.arrayBuffer();
        floodAnswers.set(response.status, (floodAnswers.get(response.status) ?? 0) + 1);
      }
    };
    const started = performance.now();
    const flooders = Array.from({ length: floodConnections }, flood);
    // Let the flood reach its pace first.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const underFlood = await measureSignIns();
    flooding = false;
    await Promise.all(flooders);
    const floodSeconds = (performance.now() - started) / 1000;
    const floodTotal = [...floodAnswers.values()].reduce((sum, count) => sum + count, 0);

    console.log(
      `\nOn ${embedded ? 'the embedded jongodb engine' : 'MongoDB at MONGODB_URI'}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${pinning ? 'server pinned to core 0, load to core 1' : 'no CPU pinning'}\n`,
    );
    console.log('| phase | legitimate sign-in (pages, one password check) |\n|---|---|');
    console.log(`| alone (${signIns} sign-ins) | ${describe(quiet)} |`);
    console.log(`| while ${floodConnections} connections flood my-account/password (${signIns} sign-ins) | ${describe(underFlood)} |`);
    console.log(
      `\nThe flood: ${floodTotal} requests in ${floodSeconds.toFixed(1)} s (${(floodTotal / floodSeconds).toFixed(0)}/s), answered ${[...floodAnswers]
        .map(([status, count]) => `${status} × ${count}`)
        .join(', ')}`,
    );
  } finally {
    await server.stop();
    if (embedded) await embedded.stop();
    else {
      const database = await openDatabase(uri, { dbName });
      await database.db.dropDatabase();
      await database.close();
    }
  }
}

await main();
