import type { AdapterPayload } from 'oidc-provider';

import { composeAdapters, createAdapterFactory } from '../../provider/adapter.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';
import { createTestClock } from '../support/clock.js';

describe('the oidc-provider adapter on MongoDB', () => {
  let database: Database;
  const clients = new Map<string, AdapterPayload>([['known', { client_id: 'known' }]]);
  let adapterFor: ReturnType<typeof createAdapterFactory>;
  const clock = createTestClock();

  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('adapter') });
    adapterFor = createAdapterFactory(database.db, async (id) => clients.get(id), clock);
  });
  afterAll(async () => {
    await database.close();
  });

  it('stores a payload and finds it by id', async () => {
    const sessions = adapterFor('Session');
    await sessions.upsert('s1', { accountId: 'u1', uid: 'uid-1', loginTs: 1 }, 60);
    expect(await sessions.find('s1')).toEqual({ accountId: 'u1', uid: 'uid-1', loginTs: 1 });
    expect(await sessions.findByUid('uid-1')).toEqual({ accountId: 'u1', uid: 'uid-1', loginTs: 1 });
    expect(await sessions.find('nope')).toBeUndefined();
  });

  it('replaces a payload on a second upsert', async () => {
    const grants = adapterFor('Grant');
    await grants.upsert('g1', { accountId: 'a', clientId: 'c' }, 60);
    await grants.upsert('g1', { accountId: 'a', clientId: 'c', openid: { scope: 'openid' } }, 60);
    expect(await grants.find('g1')).toEqual({ accountId: 'a', clientId: 'c', openid: { scope: 'openid' } });
  });

  it('keeps keys MongoDB would misread ($-prefixed, dotted) as they were', async () => {
    const interactions = adapterFor('Interaction');
    const payload = { params: { $where: 'x', 'a.b': 1 }, claims: { '$.x': { essential: true } } } as unknown as AdapterPayload;
    await interactions.upsert('i1', payload, 60);
    expect(await interactions.find('i1')).toEqual(payload);
  });

  it('does not return an expired document even before the TTL index removes it', async () => {
    const codes = adapterFor('AuthorizationCode');
    await codes.upsert('c1', { grantId: 'g' }, 1);
    expect(await codes.find('c1')).toEqual({ grantId: 'g' });
    clock.advance(1100);
    expect(await codes.find('c1')).toBeUndefined();
    expect(await database.db.collection('oidc_AuthorizationCode').countDocuments({ _id: 'c1' as never })).toBe(1);
  });

  it('keeps a document without expiry', async () => {
    const keys = adapterFor('ReplayDetection');
    await keys.upsert('r1', { iss: 'x' });
    expect(await keys.find('r1')).toEqual({ iss: 'x' });
  });

  it('marks a consumed token with the time it was consumed', async () => {
    const codes = adapterFor('AuthorizationCode');
    await codes.upsert('c2', { grantId: 'g2' }, 60);
    await codes.consume('c2');
    const found = await codes.find('c2');
    expect(found?.consumed).toEqual(expect.any(Number));
    expect(Math.abs((found!.consumed as number) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('destroys one document', async () => {
    const tokens = adapterFor('AccessToken');
    await tokens.upsert('t1', { grantId: 'g3' }, 60);
    await tokens.destroy('t1');
    expect(await tokens.find('t1')).toBeUndefined();
  });

  it('revokes every token of a grant, across models, and only those', async () => {
    await adapterFor('AccessToken').upsert('t2', { grantId: 'g4' }, 60);
    await adapterFor('RefreshToken').upsert('rt2', { grantId: 'g4' }, 60);
    await adapterFor('AccessToken').upsert('t3', { grantId: 'other' }, 60);
    for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode']) await adapterFor(model).revokeByGrantId('g4');
    expect(await adapterFor('AccessToken').find('t2')).toBeUndefined();
    expect(await adapterFor('RefreshToken').find('rt2')).toBeUndefined();
    expect(await adapterFor('AccessToken').find('t3')).toEqual({ grantId: 'other' });
  });

  it('finds a device code by its user code', async () => {
    const devices = adapterFor('DeviceCode');
    await devices.upsert('d1', { userCode: 'ABCD-EFGH', grantId: 'g5' }, 60);
    expect(await devices.findByUserCode('ABCD-EFGH')).toEqual({ userCode: 'ABCD-EFGH', grantId: 'g5' });
    expect(await devices.findByUserCode('ZZZZ-ZZZZ')).toBeUndefined();
  });

  it('ignores lookups by a non-string value', async () => {
    expect(await adapterFor('Session').find({ $ne: null } as unknown as string)).toBeUndefined();
  });

  it('serves clients from the applications, read-only', async () => {
    const clientAdapter = adapterFor('Client');
    expect(await clientAdapter.find('known')).toEqual({ client_id: 'known' });
    expect(await clientAdapter.find('unknown')).toBeUndefined();
    await expect(clientAdapter.upsert('x', {})).rejects.toThrow(TypeError);
  });

  it('composes with a host adapter: the host keeps its models, clients fall back to the host', async () => {
    const hostStore = new Map<string, AdapterPayload>([['Client:host-client', { client_id: 'host-client' }]]);
    class HostAdapter {
      constructor(private readonly name: string) {}
      async upsert(id: string, payload: AdapterPayload) {
        hostStore.set(`${this.name}:${id}`, payload);
      }
      async find(id: string) {
        return hostStore.get(`${this.name}:${id}`);
      }
      async findByUid() {
        return undefined;
      }
      async findByUserCode() {
        return undefined;
      }
      async consume() {}
      async destroy(id: string) {
        hostStore.delete(`${this.name}:${id}`);
      }
      async revokeByGrantId() {}
    }
    const composed = composeAdapters(database.db, async (id) => clients.get(id), HostAdapter);
    await composed('Session').upsert('hs', { accountId: 'h' }, 60);
    expect(hostStore.get('Session:hs')).toEqual({ accountId: 'h' });
    expect(await composed('Client').find('known')).toEqual({ client_id: 'known' });
    expect(await composed('Client').find('host-client')).toEqual({ client_id: 'host-client' });
  });
});
