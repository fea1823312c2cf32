import { readdirSync, readFileSync } from 'node:fs';

import { MongoClient } from 'mongodb';

import { startEmbeddedMongo, type EmbeddedMongo } from '../../lib/store/embedded-mongo.js';
import { uniqueDbName, withDatabase } from '../support/env.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';

const baseUrl = 'http://id.test.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'process-test-secret-0123456789' };
const password = 'correct horse battery staple';

describe('a database replaced under a running server (the engine restarted empty)', () => {
  const engines: EmbeddedMongo[] = [];
  let server: ServerProcess | undefined;

  afterEach(async () => {
    await server?.stop('SIGKILL');
    await Promise.all(engines.splice(0).map((engine) => engine.stop()));
  });

  it('is noticed: the server accepts nothing on the empty database, says DATABASE LOST, and exits 1 for its supervisor to restart it', async () => {
    const first = await startEmbeddedMongo();
    engines.push(first);
    const port = Number(new URL(first.uri.replace(/^mongodb:/, 'http:')).port);
    const dbName = uniqueDbName('lost');
    server = await spawnServer(dbName, { MONGODB_URI: withDatabase(first.uri, dbName), BASE_URL: baseUrl, ...admin, HOOKS_DELIVERY: 'false' });
    const { body } = await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
    const token = body.access_token!;
    expect((await callApi(server, token, 'POST', '/api/users', { username: 'only_once', password })).status).toBe(200);

    // The engine dies and another, empty, takes its place at the same address.
    process.kill(first.pid, 'SIGKILL');
    await first.stop();
    // The port is free once the first engine has exited; a busy machine may take a moment to release it.
    const second = await startOn(port);
    engines.push(second);

    // Noticed on the next look (every 5 s, or at once when the driver meets the new engine).
    const deadline = Date.now() + 20_000;
    while (!server.output().includes('DATABASE LOST') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.output()).toContain('DATABASE LOST');
    // The same username again: refused (503 while the server closes, or no server at all), not accepted on the empty database.
    const again = await callApi(server, token, 'POST', '/api/users', { username: 'only_once', password }).catch((error: Error) => ({
      status: 0,
      body: error.message,
    }));
    expect([0, 503]).toContain(again.status);
    if (again.status === 503) expect(again.body).toMatchObject({ code: 'database.unavailable' });
    expect(await server.stop('SIGCONT')).toBe(1);

    const client = await MongoClient.connect(withDatabase(second.uri, dbName));
    try {
      expect(await client.db(dbName).collection('users').countDocuments({ username: 'only_once' })).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('answers a known client and a valid token with 503 while it happens, never with invalid credentials (the outside attack’s outage finding)', async () => {
    const first = await startEmbeddedMongo();
    engines.push(first);
    const port = Number(new URL(first.uri.replace(/^mongodb:/, 'http:')).port);
    const dbName = uniqueDbName('lost-answers');
    // Polling seldom, as by default: the database's answers, not a timer, must keep the empty one out.
    server = await spawnServer(dbName, {
      MONGODB_URI: withDatabase(first.uri, dbName),
      BASE_URL: baseUrl,
      ...admin,
      HOOKS_DELIVERY: 'false',
      CACHE_REFRESH_MS: '1000',
      MONGODB_SERVER_SELECTION_TIMEOUT_MS: '300',
    });
    const { body } = await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
    const token = body.access_token!;
    const answers = new Map<string, number>();
    const note = (what: string) => answers.set(what, (answers.get(what) ?? 0) + 1);
    let running = true;
    const running$ = server;
    const hammer = async () => {
      while (running) {
        const issued = await clientCredentials(running$, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`).catch(() => undefined);
        if (issued) note(`token ${issued.status} ${issued.body.error ?? ''}`);
        const listed = await callApi(running$, token, 'GET', '/api/users').catch(() => undefined);
        if (listed) note(`users ${listed.status} ${(listed.body as { code?: string } | undefined)?.code ?? ''}`);
      }
    };
    const loops = Array.from({ length: 4 }, hammer);
    await new Promise((resolve) => setTimeout(resolve, 300));
    process.kill(first.pid, 'SIGKILL');
    await first.stop();
    // A moment without a database, then an empty one at the same address.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    engines.push(await startOn(port));
    expect(await server.stop('SIGCONT')).toBe(1);
    running = false;
    await Promise.all(loops);
    // Served before, refused with the documented 503 after: never a bad client, a bad token or an empty list.
    const expected = ['token 200 ', 'token 503 temporarily_unavailable', 'users 200 ', 'users 503 database.unavailable'];
    const unexpected = [...answers.keys()].filter((what) => !expected.includes(what));
    // Should one show, the server's logged errors say which error was not known to mean "not now".
    const errors = unexpected.length
      ? server
          .output()
          .split('\n')
          .filter((line) => line.includes('"level":50'))
      : [];
    expect({ unexpected, errors }).toEqual({ unexpected: [], errors: [] });
    expect([...answers.keys()].some((what) => what.includes('503'))).toBe(true);
  });

  it("is noticed when the standalone server's own embedded engine dies: DATABASE LOST, and exit 1", async () => {
    server = await spawnServer('unused', { MONGODB_URI: undefined, BASE_URL: baseUrl, ...admin, HOOKS_DELIVERY: 'false' });
    // Its children: the engine, and the watchdog that kills the engine should the server die unannounced.
    const engine = childrenOf(server.pid).filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'jongodb');
    expect(engine).toHaveLength(1);
    process.kill(engine[0], 'SIGKILL');
    expect(await server.stop('SIGCONT')).toBe(1);
    expect(server.output()).toMatch(/DATABASE LOST: the embedded MongoDB engine exited \(SIGKILL\)/);
  });
});

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        // The parent is the fourth field, after the command in parentheses (which may hold spaces).
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(entry)] : [];
      } catch {
        return [];
      }
    });
}

/** The embedded engine on `port`, tried a few times while the port is being released. */
async function startOn(port: number, attempts = 10): Promise<EmbeddedMongo> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startEmbeddedMongo({ port });
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}
