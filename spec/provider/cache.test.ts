import { CacheRegistry } from '../../lib/store/cache.js';
import { currentSession, withSession } from '../../lib/store/session.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

describe('per-process caches across processes', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('cache') });
  });
  afterAll(async () => {
    await database.close();
  });

  it('forgets what another process changed, the very first change of a cache included', async () => {
    // Two registries over one database stand for two processes.
    const [here, there] = [new CacheRegistry(database.db, 60_000), new CacheRegistry(database.db, 60_000)];
    let version = 1;
    const cached = there.create('roles-of-user', async () => version);
    here.create('roles-of-user', async () => version);
    const watched: string[] = [];
    there.watch('roles-of-user', () => watched.push('changed'));
    await Promise.all([here.poll(), there.poll()]);

    expect(await cached.get('u1')).toBe(1);
    version = 2;
    // No generation existed for this cache before: the first change must count too.
    await here.changed('roles-of-user');
    expect(await cached.get('u1')).toBe(1);
    await there.poll();
    expect(await cached.get('u1')).toBe(2);
    expect(watched).toEqual(['changed']);

    version = 3;
    await here.changed('roles-of-user');
    await there.poll();
    expect(await cached.get('u1')).toBe(3);
    expect(watched).toEqual(['changed', 'changed']);
  });
});

describe('one name, several caches', () => {
  it('clears every cache kept under a name, here and in another process', async () => {
    const database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('cache-views') });
    try {
      const [here, there] = [new CacheRegistry(database.db, 60_000), new CacheRegistry(database.db, 60_000)];
      let version = 1;
      const views = [here.create('applications', async () => `client ${version}`), here.create('applications', async () => `document ${version}`)];
      const elsewhere = [there.create('applications', async () => `client ${version}`), there.create('applications', async () => `document ${version}`)];
      await Promise.all([here.poll(), there.poll()]);
      for (const view of [...views, ...elsewhere]) await view.get('a');
      version = 2;
      await here.changed('applications');
      expect(await Promise.all(views.map((view) => view.get('a')))).toEqual(['client 2', 'document 2']);
      await there.poll();
      expect(await Promise.all(elsewhere.map((view) => view.get('a')))).toEqual(['client 2', 'document 2']);
    } finally {
      await database.close();
    }
  });

  it('loads outside the unit of work it is asked in: a transaction not yet committed is never cached', async () => {
    const registry = new CacheRegistry({} as never, 60_000);
    const sessions: unknown[] = [];
    const cache = registry.create('roles', async () => {
      sessions.push(currentSession());
      return 'loaded';
    });
    await withSession({ id: 'a transaction' } as never, () => cache.get('r'));
    expect(sessions).toEqual([undefined]);
  });
});
