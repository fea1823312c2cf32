import { EventEmitter } from 'node:events';

import type { Db } from 'mongodb';

import { startChangeFeed } from '../../lib/store/change-feed.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import type { Logger } from '../../lib/logger.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';
import { hookTestEnv } from '../support/hooks.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';
import { startReceiver } from '../support/receiver.js';

const baseUrl = 'http://id.test.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'change-feed-secret-0123456789' };

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recordingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    info: (message) => lines.push(`info ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
    error: (message) => lines.push(`error ${message}`),
  };
  return { lines, logger };
}

/**
 * Workers wake on a change stream where the database has them (issue 36, point 5), and poll where
 * it has none. The embedded engine has none: what runs here is the fallback, and the service works
 * on it. The stream's own path is run against a stand-in for the driver's `ChangeStream` (an
 * event emitter as the driver's is), since no server with change streams installs on these machines.
 */
describe('change streams, and working without them', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('change-feed') });
  });
  afterAll(async () => {
    await database.close();
  });

  it('says once that this database has no change streams, tries again later, and wakes nobody', async () => {
    const { lines, logger } = recordingLogger();
    let woken = 0;
    const feed = startChangeFeed(database.db, { hook_events: { on: ['insert'], wake: () => (woken += 1) } }, { logger, retryMs: 50 });
    try {
      await settle(400);
      await database.db.collection('hook_events').insertOne({ _id: 'e1' } as never);
      await settle(200);
      expect(feed.active).toBe(false);
      expect(woken).toBe(0);
      // Tried several times in 600 ms, said once.
      expect(lines.filter((line) => line.startsWith('info Change streams are unavailable here'))).toHaveLength(1);
      expect(lines.filter((line) => !line.startsWith('info Change streams are unavailable here'))).toEqual([]);
    } finally {
      await feed.stop();
    }
  });

  it('delivers webhooks another process recorded, and says why it polls, without change streams (the embedded engine)', async () => {
    const receiver = await startReceiver();
    const dbName = uniqueDbName('no-change-streams');
    const env = { BASE_URL: baseUrl, ...admin, ...hookTestEnv, CHANGE_STREAMS: 'true' };
    // One process records and delivers nothing; the other learns of its events only by polling.
    const servers: ServerProcess[] = [];
    try {
      servers.push(await spawnServer(dbName, { ...env, HOOKS_DELIVERY: 'false' }));
      servers.push(await spawnServer(dbName, env));
      const [writer, deliverer] = servers as [ServerProcess, ServerProcess];
      const token = (await clientCredentials(writer, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`)).body.access_token!;
      const hook = await callApi(writer, token, 'POST', '/api/hooks', { name: 'polled', events: ['User.Created'], config: { url: receiver.url } });
      receiver.keys.push(hook.body.signingKey);
      expect((await callApi(writer, token, 'POST', '/api/users', { username: 'no_streams' })).status).toBe(200);
      await receiver.waitFor((got) => got.length >= 1, 30_000);
      // At least once: a delivery the receiver answered may come again under load, under the same webhook-id.
      const delivered = new Map(receiver.received.map(({ id, body }) => [id, body.event as string]));
      expect([...delivered.values()]).toEqual(['User.Created']);
      for (const server of [writer, deliverer]) expect(server.output()).toContain('Change streams are unavailable here');
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
      await receiver.close();
    }
  });

  describe('where the database has change streams (a stand-in for the driver’s stream)', () => {
    class Stream extends EventEmitter {
      closed = false;
      async close() {
        this.closed = true;
      }
    }
    function fakeDb() {
      const streams: Stream[] = [];
      const pipelines: unknown[] = [];
      const db = {
        watch(pipeline: unknown) {
          pipelines.push(pipeline);
          const stream = new Stream();
          streams.push(stream);
          return stream;
        },
      } as unknown as Db;
      return { db, streams, pipelines };
    }

    it('asks only for the namespaces and operations named, wakes the worker a write is for, and never for its own updates', async () => {
      const { db, streams, pipelines } = fakeDb();
      const { lines, logger } = recordingLogger();
      const woken: string[] = [];
      const feed = startChangeFeed(
        db,
        {
          hook_events: { on: ['insert'], wake: () => woken.push('deliveries') },
          cache_generations: { on: ['insert', 'update'], wake: () => woken.push('caches') },
        },
        { logger },
      );
      expect(pipelines).toEqual([
        [
          {
            $match: {
              $or: [
                { 'ns.coll': 'hook_events', operationType: { $in: ['insert'] } },
                { 'ns.coll': 'cache_generations', operationType: { $in: ['insert', 'update'] } },
              ],
            },
          },
          { $project: { _id: 1, ns: 1, operationType: 1 } },
        ],
      ]);
      streams[0]!.emit('init', {});
      expect(feed.active).toBe(true);
      expect(lines).toEqual(['info Change streams on: hook_events, cache_generations wake their workers (polling goes on beside them)']);
      streams[0]!.emit('change', { ns: { db: 'x', coll: 'hook_events' }, operationType: 'insert' });
      streams[0]!.emit('change', { ns: { db: 'x', coll: 'hook_events' }, operationType: 'update' });
      streams[0]!.emit('change', { ns: { db: 'x', coll: 'cache_generations' }, operationType: 'update' });
      streams[0]!.emit('change', { ns: { db: 'x', coll: 'toString' }, operationType: 'insert' });
      expect(woken).toEqual(['deliveries', 'caches']);
      await feed.stop();
      expect(streams[0]!.closed).toBe(true);
      expect(feed.active).toBe(false);
    });

    it('after a stream fails, says so, polls, and opens another', async () => {
      const { db, streams } = fakeDb();
      const { lines, logger } = recordingLogger();
      const woken: string[] = [];
      const feed = startChangeFeed(db, { impersonations: { on: ['insert'], wake: () => woken.push('ledger') } }, { logger, retryMs: 20 });
      try {
        streams[0]!.emit('init', {});
        streams[0]!.emit('error', new Error('no primary'));
        expect(feed.active).toBe(false);
        expect(streams[0]!.closed).toBe(true);
        expect(lines.at(-1)).toBe('warn The change stream failed (no primary); the workers poll until another opens');
        await settle(100);
        expect(streams).toHaveLength(2);
        streams[1]!.emit('init', {});
        streams[1]!.emit('change', { ns: { coll: 'impersonations' }, operationType: 'insert' });
        expect(feed.active).toBe(true);
        expect(woken).toEqual(['ledger']);
      } finally {
        await feed.stop();
      }
    });
  });
});
