import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * The outside attack's third finding: `POST /api/my-account/password` hashed the new password before
 * it looked at the step-up, outside the hash budget and the concurrent-hash cap, so any signed-in
 * user could keep the hash pool busy with made-up `logto-verification-id`s. Now every password hash
 * or check an end user causes (the pages, the Experience API, the Account API) counts toward the
 * client address's budget and takes a slot of the one per-process cap, after the cheap checks.
 */
describe('password hashes an end user causes: cheap checks first, then the budget and the cap (Account API)', () => {
  let server: TestServer;
  let token: string;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer('password-hashing', { TRUST_PROXY: 'true' });
    const app = await server.create('/api/applications', {
      name: 'Account app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    userId = (await server.create('/api/users', { username: 'hash_budget_owner', password })).id;
    const browser = new TestBrowser(server.url, '198.51.100.200');
    const flow = await codeFlow(browser, { clientId: app.id, redirectUri, scope: 'openid profile', identifier: 'hash_budget_owner', password });
    token = (await redeem(server, { clientId: app.id, clientSecret: app.secret }, flow)).access_token;
  });
  afterAll(async () => {
    await server.close();
  });

  const from = (address: string) => ({ 'x-forwarded-for': address });
  /** The account's password now (a test changes it). */
  let current = password;
  const stepUp = (address: string) => server.api('POST', '/api/verifications/password', { token, body: { password: current }, headers: from(address) });
  const changePassword = (address: string, verificationId: string, next: string) =>
    server.api('POST', '/api/my-account/password', { token, body: { password: next }, headers: { ...from(address), 'logto-verification-id': verificationId } });
  const stillHas = async (candidate: string) =>
    (await server.api('POST', `/api/users/${userId}/password/verify`, { body: { password: candidate } })).status === 204;

  it('a step-up check counts toward the address’s hash budget; past it, a made-up step-up is 401 and a real one 429, and nothing changes', async () => {
    const flooded = '203.0.113.77';
    // The budget is 30 hashes a minute per address: the step-up's own password check spends it.
    const records: string[] = [];
    for (let attempt = 0; attempt < 30; attempt += 1) {
      const answer = await stepUp(flooded);
      expect(answer.status).toBe(201);
      records.push(answer.body.verificationRecordId);
    }
    const over = await stepUp(flooded);
    expect({ status: over.status, code: over.body.code }).toEqual({ status: 429, code: 'session.too_many_attempts' });

    // Checked before anything costly: a made-up step-up is refused as such, whatever the budget.
    const madeUp = await changePassword(flooded, 'made-up-verification-id', 'an entirely new passphrase');
    expect({ status: madeUp.status, code: madeUp.body.code }).toEqual({ status: 401, code: 'verification_record.permission_denied' });

    // A real one: the hash goes through the spent budget (429), and neither the password nor the step-up is spent.
    const held = await changePassword(flooded, records[0]!, 'an entirely new passphrase');
    expect({ status: held.status, code: held.body.code }).toEqual({ status: 429, code: 'session.too_many_attempts' });
    expect(await stillHas(password)).toBe(true);
    const elsewhere = await changePassword('203.0.113.78', records[0]!, 'an entirely new passphrase');
    expect(elsewhere.status).toBe(204);
    current = 'an entirely new passphrase';
    expect(await stillHas(current)).toBe(true);
  });

  it('a flood of made-up step-ups is refused without a hash: the address keeps its whole budget', async () => {
    const flooding = '203.0.113.90';
    const refused = await Promise.all(Array.from({ length: 40 }, () => changePassword(flooding, 'made-up-verification-id', 'flooding the hash pool')));
    expect(new Set(refused.map(({ status }) => status))).toEqual(new Set([401]));
    // Had each of the 40 been hashed, the budget (30) would be gone; it is whole.
    const answers = await Promise.all(Array.from({ length: 2 }, () => stepUp(flooding)));
    expect(answers.map(({ status }) => status)).toEqual([201, 201]);
  });
});
