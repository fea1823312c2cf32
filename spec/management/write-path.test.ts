import { createFindAccount } from '../../provider/accounts.js';
import { createOrganizationCaches } from '../../provider/organization-facts.js';
import { CacheRegistry } from '../../lib/store/cache.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import { createQueries } from '../../lib/store/queries/index.js';
import { createWriter } from '../../lib/store/unit-of-work.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { inUnit } from '../../lib/store/session.js';

describe('the write path (unit of work)', () => {
  let database: Database;
  // The transactional path, on whatever server the run uses (the embedded engine's transactions
  // work when they run one at a time, as here).
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('uow'), transactions: true });
  });
  afterAll(async () => {
    await database.close();
  });

  const write = () => createWriter(database);
  const origin = { method: 'POST', path: '/test', route: '/test', params: {}, clientId: 'tester' };

  it('commits a change and its record together', async () => {
    await write()(origin, async ({ record }) => {
      await database.db.collection('organizations').insertOne({ _id: 'committed' as never, name: 'c', createdAt: 1 }, inUnit());
      record({ entity: 'Organization', action: 'created', id: 'committed', data: { name: 'c' } });
    });
    expect(await database.db.collection('organizations').countDocuments({ _id: 'committed' as never })).toBe(1);
    expect(await database.db.collection('changes').findOne({ id: 'committed' })).toMatchObject({
      entity: 'Organization',
      action: 'created',
      data: { name: 'c' },
      origin,
      createdAt: expect.any(Date),
    });
  });

  it('rolls back a change and its record together when the unit fails midway', async () => {
    expect(database.transactions).toBe(true);
    await expect(
      write()(origin, async ({ record }) => {
        await database.db.collection('organizations').insertOne({ _id: 'rolled-back' as never, name: 'r', createdAt: 1 }, inUnit());
        record({ entity: 'Organization', action: 'created', id: 'rolled-back', data: {} });
        await database.db.collection('organization_users').insertOne({ _id: 'rolled-back:u' as never, organizationId: 'rolled-back', userId: 'u' }, inUnit());
        throw new Error('the database failed midway');
      }),
    ).rejects.toThrow('the database failed midway');
    expect(await database.db.collection('organizations').countDocuments({ _id: 'rolled-back' as never })).toBe(0);
    expect(await database.db.collection('organization_users').countDocuments({ organizationId: 'rolled-back' })).toBe(0);
    expect(await database.db.collection('changes').countDocuments({ id: 'rolled-back' })).toBe(0);
  });
});

describe('what the Management API records', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('records');
  });
  afterAll(async () => {
    await server.close();
  });

  const changes = () => server.database.db.collection('changes').find({}).sort({ createdAt: 1, _id: 1 }).toArray();

  it('records one change per successful write, with the request behind it and no secret', async () => {
    const before = (await changes()).length;
    const { body: user } = await server.api('POST', '/api/users', { body: { username: 'recorded', password: 'a secret password' } });
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'Recorded' } });
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Recorded role' } });
    await server.api('POST', `/api/users/${user.id}/roles`, { body: { roleIds: [role.id] } });
    await server.api('DELETE', `/api/users/${user.id}`);

    const recorded = (await changes()).slice(before);
    expect(recorded.map(({ entity, action }) => `${entity}.${action}`)).toEqual([
      'User.created',
      'User.updated',
      'Role.created',
      'User.roles.updated',
      'User.deleted',
    ]);
    expect(recorded[0]).toMatchObject({
      id: user.id,
      data: { username: 'recorded', hasPassword: true },
      origin: { method: 'POST', path: '/api/users', route: '/api/users', clientId: server.admin.clientId },
    });
    expect(recorded[3]).toMatchObject({
      data: { addedRoleIds: [role.id], removedRoleIds: [] },
      origin: { route: '/api/users/:userId/roles', params: { userId: user.id } },
    });
    expect(recorded[4]!.data).toMatchObject({ username: 'recorded', name: 'Recorded' });
    expect(JSON.stringify(recorded)).not.toMatch(/passwordHash|scrypt|a secret password/);
  });

  it('records nothing for a rejected request', async () => {
    const before = (await changes()).length;
    await server.api('POST', '/api/users', { body: { username: '1bad' } });
    await server.api('POST', '/api/users/nosuchuser/roles', { body: { roleIds: ['x'] } });
    await server.api('DELETE', '/api/roles/nosuchrole');
    expect((await changes()).length).toBe(before);
  });
});

describe('accounts for the provider', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('accounts') });
  });
  afterAll(async () => {
    await database.close();
  });

  it("gives a user's standard claims, hides a suspended user, and asks the host about others", async () => {
    const queries = createQueries(database.db);
    const base = {
      emailKey: 'ann@x.test',
      primaryPhone: null,
      avatar: 'https://img.test/a.png',
      customData: {},
      identities: {},
      passwordHash: null,
      createdAt: 1,
      updatedAt: 2000,
      lastSignInAt: null,
    };
    await queries.users.insert({
      ...base,
      _id: 'ann',
      username: 'ann',
      primaryEmail: 'ann@x.test',
      name: 'Ann',
      profile: { givenName: 'Ann', address: { postalCode: '1000' } },
      isSuspended: false,
    });
    await queries.users.insert({ ...base, _id: 'sam', username: 'sam', primaryEmail: null, emailKey: null, name: null, profile: {}, isSuspended: true });
    const organizations = createOrganizationCaches(new CacheRegistry(database.db, 60_000), queries);
    const findAccount = createFindAccount(queries, organizations, async (_ctx, sub) =>
      sub === 'host-user' ? { accountId: sub, claims: () => ({ sub }) } : undefined,
    );
    const ctx = {} as Parameters<typeof findAccount>[0];

    const ann = await findAccount(ctx, 'ann', undefined);
    expect(await ann!.claims('id_token', 'openid profile email', {}, [])).toEqual({
      sub: 'ann',
      name: 'Ann',
      username: 'ann',
      picture: 'https://img.test/a.png',
      email: 'ann@x.test',
      email_verified: true,
      updated_at: 2,
      given_name: 'Ann',
      address: { postal_code: '1000' },
      // Logto's `identities` claim (the `identities` scope): the linked social identities.
      identities: {},
    });
    expect(await findAccount(ctx, 'sam', undefined)).toBeUndefined();
    expect((await findAccount(ctx, 'host-user', undefined))?.accountId).toBe('host-user');
    expect(await findAccount(ctx, 'nobody', undefined)).toBeUndefined();
  });
});
