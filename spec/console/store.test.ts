import { ensureIndexes, openDatabase, type Database } from '../../lib/store/database.js';
import { consoleCollections, createConsoleStore } from '../../console/store.js';
import { createTestClock } from '../support/clock.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

/** The console's records of sign-ins under way and of sessions: single use, and ended by time. */
describe('the console store', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('console-store') });
    await ensureIndexes(database.db, consoleCollections);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a sign-in under way is spent once, even by callbacks that read it at the same moment', async () => {
    const store = createConsoleStore(database.db);
    for (let round = 0; round < 5; round += 1) {
      const { token } = await store.beginLogin('/console/users');
      const spent = await Promise.all([store.spendLogin(token), store.spendLogin(token), store.spendLogin(token)]);
      expect(spent.filter(Boolean)).toHaveLength(1);
    }
    expect(await store.spendLogin(undefined)).toBeUndefined();
    expect(await store.spendLogin('made-up')).toBeUndefined();
  });

  it('a secret kept for the next page is sealed by the cookie (the stored session cannot show it), shown once, and not after a minute', async () => {
    const clock = createTestClock();
    const store = createConsoleStore(database.db, clock);
    const { token, session } = await store.createSession('u2', ['pwd', 'otp', 'mfa'], 'session-u2');
    const value = 'the-secret-value-0123456789';
    await store.reveal(token, session, { subject: 'app1', name: 'Default secret', value });
    const stored = (await store.findSession(token))!;
    expect(JSON.stringify(stored)).not.toContain(value);
    expect(await store.takeReveal(token, stored, 'another-app')).toBeUndefined();
    const [first, second] = await Promise.all([store.takeReveal(token, stored, 'app1'), store.takeReveal(token, stored, 'app1')]);
    expect([first, second].filter(Boolean)).toEqual([{ name: 'Default secret', value }]);
    await store.reveal(token, stored, { subject: 'app1', name: 'Later', value });
    clock.advance(61_000);
    expect(await store.takeReveal(token, (await store.findSession(token))!, 'app1')).toBeUndefined();
  });

  it('a sign-in and a session end with their time; the cookie value is never what is stored', async () => {
    const clock = createTestClock();
    const store = createConsoleStore(database.db, clock);
    const login = await store.beginLogin('/console/users');
    const { token, session } = await store.createSession('u1', ['pwd', 'otp', 'mfa'], 'session-u1');
    expect(session._id).not.toBe(token);
    expect(await database.db.collection('console_sessions').findOne({ _id: token as never })).toBeNull();
    expect((await store.findSession(token))?.userId).toBe('u1');
    clock.advance(11 * 60 * 1000);
    expect(await store.spendLogin(login.token)).toBeUndefined();
    clock.advance(8 * 60 * 60 * 1000);
    expect(await store.findSession(token)).toBeUndefined();
  });
});
