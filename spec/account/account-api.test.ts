import { sha256 } from '../../lib/ids.js';
import { TestBrowser } from '../support/browser.js';
import { snapshot } from '../support/db.js';
import { codeFlow, redeem } from '../support/flows.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * Logto's Account API (packages/core/src/routes/account/index.ts): the signed-in user's own account,
 * with the user's access token from a first-party application, field by field as its scopes allow.
 */
describe('the Account API (/api/my-account)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let firstParty: { clientId: string; clientSecret: string };
  let thirdParty: { clientId: string; clientSecret: string };
  let userId: string;
  let ip = 20;

  async function tokenFor(client: { clientId: string; clientSecret: string }, scope: string, resource?: string) {
    const browser = new TestBrowser(server.url, `198.51.100.${(ip += 1)}`);
    const flow = await codeFlow(browser, {
      clientId: client.clientId,
      redirectUri,
      scope,
      identifier: 'account_owner',
      password,
      ...(resource && { resource }),
    });
    return (await redeem(server, client, flow, resource)).access_token;
  }
  const call = (token: string | null, method: string, path: string, body?: unknown) => server.api(method, `/api/my-account${path}`, { token, body });

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('account-api', { ...hookTestEnv, TRUST_PROXY: 'true' });
    await subscribe(server, receiver, ['User.Data.Updated']);
    const app = (isThirdParty: boolean) =>
      server.create('/api/applications', {
        name: `account ${isThirdParty}`,
        type: 'Traditional',
        isThirdParty,
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      });
    const [first, third] = await Promise.all([app(false), app(true)]);
    firstParty = { clientId: first.id, clientSecret: first.secret };
    thirdParty = { clientId: third.id, clientSecret: third.secret };
    userId = (
      await server.create('/api/users', {
        username: 'account_owner',
        primaryEmail: 'owner@example.com',
        primaryPhone: '+61 412 345 600',
        password,
        name: 'Owner',
      })
    ).id;
    await server.create('/api/users', { username: 'someone_else' });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  it('answers the account as the token’s scopes allow (OIDC Core §5.4): profile, email, phone', async () => {
    const full = await tokenFor(firstParty, 'openid profile email phone');
    expect((await call(full, 'GET', '')).body).toMatchObject({
      id: userId,
      username: 'account_owner',
      name: 'Owner',
      primaryEmail: 'owner@example.com',
      primaryPhone: '61412345600',
      hasPassword: true,
    });
    const bare = await tokenFor(firstParty, 'openid');
    expect((await call(bare, 'GET', '')).body).toEqual({ id: userId });
  });

  it('changes the name, avatar, username and profile with the profile scope, announcing what changed', async () => {
    const token = await tokenFor(firstParty, 'openid profile');
    const events = await eventsDuring(server, receiver, async () => {
      const patched = await call(token, 'PATCH', '', { name: 'New Name', avatar: 'https://cdn.example.com/me.png' });
      expect(patched).toMatchObject({ status: 200, body: { name: 'New Name', avatar: 'https://cdn.example.com/me.png' } });
      expect((await call(token, 'PATCH', '/profile', { nickname: 'newbie' })).body).toMatchObject({ nickname: 'newbie' });
    });
    expect(events.map(({ body }) => [body.event, body.data.id, body.changes, body.clientId])).toEqual([
      ['User.Data.Updated', userId, ['avatar', 'name'], firstParty.clientId],
      ['User.Data.Updated', userId, ['profile.nickname'], firstParty.clientId],
    ]);
    expect((await call(token, 'PATCH', '', { username: 'someone_else' })).body.code).toBe('user.username_already_in_use');
    expect((await call(token, 'PATCH', '', {})).body.code).toBe('entity.invalid_input');
    expect((await call(token, 'PATCH', '', { name: 'x'.repeat(200) })).status).toBe(400);
  });

  it('refuses what the token does not hold: no profile scope is 403, and nothing is written', async () => {
    const token = await tokenFor(firstParty, 'openid email');
    const before = await snapshot(server.database.db);
    for (const [path, body] of [
      ['', { name: 'Sneaky' }],
      ['/profile', { nickname: 'sneaky' }],
    ] as const) {
      expect((await call(token, 'PATCH', path, body)).body.code).toBe('auth.forbidden');
    }
    expect(await snapshot(server.database.db)).toBe(before);
  });

  // Logto's step-up (packages/core/src/routes/verification/*, account/index.ts): a verification record, sent as
  // `logto-verification-id`, allows one sensitive change within ten minutes, for this account and application.
  it('changes the password only with a fresh step-up record, spent once, and announces it', async () => {
    const token = await tokenFor(firstParty, 'openid profile');
    const stepUp = (pass: string, with_ = token) => server.api('POST', '/api/verifications/password', { token: with_, body: { password: pass } });
    expect((await stepUp('not the password')).body.code).toBe('session.invalid_credentials');
    const record = await stepUp(password);
    expect(record).toMatchObject({ status: 201, body: { verificationRecordId: expect.any(String), expiresAt: expect.any(String) } });
    const change = (body: unknown, id?: string) =>
      server.api('POST', '/api/my-account/password', { token, body, ...(id && { headers: { 'logto-verification-id': id } }) });

    const before = await snapshot(server.database.db);
    expect(await change({ password: 'a brand new passphrase 1' })).toMatchObject({ status: 401, body: { code: 'verification_record.permission_denied' } });
    expect((await change({ password: 'a brand new passphrase 1' }, 'made-up-record')).status).toBe(401);
    // A password the policy refuses spends nothing.
    expect((await change({ password: 'short' }, record.body.verificationRecordId)).body.code).toBe('password.rejected');
    expect(await snapshot(server.database.db)).toBe(before);

    const events = await eventsDuring(server, receiver, async () => {
      expect((await change({ password: 'a brand new passphrase 1' }, record.body.verificationRecordId)).status).toBe(204);
    });
    expect(events.map(({ body }) => body.changes)).toEqual([['password']]);
    expect(events[0]!.raw).not.toMatch(/brand new passphrase/);
    expect((await server.api('POST', `/api/users/${userId}/password/verify`, { body: { password: 'a brand new passphrase 1' } })).status).toBe(204);
    // Spent: the same record allows nothing more.
    expect((await change({ password: 'another new passphrase 2' }, record.body.verificationRecordId)).status).toBe(401);

    // Expired, or made with another application's token: refused too.
    const late = await stepUp('a brand new passphrase 1');
    // Stored by its hash, as the record's id is a secret.
    await server.database.db
      .collection('verification_records')
      .updateOne({ _id: sha256(late.body.verificationRecordId) as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await change({ password: 'another new passphrase 2' }, late.body.verificationRecordId)).status).toBe(401);
    await server.api('PATCH', `/api/users/${userId}/password`, { body: { password } });
  });

  it('accepts only the user’s own identity token of a first-party application', async () => {
    expect((await call(null, 'GET', '')).body.code).toBe('auth.authorization_header_missing');
    expect((await call('not-a-token', 'GET', '')).body.code).toBe('auth.invalid_token');
    // A third-party application's token: the user consented to it, but it is not the user's own app.
    const third = await tokenFor(thirdParty, 'openid profile');
    expect(await call(third, 'GET', '')).toMatchObject({ status: 403, body: { code: 'auth.forbidden' } });
    // A token for an API (a JWT with its audience) is not the account's.
    const resource = await server.create('/api/resources', { name: 'Orders', indicator: 'https://orders.account.test' });
    const forApi = await tokenFor(firstParty, 'openid profile', resource.indicator);
    expect(await call(forApi, 'GET', '')).toMatchObject({ status: 401, body: { code: 'auth.invalid_token' } });
    // A machine's own token names no account.
    expect((await call(await server.adminToken(), 'GET', '')).status).toBe(401);
    // A suspended account's token stops working at once.
    const token = await tokenFor(firstParty, 'openid profile');
    await server.api('PATCH', `/api/users/${userId}/is-suspended`, { body: { isSuspended: true } });
    try {
      expect((await call(token, 'GET', '')).body.code).toBe('auth.invalid_token');
    } finally {
      await server.api('PATCH', `/api/users/${userId}/is-suspended`, { body: { isSuspended: false } });
    }
  });
});
