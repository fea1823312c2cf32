/**
 * What the default costs as data and history grow (`npm run bench:growth`; BENCHMARKS.md, "Growth").
 * One standalone server in this process, on the embedded engine (or on MONGODB_URI when set), one
 * request at a time. Figures, each the median of BENCH_GROWTH_SAMPLES requests, in ms:
 *   - `POST /api/users`, a password sign-in through the Experience API (the authorization request,
 *     the verification, identification, submit and the redirect with its code), a token refresh, and
 *     `GET /api/users?search=`;
 *   A. at 100, 1,000, 5,000 and 20,000 users (BENCH_GROWTH_USERS): live data;
 *   B. at 100 users after 10,000 and 100,000 sign-ins whose sessions, grants, tokens and codes have
 *      ended, and as many changes past their retention (BENCH_GROWTH_HISTORY): dead history, as
 *      10,000 of it costs before the sweeper deletes it, and as all of it costs swept as it ended
 *      (10,000 at a time, as the sweeper meets it).
 * Users and history are written in bulk (insertMany of documents cloned from ones the service wrote),
 * so that the figures come in minutes: the requests measured are real.
 */
import { performance } from 'node:perf_hooks';

import type { Document } from 'mongodb';

import { loadSettings } from '../settings.js';
import { silentLogger } from '../lib/logger.js';
import { generateId } from '../lib/ids.js';
import { sweepOnce, sweepTargets } from '../lib/store/sweeper.js';
import { startStandaloneServer, type StandaloneServer } from '../standalone.js';
import { TestBrowser } from '../spec/support/browser.js';
import { refreshTokenOf } from './support/sign-in.js';
import { basic, managementClient } from './support/management-client.js';

const userSizes = (process.env.BENCH_GROWTH_USERS ?? '100,1000,5000,20000').split(',').map(Number);
const historySizes = (process.env.BENCH_GROWTH_HISTORY ?? '10000,100000').split(',').map(Number);
const samples = Number(process.env.BENCH_GROWTH_SAMPLES ?? 20);
/** History arrives and is swept this many sign-ins at a time. */
const historyStep = 10_000;
const admin = { BOOTSTRAP_CLIENT_ID: 'growth-admin', BOOTSTRAP_CLIENT_SECRET: 'growth-admin-secret-0123456789' };
const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
/** The provider's artifacts one sign-in leaves behind, each as a document in its collection (its interaction is deleted when it ends). */
const signInArtifacts = ['oidc_Session', 'oidc_Grant', 'oidc_AccessToken', 'oidc_AuthorizationCode', 'oidc_RefreshToken'];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed(count: number, request: (index: number) => Promise<unknown>): Promise<number> {
  const taken: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await request(index);
    taken.push(performance.now() - started);
  }
  return median(taken);
}

/**
 * A server with an application, a user signed in with a refresh token, and what measuring needs.
 * Behind one trusted proxy, so that each sign-in comes from an address of its own (as different
 * people sign in) and no per-address limit is what is measured.
 */
async function prepare(label: string) {
  const server = await startStandaloneServer(
    {
      // The background sweep stays off (a day apart): the figures compare history swept by hand with history left.
      // A bulk insert into a collection of a few hundred thousand documents takes the engine longer than the default socket timeout.
      ...loadSettings({ PORT: '0', DATA_DIR: '', TRUST_PROXY: '1', SWEEP_INTERVAL_MS: '86400000', MONGODB_SOCKET_TIMEOUT_MS: '600000', ...admin }),
      mongodbUri: process.env.MONGODB_URI,
    },
    { logger: silentLogger, dbName: `growth_${label}_${Date.now()}` },
  );
  const { tokenRequest, api } = await managementClient(server.url, { id: admin.BOOTSTRAP_CLIENT_ID, secret: admin.BOOTSTRAP_CLIENT_SECRET });
  const app = await api('POST', '/applications', {
    name: 'Web',
    type: 'Traditional',
    oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
  });
  const client = basic(app.id!, app.secret!);
  await api('POST', '/users', { username: 'bench_user', password });
  let refreshToken = await refreshTokenOf(new TestBrowser(server.url, '198.51.100.1'), tokenRequest, {
    clientId: app.id!,
    clientSecret: app.secret!,
    redirectUri,
    username: 'bench_user',
    password,
  });
  let created = 0;
  let signIns = 0;

  const operations = {
    createUser: () => api('POST', '/users', { username: `person_${(created += 1)}_${generateId().slice(0, 6)}`, password }),
    /** A sign-in through the Experience API, from an address of its own (as different people sign in). */
    async signIn() {
      signIns += 1;
      const person = new TestBrowser(server.url, `198.51.${100 + Math.floor(signIns / 250)}.${signIns % 250}`);
      const url = new URL(`${server.url}/oidc/auth`);
      url.search = new URLSearchParams({ client_id: app.id!, response_type: 'code', scope: 'openid', redirect_uri: redirectUri }).toString();
      await person.follow(url, redirectUri);
      await person.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
      const verified = await person.json('POST', '/api/experience/verification/password', { identifier: { type: 'username', value: 'bench_user' }, password });
      await person.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId });
      const submitted = await person.json('POST', '/api/experience/submit');
      const { url: back } = await person.follow(submitted.body.redirectTo, redirectUri);
      if (!back.searchParams.get('code')) throw new Error(`sign-in ended without a code: ${back.href}`);
    },
    async refresh() {
      const answer = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, client);
      refreshToken = answer.refresh_token ?? refreshToken;
    },
    search: () => api('GET', '/users?search=%25person_1%25&page_size=20'),
  };
  return { server, operations };
}

async function measure(operations: Awaited<ReturnType<typeof prepare>>['operations']) {
  return {
    createUser: await timed(samples, operations.createUser),
    signIn: await timed(samples, operations.signIn),
    refresh: await timed(samples, operations.refresh),
    search: await timed(samples, operations.search),
  };
}

/** Each collection's model document, by collection. */
const models = new Map<string, Document>();

/** Inserts copies of `model` into `collection` until it holds `count` (fields `vary` gives each copy). */
async function fill(server: StandaloneServer, collection: string, count: number, vary: (index: number) => Document) {
  const documents = server.database.db.collection(collection);
  // The first document seen is the model from then on: a sweep may delete the service's own later.
  const model = models.get(collection) ?? (await documents.findOne({}));
  if (!model) throw new Error(`nothing in ${collection} to copy`);
  models.set(collection, model);
  for (let have = await documents.countDocuments(); have < count;) {
    // A fresh id, and a fresh \`uid\` where the model has one (the provider's unique lookup key).
    const batch = Array.from({ length: Math.min(1000, count - have) }, (_, index) => ({
      ...model,
      ...vary(have + index),
      _id: generateId(),
      ...(model.uid !== undefined && { uid: generateId() }),
    }));
    await documents.insertMany(batch as never[]);
    have += batch.length;
  }
}

const row = (label: string, figures: Record<string, number>) =>
  `| ${label} | ${figures.createUser!.toFixed(0)} | ${figures.signIn!.toFixed(0)} | ${figures.refresh!.toFixed(0)} | ${figures.search!.toFixed(0)} |`;
const head = '| | POST /api/users | sign-in | refresh | search |\n|---|---|---|---|---|';

async function liveData() {
  const { server, operations } = await prepare('users');
  console.log(`\nA. Live data: median ms of ${samples} requests, one at a time`);
  console.log(head);
  try {
    for (const size of userSizes) {
      await fill(server, 'users', size, (index) => ({ username: `seeded_${index}`, primaryEmail: null, emailKey: undefined, createdAt: Date.now() }));
      console.log(row(`${size} users`, await measure(operations)));
    }
  } finally {
    await server.close();
  }
}

async function deadHistory() {
  console.log(`\nB. Dead history at 100 users: median ms of ${samples} requests, before the sweep and after one`);
  console.log(head);
  for (const size of historySizes) {
    const { server, operations } = await prepare(`history${size}`);
    try {
      await fill(server, 'users', 100, (index) => ({ username: `seeded_${index}`, primaryEmail: null, emailKey: undefined, createdAt: Date.now() }));
      const baseline = await measure(operations);
      console.log(row('no history', baseline));
      const ended = new Date(Date.now() - 60_000);
      const sweep = async () => {
        const started = performance.now();
        const deleted = await sweepOnce(server.database.db, sweepTargets(server.identity.collections), new Date(), {
          batchSize: 500,
          maxBatches: Number.MAX_SAFE_INTEGER,
        });
        return { total: Object.values(deleted).reduce((sum, count) => sum + count, 0), seconds: (performance.now() - started) / 1000 };
      };
      // Up to a step, the history is left in place and measured, then swept; past it, it arrives a step at a
      // time and each step is swept, as the sweeper (every minute) meets it (writing it all first would take
      // the engine hours: each insert copies its collection).
      const step = Math.min(size, historyStep);
      let swept = { total: 0, seconds: 0 };
      for (let done = 0; done < size; done += step) {
        for (const collection of [...signInArtifacts, 'changes']) await fill(server, collection, step, () => ({ expiresAt: ended }));
        if (done === 0) console.log(row(`${step} ended sign-ins and changes, not swept`, await measure(operations)));
        const once = await sweep();
        swept = { total: swept.total + once.total, seconds: swept.seconds + once.seconds };
      }
      console.log(row(`${size} swept as they ended (${swept.total} documents in ${swept.seconds.toFixed(1)} s of sweeps)`, await measure(operations)));
    } finally {
      await server.close();
    }
  }
}

console.log(`engine: ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'embedded'}; node ${process.version}; ${new Date().toISOString()}`);
if (userSizes.length > 0 && userSizes[0]! > 0) await liveData();
if (historySizes.length > 0 && historySizes[0]! > 0) await deadHistory();
process.exit(0);
