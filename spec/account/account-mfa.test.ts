import { generate } from 'otplib';

import { TestBrowser } from '../support/browser.js';
import { snapshot } from '../support/db.js';
import { codeFlow, redeem } from '../support/flows.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const totp = (secret: string, at = Date.now()) => generate({ secret, epoch: Math.floor(at / 1000) });

/**
 * Logto's Account API for MFA (packages/core/src/routes/account/mfa-verifications.ts): the user's
 * own factors with the `identities` scope, each change behind a step-up and announced.
 */
describe('the Account API: MFA factors (/api/my-account/mfa-verifications)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let client: { clientId: string; clientSecret: string };
  let userId: string;
  let token: string;
  let narrow: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('account-mfa', { ...hookTestEnv, TRUST_PROXY: 'true' });
    await subscribe(server, receiver, ['User.Data.Updated']);
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp', 'WebAuthn', 'BackupCode'], policy: 'NoPrompt' } } })).status).toBe(
      200,
    );
    const application = await server.create('/api/applications', {
      name: 'account mfa',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    client = { clientId: application.id, clientSecret: application.secret };
    userId = (await server.create('/api/users', { username: 'mfa_self_service', password })).id;
    const tokenFor = async (scope: string, ip: string) => {
      const flow = await codeFlow(new TestBrowser(server.url, ip), { clientId: client.clientId, redirectUri, scope, identifier: 'mfa_self_service', password });
      return (await redeem(server, client, flow)).access_token;
    };
    token = await tokenFor('openid identities', '198.51.100.70');
    narrow = await tokenFor('openid profile', '198.51.100.71');
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const call = (method: string, path: string, body?: unknown, stepUp?: string, with_ = token) =>
    server.api(method, `/api/my-account/mfa-verifications${path}`, { token: with_, body, ...(stepUp && { headers: { 'logto-verification-id': stepUp } }) });
  const stepUp = async () => (await server.api('POST', '/api/verifications/password', { token, body: { password } })).body.verificationRecordId as string;

  it('needs the identities scope (403) and a step-up for every change (401), writing nothing without them', async () => {
    expect((await call('GET', '')).body).toEqual([]);
    const before = await snapshot(server.database.db);
    expect((await call('GET', '', undefined, undefined, narrow)).body.code).toBe('auth.forbidden');
    const { secret } = (await call('POST', '/totp-secret/generate')).body as { secret: string };
    expect(secret).toMatch(/^[A-Z2-7]{26,}$/);
    const body = { type: 'Totp', secret, code: await totp(secret) };
    expect((await call('POST', '', body, await stepUp(), narrow)).status).toBe(403);
    expect((await call('POST', '', body)).body.code).toBe('verification_record.permission_denied');
    expect((await call('POST', '', body, 'made-up')).status).toBe(401);
    expect((await call('POST', '', { type: 'Totp' }, await stepUp())).status).toBe(400);
    expect((await call('POST', '', { type: 'Totp', secret, code: '12345' }, await stepUp())).status).toBe(400);
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('adds an authenticator app (proved by a code), replaces it, adds backup codes, and removes a factor; each announced without a secret', async () => {
    const { secret } = (await call('POST', '/totp-secret/generate')).body as { secret: string };
    const wrong = await call(
      'POST',
      '',
      { type: 'Totp', secret, code: (Number(await totp(secret)) + 500_000).toString().padStart(6, '0').slice(-6) },
      await stepUp(),
    );
    expect(wrong.body.code).toBe('session.mfa.invalid_totp_code');
    const events = await eventsDuring(server, receiver, async () => {
      expect((await call('POST', '', { type: 'Totp', secret, code: await totp(secret) }, await stepUp())).status).toBe(204);
    });
    expect(events.map(({ body }) => [body.event, body.changes, body.clientId])).toEqual([['User.Data.Updated', ['mfaVerifications'], client.clientId]]);
    expect(events[0]!.raw).not.toContain(secret);
    expect((await call('POST', '', { type: 'Totp', secret, code: await totp(secret) }, await stepUp())).body.code).toBe('user.totp_already_in_use');

    const next = (await call('POST', '/totp-secret/generate')).body.secret as string;
    expect((await call('PUT', '/totp', { secret: next, code: await totp(next) }, await stepUp())).status).toBe(204);
    const [replaced] = (await call('GET', '')).body as Array<{ id: string; type: string }>;
    expect(replaced).toMatchObject({ type: 'Totp' });

    const { codes } = (await call('POST', '/backup-codes/generate')).body as { codes: string[] };
    expect(codes).toHaveLength(10);
    expect((await call('POST', '', { type: 'BackupCode', codes }, await stepUp())).status).toBe(204);
    expect((await call('POST', '', { type: 'BackupCode', codes }, await stepUp())).body.code).toBe('user.backup_code_already_in_use');
    // Stored hashed: what can be read back is when each was used, never the code.
    const read = (await call('GET', '/backup-codes')).body as { codes: Array<Record<string, unknown>> };
    expect(read.codes).toEqual(Array.from({ length: 10 }, () => ({ usedAt: null })));

    // Only a passkey has a name; another's id, or an unknown one, is refused.
    expect((await call('PATCH', `/${replaced!.id}/name`, { name: 'Phone' }, await stepUp())).body.code).toBe('verification_record.not_found');
    expect((await call('DELETE', '/no-such-factor', undefined, await stepUp())).body.code).toBe('verification_record.not_found');
    const removed = await eventsDuring(server, receiver, async () => {
      expect((await call('DELETE', `/${replaced!.id}`, undefined, await stepUp())).status).toBe(204);
    });
    expect(removed.map(({ body }) => body.changes)).toEqual([['mfaVerifications']]);
    expect(((await call('GET', '')).body as Array<{ type: string }>).map(({ type }) => type)).toEqual(['BackupCode']);
    expect((await server.api('GET', `/api/users/${userId}/mfa-verifications`)).body).toHaveLength(1);
  });
});
