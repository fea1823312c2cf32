import * as oauth from 'openid-client';

import { openDatabase, type Database } from '../../lib/store/database.js';
import { uniqueDbName, uriForDb } from '../support/env.js';
import { deliveriesSettled, hookTestEnv, subscribe } from '../support/hooks.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface FeedPage {
  data: Array<{ id: string; event: string; sequence: number; version?: number; entity?: { type: string; id: string } }>;
  next: number;
  watermark: number;
}

/**
 * Every event's place in one order (`sequence`, given after commit, gap-free) and among its entity's
 * events (`version`), in the payload and the headers; the pull feed that reads the order from a
 * cursor, under its own scope.
 */
describe('event order and the pull feed (/api/hook-events)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let feedToken: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('feed', hookTestEnv);
    await subscribe(server, receiver, ['User.Created', 'User.Data.Updated', 'Role.Created']);
    // A consumer given the feed and nothing else.
    const role = await server.create('/api/roles', { name: 'feed-only', type: 'MachineToMachine', scopeIds: ['management-api-hook-events'] });
    const consumer = await server.create('/api/applications', { name: 'Feed consumer', type: 'MachineToMachine' });
    await server.create(`/api/applications/${consumer.id}/roles`, { roleIds: [role.id] });
    const config = await server.discover(consumer.id, consumer.secret);
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all hook-events', resource: server.identity.managementApiIndicator });
    expect(tokens.scope).toBe('hook-events');
    feedToken = tokens.access_token;
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const feed = async (query: string, token = feedToken) => server.api('GET', `/api/hook-events${query}`, { token });
  /** Reads the feed until its watermark covers `count` events. */
  async function readAll(count: number): Promise<FeedPage['data']> {
    const seen: FeedPage['data'] = [];
    let after = 0;
    for (let round = 0; round < 400 && seen.length < count; round += 1) {
      const page = (await feed(`?after=${after}&limit=7`)).body as FeedPage;
      seen.push(...page.data);
      if (page.next === after) await new Promise((resolve) => setTimeout(resolve, 25));
      after = page.next;
    }
    return seen;
  }

  it('numbers every event once, in one gap-free order, versions each entity, and sends both in the body and the headers', async () => {
    const user = await server.create('/api/users', { username: 'numbered' });
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'Numbered' } });
    await server.create('/api/roles', { name: 'numbered role' });
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'Numbered again' } });
    await deliveriesSettled(server.database.db);
    const total = await server.database.db.collection('hook_events').countDocuments({});
    const events = await readAll(total);
    expect(events.map(({ sequence }) => sequence)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    expect(new Set(events.map(({ id }) => id)).size).toBe(total);
    const ofUser = events.filter(({ entity }) => entity?.type === 'User' && entity.id === user.id);
    expect(ofUser.map(({ event, version }) => [event, version])).toEqual([
      ['User.Created', 1],
      ['User.Data.Updated', 2],
      ['User.Data.Updated', 3],
    ]);
    // The pushed copies carry the same id, numbers and headers.
    const pushed = receiver.received.filter(({ body }) => (body.entity as { id?: string } | undefined)?.id === user.id);
    expect(pushed.map(({ id }) => id)).toEqual(ofUser.map(({ id }) => id));
    for (const { headers, body } of pushed) {
      expect(headers['webhook-sequence']).toBe(String(body.sequence));
      expect(headers['webhook-entity']).toBe(`User:${user.id}`);
      expect(headers['webhook-entity-version']).toBe(String(body.version));
    }
  });

  it('pages from a cursor, filters by event, and answers 410 with the oldest sequence for a cursor past retention', async () => {
    const first = (await feed('?after=0&limit=2')).body as FeedPage;
    expect(first.data.map(({ sequence }) => sequence)).toEqual([1, 2]);
    expect(first.next).toBe(2);
    const roles = (await feed('?after=0&events=Role.Created')).body as FeedPage;
    expect(roles.data.length).toBeGreaterThan(0);
    expect(roles.data.every(({ event }) => event === 'Role.Created')).toBe(true);
    // A short page read everything up to the watermark: the next cursor is the watermark.
    expect(roles.next).toBe(roles.watermark);
    expect((await feed('?after=-1')).status).toBe(400);
    expect((await feed('?limit=501')).status).toBe(400);
    expect((await feed('?events=not%20an%20event')).status).toBe(400);

    // Retention removed the first two events (TTL, here by hand): a cursor before them cannot be served.
    await server.database.db.collection('hook_events').deleteMany({ sequence: { $lte: 2 } });
    const gone = await feed('?after=0');
    expect({ status: gone.status, code: gone.body.code, data: gone.body.data }).toEqual({
      status: 410,
      code: 'hook.feed_cursor_expired',
      data: { oldestSequence: 3 },
    });
    expect((await feed('?after=2')).status).toBe(200);
  });

  it('needs the hook-events scope (or all), and the feed scope opens nothing else', async () => {
    // The admin's `all` reads it too (from after the events the test above let expire).
    expect((await server.api('GET', '/api/hook-events?after=2')).status).toBe(200);
    expect((await server.api('GET', '/api/hook-events?after=2', { token: null })).status).toBe(401);
    for (const [method, path] of [
      ['GET', '/api/users'],
      ['GET', '/api/hooks'],
      ['POST', '/api/subject-tokens'],
      ['GET', '/api/changes'],
    ] as const) {
      expect((await server.api(method, path, { token: feedToken, ...(method === 'POST' && { body: { userId: 'x' } }) })).status).toBe(403);
    }
  });
});

describe('one order across two server processes, one of them killed mid-burst', () => {
  const baseUrl = 'http://id.test.local';
  const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'feed-process-secret-0123456789' };
  const started: ServerProcess[] = [];
  let database: Database | undefined;

  afterAll(async () => {
    await Promise.all(started.splice(0).map((server) => server.stop('SIGKILL')));
    await database?.close();
  });

  it('the feed, read while both write mixed writes, sees every committed event exactly once, in sequence order, none skipped, each entity’s versions increasing', async () => {
    const dbName = uniqueDbName('feed-burst');
    const start = async () => {
      const server = await spawnServer(dbName, { BASE_URL: baseUrl, ...admin, ...hookTestEnv });
      started.push(server);
      return server;
    };
    const a = await start();
    let b = await start();
    const tokenOf = async (server: ServerProcess) =>
      (await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`)).body.access_token!;
    const tokenA = await tokenOf(a);
    let tokenB = await tokenOf(b);

    // The reader: from cursor 0, while the writes go on, until told to stop and caught up.
    const read: FeedPage['data'] = [];
    let stopReading = false;
    const reader = (async () => {
      let after = 0;
      for (;;) {
        const { status, body } = await callApi(a, tokenA, 'GET', `/api/hook-events?after=${after}&limit=50`);
        expect(status).toBe(200);
        const page = body as FeedPage;
        read.push(...page.data);
        after = page.next;
        if (page.data.length === 0) {
          if (stopReading) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    })();

    // Mixed writes: roles and users created, and one user updated over and over from both processes.
    const shared = await callApi(a, tokenA, 'POST', '/api/users', { username: 'shared_user' });
    expect(shared.status).toBe(200);
    const requestOf = (index: number): [string, string, unknown] =>
      index % 4 === 3
        ? ['PATCH', `/api/users/${shared.body.id}`, { name: `burst ${index}` }]
        : index % 4 === 1
          ? ['POST', '/api/users', { username: `burst_${index}` }]
          : ['POST', '/api/roles', { name: `burst ${index}` }];
    let killed = false;
    const write = async (index: number) => {
      const onB = index % 2 === 1;
      const [method, path, body] = requestOf(index);
      const answer = onB && !killed ? await callApi(b, tokenB, method, path, body).catch(() => undefined) : undefined;
      if (!answer || answer.status !== 200) await callApi(a, tokenA, method, path, body);
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 240) {
          const index = next++;
          if (index === 120 && !killed) {
            killed = true;
            await b.stop('SIGKILL');
            b = await start();
            tokenB = await tokenOf(b);
            killed = false;
          }
          await write(index);
        }
      }),
    );

    // Every write committed is announced (one the kill interrupted, by the intent resolver, within 40 s), and
    // every event numbered eventually; the reader stops once it has read up to there.
    database = await openDatabase(uriForDb(dbName));
    const events = database.db.collection('hook_events');
    const deadline = Date.now() + 100_000;
    const pending = async () =>
      (await database!.db.collection('change_intents').countDocuments({})) + (await events.countDocuments({ sequenceDue: { $exists: true } }));
    while ((await pending()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    const total = await events.countDocuments({});
    while (read.length < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    stopReading = true;
    await reader;

    // Each role and user the burst made is announced once, whichever process made it or died making it.
    const made = await database.db.collection('roles').countDocuments({ name: /^burst / });
    expect(made).toBe(120);
    expect(await events.countDocuments({ event: 'Role.Created' })).toBe(made);
    const users = await database.db.collection('users').countDocuments({ username: /^burst_/ });
    expect(users).toBe(60);
    expect(await events.countDocuments({ event: 'User.Created', 'payload.data.username': /^burst_/ })).toBe(users);
    expect(await events.countDocuments({ event: 'User.Data.Updated', 'payload.data.id': shared.body.id })).toBeGreaterThanOrEqual(60);
    // In the one order, each entity's versions only increase: the shared user's too, written by both processes.
    const versions = new Map<string, number[]>();
    for (const { entity, version } of read) {
      if (!entity || version === undefined) continue;
      const key = `${entity.type}:${entity.id}`;
      versions.set(key, [...(versions.get(key) ?? []), version]);
    }
    for (const [key, list] of versions) expect([key, list]).toEqual([key, [...list].sort((x, y) => x - y).filter((v, i, all) => i === 0 || v > all[i - 1]!)]);
    expect(versions.get(`User:${shared.body.id}`)!.length).toBeGreaterThanOrEqual(61);
    expect(read.map(({ sequence }) => sequence)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    const stored = await events.find({}).toArray();
    expect(new Set(read.map(({ id }) => id))).toEqual(new Set(stored.map(({ _id }) => _id)));
  }, 150_000);
});
