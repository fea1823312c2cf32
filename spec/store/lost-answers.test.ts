import { openDatabase, type Database } from '../../lib/store/database.js';
import { testMongoUri, uniqueDbName, uriForDb } from '../support/env.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { callApi, clientCredentials, exchangeSubjectToken, spawnServer, type ServerProcess } from '../support/process.js';

const baseUrl = 'http://id.test.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'process-test-secret-0123456789' };
const password = 'correct horse battery staple';

/** The run's database server reached through `proxy` (which renames it to itself in the server's answers). */
function throughProxy(proxy: FaultProxy, dbName: string): string {
  const url = new URL(testMongoUri().replace(/^mongodb(\+srv)?:/, 'http:'));
  url.host = proxy.address;
  url.pathname = `/${dbName}`;
  return url.toString().replace(/^http:/, 'mongodb:');
}

describe('a write whose answer the network lost (the driver retries it)', () => {
  let proxy: FaultProxy;
  let server: ServerProcess;
  let database: Database;
  let token: string;
  const dbName = uniqueDbName('lostanswer');

  beforeAll(async () => {
    const { hostname, port } = new URL(
      testMongoUri()
        .replace(/^mongodb(\+srv)?:/, 'http:')
        .split(',')[0],
    );
    proxy = await startFaultProxy(hostname, Number(port || 27017));
    server = await spawnServer(dbName, { MONGODB_URI: throughProxy(proxy, dbName), BASE_URL: baseUrl, ...admin, HOOKS_DELIVERY: 'false' });
    database = await openDatabase(uriForDb(dbName));
    token = (await clientCredentials(server, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`)).body.access_token!;
  });
  afterAll(async () => {
    await server.stop('SIGKILL');
    await database.close();
    await proxy.close();
  });

  it.each([
    ['a role', 'roles', '/api/roles', { name: 'kept once' }],
    ['a user', 'users', '/api/users', { username: 'kept_once', password }],
  ])('answers the creation of %s as a success, stores it once and records its change once', async (_what, collection, path, body) => {
    const lostBefore = proxy.lost();
    proxy.loseAnswers('insert', collection);
    const created = await callApi(server, token, 'POST', path, body);
    expect(proxy.lost()).toBe(lostBefore + 1);
    expect({ status: created.status, body: created.body }).toEqual({ status: 200, body: expect.objectContaining({ id: expect.any(String) }) });
    expect(await database.db.collection(collection).countDocuments({ _id: created.body.id })).toBe(1);
    expect(await database.db.collection('changes').countDocuments({ id: created.body.id, action: 'created' })).toBe(1);
  });

  it('exchanges a subject token whose audit record’s answer was lost (the outside attack saw a valid, unused token refused)', async () => {
    const { body: resource } = await callApi(server, token, 'POST', '/api/resources', { name: 'Lost answers API', indicator: 'https://lost-answers.test' });
    const { body: user } = await callApi(server, token, 'POST', '/api/users', { username: 'exchanged_once' });
    const { body: app } = await callApi(server, token, 'POST', '/api/applications', {
      name: 'support console',
      type: 'SPA',
      customClientMetadata: { allowTokenExchange: true },
    });
    const exchange = (subjectToken: string) => exchangeSubjectToken(server, app.id, subjectToken, resource.indicator);
    const { body: issued } = await callApi(server, token, 'POST', '/api/subject-tokens', { userId: user.id });
    const lostBefore = proxy.lost();
    // The exchange's one write is its audit record, which spends the token: its answer is lost, the driver retries.
    proxy.loseAnswers('insert', 'impersonations');
    const first = await exchange(issued.subjectToken);
    expect(proxy.lost()).toBe(lostBefore + 1);
    expect(first).toEqual({ status: 200, body: expect.objectContaining({ access_token: expect.any(String) }) });
    // Spent once, all the same.
    expect(await exchange(issued.subjectToken)).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await database.db.collection('impersonations').countDocuments({ kind: 'exchange.succeeded', targetUserId: user.id })).toBe(1);
  });

  it.each(['changes', 'hook_events'])(
    'answers the creation as a success when the answer to its `%s` insert was lost, and keeps one record and one event',
    async (collection) => {
      const lostBefore = proxy.lost();
      proxy.loseAnswers('insert', collection);
      const created = await callApi(server, token, 'POST', '/api/roles', { name: `recorded once in ${collection}` });
      expect(proxy.lost()).toBe(lostBefore + 1);
      expect(created.status).toBe(200);
      expect(await database.db.collection('changes').countDocuments({ id: created.body.id, action: 'created' })).toBe(1);
      expect(await database.db.collection('hook_events').countDocuments({ 'payload.data.id': created.body.id })).toBe(1);
    },
  );
});
