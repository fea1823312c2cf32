import { readdir, readFile } from 'node:fs/promises';

import { startEmbeddedMongo, type EmbeddedMongo } from '../../lib/store/embedded-mongo.js';
import { uniqueDbName, withDatabase } from '../support/env.js';
import { startAuthorization, TestBrowser } from '../support/browser.js';
import { hookTestEnv } from '../support/hooks.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const baseUrl = 'http://id.test.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'process-test-secret-0123456789' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms:\n${output().slice(-3000)}`);
    await sleep(200);
  }
}

/**
 * Waits until every thread of `pid` is stopped (state `T` in /proc). A signal stops a
 * multi-threaded process one thread at a time as each is next scheduled: on a busy machine a
 * command sent just after `kill` may still be answered, and a probe made then sees no outage.
 */
async function stoppedCompletely(pid: number) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const threads = await readdir(`/proc/${pid}/task`);
    const states = await Promise.all(threads.map(async (thread) => (await readFile(`/proc/${pid}/task/${thread}/stat`, 'utf8')).replace(/^.*\) /s, '')[0]));
    if (states.every((state) => state === 'T' || state === 't')) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} did not stop: thread states ${states.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What the server answers while its database is stopped: each request, its status, error code and Retry-After. */
async function probeAll(server: ServerProcess, token: string) {
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.local}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
  };
  const tokenRequest = async () => {
    const response = await fetch(`${server.local}/oidc/token`, {
      method: 'POST',
      headers: {
        // A client this process has not cached (a known one's client_credentials token may be issued
        // from its caches alone, which is right: nothing needs the database then).
        authorization: `Basic ${Buffer.from(`not-cached-${Math.random().toString(36).slice(2)}:some-secret`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: `${baseUrl}/api`, scope: 'all' }),
    });
    const body = (await response.json()) as { error?: string };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), code: body.error };
  };
  const status = async () => {
    // Readiness: the database must answer (liveness, /api/status, does not ask it).
    const response = await fetch(`${server.local}/api/status/ready`);
    const text = await response.text();
    return { status: response.status, retryAfter: response.headers.get('retry-after'), code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
  };
  const [list, create, health, issued] = await Promise.all([
    api('GET', '/api/users'),
    api('POST', '/api/roles', { name: `during the outage ${Date.now()}` }),
    status(),
    tokenRequest(),
  ]);
  return { list, create, health, issued };
}

describe('a database that stops answering (SIGSTOP of the engine for 10 s)', () => {
  let engine: EmbeddedMongo;
  let server: ServerProcess | undefined;
  let other: ServerProcess | undefined;
  let receiver: Receiver;

  beforeEach(async () => {
    engine = await startEmbeddedMongo();
    receiver = await startReceiver();
  });
  afterEach(async () => {
    process.kill(engine.pid, 'SIGCONT');
    await Promise.all([server?.stop('SIGKILL'), other?.stop('SIGKILL')]);
    await receiver.close();
    await engine.stop();
  });

  it('answers 503 with Retry-After while it is stopped (Management API: database.unavailable; token endpoint: temporarily_unavailable, RFC 6749 §4.1.2.1; the sign-in page: one that says to retry), and serves again when it returns, without a restart', async () => {
    const dbName = uniqueDbName('outage');
    const env = {
      MONGODB_URI: withDatabase(engine.uri, dbName),
      MONGODB_SERVER_SELECTION_TIMEOUT_MS: '1500',
      MONGODB_SOCKET_TIMEOUT_MS: '1500',
      BASE_URL: baseUrl,
      ...admin,
      ...hookTestEnv,
    };
    // Two processes on the one database, as deployed behind a balancer.
    server = await spawnServer(dbName, env);
    other = await spawnServer(dbName, { ...env, HOOKS_DELIVERY: 'false' });
    const { body } = await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
    const token = body.access_token!;
    const hook = await callApi(server, token, 'POST', '/api/hooks', { name: 'after the outage', events: ['Role.Created'], config: { url: receiver.url } });
    expect(hook.status).toBe(201);
    receiver.keys.push(hook.body.signingKey);
    expect((await fetch(`${server.local}/api/status`)).status).toBe(204);
    expect(await (await fetch(`${server.local}/api/status/ready`)).json()).toEqual({ database: 'ok', worker: 'ok' });
    // A person on the sign-in page when the database stops.
    const application = await callApi(server, token, 'POST', '/api/applications', {
      name: 'Web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['http://127.0.0.1/callback'], postLogoutRedirectUris: [] },
    });
    const browser = new TestBrowser(server.local);
    const { page } = await startAuthorization(browser, application.body.id, 'http://127.0.0.1/callback');

    process.kill(engine.pid, 'SIGSTOP');
    await stoppedCompletely(engine.pid);
    const stoppedAt = Date.now();
    const unavailable = { status: 503, retryAfter: '5', code: 'database.unavailable' };
    const expected = { list: unavailable, create: unavailable, health: unavailable, issued: { status: 503, retryAfter: '5', code: 'temporarily_unavailable' } };
    // At once (operations on open connections time out), and again once the driver has given the
    // server up (new operations find no server).
    expect(await probeAll(server, token)).toEqual(expected);
    expect(await probeAll(other, token)).toEqual(expected);
    // Liveness does not ask the database: the process is alive, and is not restarted for its database's outage.
    expect((await fetch(`${server.local}/api/status`)).status).toBe(204);
    // The sign-in page says to try again (not that the sign-in expired), with Retry-After.
    const stalledPage = await browser.go(page);
    expect({ status: stalledPage.status, retryAfter: stalledPage.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
    expect(await stalledPage.text()).toContain('Temporarily unavailable');
    await sleep(4_000);
    expect(await probeAll(server, token)).toEqual(expected);
    expect(await probeAll(other, token)).toEqual(expected);
    // Ten seconds stopped in all.
    await sleep(Math.max(0, 10_000 - (Date.now() - stoppedAt)));
    process.kill(engine.pid, 'SIGCONT');

    await until(async () => (await fetch(`${server!.local}/api/status/ready`)).status === 200, 30_000, 'the readiness check recovering', server.output);
    expect((await callApi(server, token, 'GET', '/api/users')).status).toBe(200);
    expect((await browser.go(page)).status).toBe(200);
    await until(async () => (await fetch(`${other!.local}/api/status/ready`)).status === 200, 30_000, 'the other process recovering', other.output);
    // The other process delivers nothing: ready without a worker.
    expect(await (await fetch(`${other!.local}/api/status/ready`)).json()).toEqual({ database: 'ok', worker: 'off' });
    expect((await callApi(other, token, 'GET', '/api/users')).status).toBe(200);
    expect((await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`)).status).toBe(200);
    const created = await callApi(server, token, 'POST', '/api/roles', { name: 'after the outage' });
    expect(created.status).toBe(200);
    // The delivery worker carried on too.
    await receiver.waitFor((got) => got.some(({ body: event }) => event.data?.id === created.body.id), 30_000);
    expect(server.output()).not.toMatch(/unhandled|uncaught/i);
    // The access log names the route an outage's answer was for, as for any other (not a router's regular expression).
    const refused = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; status?: number; path?: string; route?: string })
      .filter(({ msg, status }) => msg === 'request' && status === 503);
    expect(refused.find(({ path }) => path === '/api/users')).toMatchObject({ route: '/api/users' });
    expect(refused.find(({ path }) => path === '/api/roles')).toMatchObject({ route: '/api/roles' });
  });
});
