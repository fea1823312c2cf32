import type { Db } from 'mongodb';

import { createIdentity } from '../../identity.js';
import { silentLogger } from '../../lib/logger.js';
import { createPasswords, defaultScryptCost } from '../../lib/password.js';
import { openDatabase } from '../../lib/store/database.js';
import { loadSettings } from '../../settings.js';
import { TestBrowser } from '../support/browser.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';
import { codeFlow } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/** `PASSWORD_SCRYPT` and `passwordHashing`: the cost of a password hash, kept with each hash, raised or lowered without a lock-out. */
describe('the cost of password hashes (PASSWORD_SCRYPT)', () => {
  let server: TestServer;
  let db: Db;
  let app: { id: string };
  beforeAll(async () => {
    server = await startTestServer('password-cost', { PASSWORD_SCRYPT: 'N=2048,r=8,p=1' });
    db = server.database.db;
    app = await server.create('/api/applications', {
      name: 'Cost app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  const storedHash = async (id: string) => (await db.collection<{ _id: string; passwordHash: string }>('users').findOne({ _id: id }))!.passwordHash;

  it('hashes at the configured cost, the parameters kept with the hash', async () => {
    const { id } = await server.create('/api/users', { username: 'cost_new', password });
    expect(await storedHash(id)).toMatch(/^scrypt\$2048\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect((await server.api('POST', `/api/users/${id}/password/verify`, { body: { password } })).status).toBe(204);
  });

  it('checks a hash made at another cost at its own, and makes it again at the configured one at the next password sign-in', async () => {
    const { id } = await server.create('/api/users', { username: 'cost_old', password });
    // What a change of PASSWORD_SCRYPT leaves behind: a hash at the cost of before.
    const before = await createPasswords({ N: 1024, r: 8, p: 1 }).hash(password);
    await db.collection<{ _id: string }>('users').updateOne({ _id: id }, { $set: { passwordHash: before } });

    await expect(
      codeFlow(new TestBrowser(server.url), { clientId: app.id, redirectUri, scope: 'openid', identifier: 'cost_old', password: 'not the password at all' }),
    ).rejects.toThrow(/sign-in answered 422/);
    expect(await storedHash(id)).toBe(before);

    const flow = await codeFlow(new TestBrowser(server.url), { clientId: app.id, redirectUri, scope: 'openid', identifier: 'cost_old', password });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
    const after = await storedHash(id);
    expect(after).toMatch(/^scrypt\$2048\$8\$1\$/);
    expect(await createPasswords({ N: 2048, r: 8, p: 1 }).verify(password, after)).toBe(true);
  });

  it("defaults to OWASP's N=2^15, r=8, p=3", () => {
    expect(loadSettings({}).passwordHashing).toEqual({ N: 32768, r: 8, p: 3 });
    expect(defaultScryptCost).toEqual({ N: 32768, r: 8, p: 3 });
  });

  it('refuses a cost scrypt cannot use, or one written otherwise, naming the setting', async () => {
    expect(() => loadSettings({ PASSWORD_SCRYPT: 'N=1000,r=8,p=1' })).toThrow(/PASSWORD_SCRYPT: N must be a power of two from 1024/);
    expect(() => loadSettings({ PASSWORD_SCRYPT: 'N=1048576,r=8,p=1' })).toThrow(/PASSWORD_SCRYPT: N and r together ask more than 256 MiB/);
    expect(() => loadSettings({ PASSWORD_SCRYPT: 'N=32768' })).toThrow(/PASSWORD_SCRYPT/);
    const database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('password-cost-bad') });
    try {
      const options = { database, issuer: 'http://localhost:9/oidc', baseUrl: 'http://localhost:9', logger: silentLogger };
      await expect(createIdentity({ ...options, passwordHashing: { N: 32768, r: 0, p: 1 } })).rejects.toThrow(
        /Invalid option: passwordHashing: r must be an integer from 1 to 32/,
      );
    } finally {
      await database.close();
    }
  });
});
