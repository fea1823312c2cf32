import { createRemoteJWKSet, jwtVerify } from 'jose';

import { TestBrowser, startAuthorization } from '../support/browser.js';
import { codeFlow, redeem, userWith } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'https://app.sign-in-context.test/callback';
const indicator = 'https://api.sign-in-context.test';

/**
 * The JWT customizer's `interaction` context, as Logto's (`jwtCustomizerUserInteractionContextGuard`
 * in its schemas, `packages/core/src/oidc/extra-token-claims.ts`): a user's access token carries,
 * for the script, what the sign-in behind it proved: its event, the account, and its verification
 * records without a secret, and only those that prove something about that account.
 */
describe('the JWT customizer sees the sign-in behind a token', () => {
  let server: TestServer;
  let app: { id: string };
  const passwords = { alice: 'alice-Passw0rd-long', bob: 'bob-Passw0rd-longer' };
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    server = await startTestServer('sign-in-context');
    await server.create('/api/resources', { name: 'API', indicator });
    app = await server.create('/api/applications', { name: 'spa', type: 'SPA', oidcClientMetadata: { redirectUris: [redirectUri] } });
    alice = await userWith(server, 'alice', passwords.alice);
    bob = await userWith(server, 'bob', passwords.bob);
    const script = 'function getCustomJwtClaims({ context }) { return { signed_in: context.interaction ?? null } }';
    expect((await server.api('PUT', '/api/configs/jwt-customizer/access-token', { body: { script } })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
  });

  const claimsOf = async (accessToken: string) =>
    (await jwtVerify(accessToken, createRemoteJWKSet(new URL(`http://localhost:${server.port}/oidc/jwks`)), { audience: indicator })).payload;

  it('gives a password sign-in through the pages: the event, the account and its Password record, no secret', async () => {
    const browser = new TestBrowser(server.url);
    const flow = await codeFlow(browser, {
      clientId: app.id,
      redirectUri,
      scope: 'openid',
      identifier: 'alice',
      password: passwords.alice,
      resource: indicator,
    });
    const tokens = await redeem(server, { clientId: app.id }, flow, indicator);
    const { signed_in } = await claimsOf(tokens.access_token);
    expect(signed_in).toEqual({
      interactionEvent: 'SignIn',
      userId: alice,
      verificationRecords: [{ id: expect.any(String), type: 'Password', userId: alice, verified: true }],
    });
    expect(JSON.stringify(signed_in)).not.toMatch(/passwordHash|scrypt|alice-Passw0rd/);
  });

  it('leaves out a proof for another account: a password verified for alice, then bob identified, gives bob’s token only bob’s record', async () => {
    const browser = new TestBrowser(server.url, '198.51.100.21');
    const auth = await startAuthorization(browser, app.id, redirectUri, 'openid', { resource: indicator });
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    const password = (username: 'alice' | 'bob') =>
      browser.json('POST', '/api/experience/verification/password', { identifier: { type: 'username', value: username }, password: passwords[username] });
    const forAlice = await password('alice');
    const forBob = await password('bob');
    expect([forAlice.status, forBob.status]).toEqual([200, 200]);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: forBob.body.verificationId })).status).toBe(204);
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    const { url } = await browser.follow(submitted.body.redirectTo, redirectUri);
    const tokens = await redeem(server, { clientId: app.id }, { callback: url, verifier: auth.verifier }, indicator);
    const { sub, signed_in } = await claimsOf(tokens.access_token);
    expect(sub).toBe(bob);
    expect(signed_in).toEqual({
      interactionEvent: 'SignIn',
      userId: bob,
      verificationRecords: [{ id: forBob.body.verificationId, type: 'Password', userId: bob, verified: true }],
    });
    expect(JSON.stringify(signed_in)).not.toContain(alice);
    expect(JSON.stringify(signed_in)).not.toContain(forAlice.body.verificationId);
  });

  it('gives a registration its event and the new username, never the password', async () => {
    const browser = new TestBrowser(server.url, '198.51.100.22');
    const auth = await startAuthorization(browser, app.id, redirectUri, 'openid', { resource: indicator });
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const verified = await browser.json('POST', '/api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: 'carol' },
      password: 'Tr4vel-Lantern-Quiet',
    });
    expect(verified.status).toBe(200);
    // A registration's identification creates the account: 201, as Logto's.
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(201);
    const submitted = await browser.json('POST', '/api/experience/submit');
    const { url } = await browser.follow(submitted.body.redirectTo, redirectUri);
    const tokens = await redeem(server, { clientId: app.id }, { callback: url, verifier: auth.verifier }, indicator);
    const { sub, signed_in } = await claimsOf(tokens.access_token);
    expect(signed_in).toEqual({
      interactionEvent: 'Register',
      userId: sub,
      verificationRecords: [{ id: verified.body.verificationId, type: 'NewPasswordIdentity', identifier: { type: 'username', value: 'carol' } }],
    });
    expect(JSON.stringify(signed_in)).not.toMatch(/Tr4vel-Lantern|passwordHash/);
  });

  it('gives a token exchange no interaction (it has no sign-in behind it)', async () => {
    const exchanger = await server.create('/api/applications', { name: 'exchanger', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    const { body } = await server.api('POST', '/api/subject-tokens', { body: { userId: alice } });
    const config = await server.discover(exchanger.id);
    const { genericGrantRequest } = await import('openid-client');
    const response = await genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
      subject_token: body.subjectToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: indicator,
    });
    expect((await claimsOf(response.access_token)).signed_in).toBeNull();
  });
});
