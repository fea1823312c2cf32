import { sha256 } from '../../lib/ids.js';
import { TestBrowser } from '../support/browser.js';
import { snapshot } from '../support/db.js';
import { codeFlow, redeem } from '../support/flows.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { startSmsCatcher, type SmsCatcher } from '../support/sms.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * Logto's Account API (packages/core/src/routes/account/index.ts): the signed-in user's own account,
 * with the user's access token from a first-party application, field by field as its scopes allow.
 */
describe('the Account API (/api/my-account)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  let sms: SmsCatcher;
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
    mail = await startMailCatcher();
    sms = await startSmsCatcher();
    server = await startTestServer('account-api', {
      ...hookTestEnv,
      ...sms.env,
      SMTP_URL: mail.url,
      EMAIL_FROM: 'Identity <no-reply@id.test>',
      TRUST_PROXY: 'true',
    });
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
    await server.create('/api/users', { username: 'someone_else', primaryEmail: 'someone@example.com', primaryPhone: '+61 412 345 601' });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await mail.close();
    await sms.close();
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

  describe('email and phone (Logto’s primary-email and primary-phone, with codes from /api/verifications/verification-code)', () => {
    const verifications = (token: string, path: string, body: unknown) => server.api('POST', `/api/verifications${path}`, { token, body });
    /** A verified code for `identifier` made with `token`: its record id. */
    async function provedBy(token: string, identifier: { type: 'email' | 'phone'; value: string }) {
      const sent = await verifications(token, '/verification-code', { identifier });
      expect(sent).toMatchObject({ status: 201, body: { verificationRecordId: expect.any(String), expiresAt: expect.any(String) } });
      const code = identifier.type === 'email' ? await mail.nextCode(identifier.value) : await sms.nextCode(`+${identifier.value.replace(/\D/g, '')}`);
      const verified = await verifications(token, '/verification-code/verify', { identifier, verificationId: sent.body.verificationRecordId, code });
      expect(verified).toMatchObject({ status: 200, body: { verificationRecordId: sent.body.verificationRecordId } });
      return sent.body.verificationRecordId as string;
    }
    const withStepUp = (token: string, method: string, path: string, stepUp: string | undefined, body?: unknown) =>
      server.api(method, `/api/my-account${path}`, { token, body, ...(stepUp && { headers: { 'logto-verification-id': stepUp } }) });

    it('replaces the email with one a code proved, after a step-up by a code to the account’s own phone; announced once, and nothing on failure', async () => {
      const token = await tokenFor(firstParty, 'openid email phone');
      const stepUp = await provedBy(token, { type: 'phone', value: '+61 412 345 600' });
      const proof = await provedBy(token, { type: 'email', value: 'new.owner@example.com' });

      const before = await snapshot(server.database.db);
      const body = { email: 'new.owner@example.com', newIdentifierVerificationRecordId: proof };
      expect((await withStepUp(token, 'POST', '/primary-email', undefined, body)).body.code).toBe('verification_record.permission_denied');
      // The proof must be of this address: another is 400, and neither record is spent.
      const other = await withStepUp(token, 'POST', '/primary-email', stepUp, { ...body, email: 'other@example.com' });
      expect({ status: other.status, code: other.body.code }).toEqual({ status: 400, code: 'verification_record.not_found' });
      // A code to a new address is no step-up: only the account's own address or number proves the holder.
      expect((await withStepUp(token, 'POST', '/primary-email', proof, body)).status).toBe(401);
      expect(await snapshot(server.database.db)).toBe(before);

      const events = await eventsDuring(server, receiver, async () => {
        expect((await withStepUp(token, 'POST', '/primary-email', stepUp, body)).status).toBe(204);
      });
      expect(events.map(({ body: event }) => [event.event, event.changes, event.data.primaryEmail])).toEqual([
        ['User.Data.Updated', ['primaryEmail'], 'new.owner@example.com'],
      ]);
      // Both records are spent.
      const again = await provedBy(token, { type: 'email', value: 'third@example.com' });
      expect((await withStepUp(token, 'POST', '/primary-email', stepUp, { email: 'third@example.com', newIdentifierVerificationRecordId: again })).status).toBe(
        401,
      );
    });

    it("refuses an address the sign-in experience's email policy refuses (422), spending nothing and changing nothing", async () => {
      await server.api('PATCH', '/api/sign-in-exp', { body: { emailBlocklistPolicy: { customBlocklist: ['@blocked.example'] } } });
      try {
        const token = await tokenFor(firstParty, 'openid email phone');
        const stepUp = await provedBy(token, { type: 'phone', value: '+61 412 345 600' });
        const proof = await provedBy(token, { type: 'email', value: 'me@blocked.example' });
        const before = await snapshot(server.database.db);
        const refused = await withStepUp(token, 'POST', '/primary-email', stepUp, { email: 'me@blocked.example', newIdentifierVerificationRecordId: proof });
        expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 422, code: 'session.email_blocklist.email_not_allowed' });
        expect(await snapshot(server.database.db)).toBe(before);
      } finally {
        await server.api('PATCH', '/api/sign-in-exp', { body: { emailBlocklistPolicy: {} } });
      }
    });

    it('adds and removes a phone with the phone scope, normalized; refuses another account’s number (422) and a removal the settings forbid', async () => {
      const token = await tokenFor(firstParty, 'openid phone');
      const password = async () =>
        (await server.api('POST', '/api/verifications/password', { token, body: { password: 'correct horse battery staple' } })).body
          .verificationRecordId as string;

      const taken = await provedBy(token, { type: 'phone', value: '+61 412 345 601' });
      const before = await snapshot(server.database.db);
      const conflict = await withStepUp(token, 'POST', '/primary-phone', await password(), { phone: '61412345601', newIdentifierVerificationRecordId: taken });
      expect({ status: conflict.status, code: conflict.body.code }).toEqual({ status: 422, code: 'user.phone_already_in_use' });
      expect(await snapshot(server.database.db)).toBe(before);

      const proof = await provedBy(token, { type: 'phone', value: '+61 412 345 602' });
      const added = await eventsDuring(server, receiver, async () => {
        expect(
          (await withStepUp(token, 'POST', '/primary-phone', await password(), { phone: '610412345602', newIdentifierVerificationRecordId: proof })).status,
        ).toBe(204);
      });
      expect(added.map(({ body }) => [body.changes, body.data.primaryPhone])).toEqual([[['primaryPhone'], '61412345602']]);

      // Phone is the only sign-up identifier: the account keeps its number.
      const method = (identifier: string) => ({ identifier, password: true, verificationCode: identifier !== 'username', isPasswordPrimary: true });
      await server.api('PATCH', '/api/sign-in-exp', {
        body: { signUp: { identifiers: ['phone'], password: true, verify: true }, signIn: { methods: [method('username'), method('phone')] } },
      });
      try {
        const refused = await withStepUp(token, 'DELETE', '/primary-phone', await password());
        expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 422, code: 'user.phone_required' });
      } finally {
        await server.api('PATCH', '/api/sign-in-exp', {
          body: {
            signUp: { identifiers: ['username', 'email', 'phone'], password: true, verify: true },
            signIn: { methods: ['username', 'email', 'phone'].map(method) },
          },
        });
      }
      const removed = await eventsDuring(server, receiver, async () => {
        expect((await withStepUp(token, 'DELETE', '/primary-phone', await password())).status).toBe(204);
      });
      expect(removed.map(({ body }) => [body.changes, body.data.primaryPhone])).toEqual([[['primaryPhone'], null]]);
    });

    it('needs the field’s scope (403), a step-up (401), and a well-formed body (400, 422 for an impossible number)', async () => {
      const token = await tokenFor(firstParty, 'openid profile');
      const full = await tokenFor(firstParty, 'openid email phone');
      const before = await snapshot(server.database.db);
      for (const [method, path] of [
        ['POST', '/primary-email'],
        ['DELETE', '/primary-email'],
        ['POST', '/primary-phone'],
        ['DELETE', '/primary-phone'],
      ] as const) {
        const body =
          method === 'POST'
            ? { [path.slice(9)]: path.endsWith('email') ? 'x@example.com' : '+61412345603', newIdentifierVerificationRecordId: 'r' }
            : undefined;
        expect((await withStepUp(token, method, path, 'anything', body)).body.code).toBe('auth.forbidden');
      }
      expect((await withStepUp(full, 'DELETE', '/primary-email', undefined)).status).toBe(401);
      expect((await withStepUp(full, 'DELETE', '/primary-email', 'made-up')).status).toBe(401);
      expect((await withStepUp(full, 'POST', '/primary-email', 'made-up', { email: 'not an address', newIdentifierVerificationRecordId: 'r' })).status).toBe(
        400,
      );
      expect((await verifications(full, '/verification-code', { identifier: { type: 'email', value: 'nope' } })).status).toBe(400);
      expect((await verifications(full, '/verification-code', { identifier: { type: 'phone', value: '+1 555' } })).body.code).toBe('user.invalid_phone');
      const sent = await verifications(full, '/verification-code', { identifier: { type: 'email', value: 'wrong.code@example.com' } });
      await mail.nextCode('wrong.code@example.com');
      const wrong = await verifications(full, '/verification-code/verify', {
        identifier: { type: 'email', value: 'wrong.code@example.com' },
        verificationId: sent.body.verificationRecordId,
        code: '000000',
      });
      expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 400, code: 'verification_code.code_mismatch' });
      expect(await snapshot(server.database.db)).toBe(before);
    });

    it('a code made with one application’s token is nothing to another’s, and a step-up code is spent once', async () => {
      const other = await server.create('/api/applications', {
        name: 'another first-party app',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      });
      const token = await tokenFor(firstParty, 'openid email phone profile');
      const otherToken = await tokenFor({ clientId: other.id, clientSecret: other.secret }, 'openid email phone profile');
      const { primaryEmail } = (await call(token, 'GET', '')).body as { primaryEmail: string };
      const own = await provedBy(token, { type: 'email', value: primaryEmail });
      const change = (stepUp: string, with_ = token) =>
        server.api('POST', '/api/my-account/password', {
          token: with_,
          body: { password: 'a brand new passphrase 3' },
          headers: { 'logto-verification-id': stepUp },
        });
      // Nor can the other application verify it: the code is bound to the user and the application that asked for it.
      const verify = await verifications(otherToken, '/verification-code/verify', {
        identifier: { type: 'email', value: primaryEmail },
        verificationId: own,
        code: '123456',
      });
      expect(verify.body.code).toBe('verification_record.not_found');
      expect((await change(own, otherToken)).status).toBe(401);
      expect((await change(own)).status).toBe(204);
      expect((await change(own)).status).toBe(401);
      await server.api('PATCH', `/api/users/${userId}/password`, { body: { password } });
    });
  });
});
