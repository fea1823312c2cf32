import { CacheRegistry } from '../../lib/store/cache.js';
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
