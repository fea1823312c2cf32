import * as oauth from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
const jwtType = 'urn:ietf:params:oauth:token-type:jwt';
const password = 'correct horse battery staple';
const callback = 'https://app.test/cb';
const orders = 'https://orders.test';
const billing = 'https://billing.test';

/**
 * Logto's access-token exchange (its integration-tests api/oidc/token-exchange/
 * access-token-exchange.test.ts and jwt-access-token.test.ts; core src/oidc/grants/token-exchange/
 * account.ts): a user's own access token, exchanged by the application it was issued to, for a
 * token of the same user for another API resource, with what the user's roles give there now.
 * What it must never become: a way around a sign-in's end, a resource server's key to the user's
 * other APIs, or an impersonated token without its actor.
 */
describe("token exchange of a user's own access token", () => {
  let server: TestServer;
  let app: { id: string; secret: string };
  let other: { id: string; secret: string };
  let ada: string;
  let billingRole: { id: string };

  beforeAll(async () => {
    server = await startTestServer('own-token-exchange');
    const post = server.create;
    const ordersApi = await post('/api/resources', { name: 'Orders', indicator: orders, accessTokenTtl: 3600 });
    const billingApi = await post('/api/resources', { name: 'Billing', indicator: billing, accessTokenTtl: 86400 });
    const readOrders = await post(`/api/resources/${ordersApi.id}/scopes`, { name: 'read:orders' });
    const readBilling = await post(`/api/resources/${billingApi.id}/scopes`, { name: 'read:billing' });
    await post(`/api/resources/${billingApi.id}/scopes`, { name: 'write:billing' });
    const orderRole = await post('/api/roles', { name: 'Shopper', scopeIds: [readOrders.id] });
    billingRole = await post('/api/roles', { name: 'Payer', scopeIds: [readBilling.id] });
    ada = (await post('/api/users', { username: 'ada', password })).id;
    await post(`/api/users/${ada}/roles`, { roleIds: [orderRole.id, billingRole.id] });
    const application = (name: string) =>
      post('/api/applications', {
        name,
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [callback] },
        customClientMetadata: { allowTokenExchange: true },
      });
    app = await application('Shop');
    other = await application('Orders service');
  });
  afterAll(async () => {
    await server.close();
  });

  /** Ada signs in to `client` for the Orders API; answers her access token (a JWT) for it. */
  async function signIn(client = app, username = 'ada') {
    const flow = await codeFlow(new TestBrowser(server.url), {
      clientId: client.id,
      redirectUri: callback,
      scope: 'openid read:orders',
      identifier: username,
      password,
      resource: orders,
    });
    return (await redeem(server, { clientId: client.id, clientSecret: client.secret }, flow, orders)).access_token;
  }
  const exchange = async (subjectToken: string, parameters: Record<string, string> = {}, client = app) =>
    oauth.genericGrantRequest(await server.discover(client.id, client.secret), grantType, {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: billing,
      scope: 'read:billing write:billing',
      ...parameters,
    });
  const refusal = (description: string | RegExp) => ({ error: 'invalid_request', error_description: expect.stringMatching(description) });
  const verify = (token: string, audience = billing) =>
    jwtVerify(token, createRemoteJWKSet(new URL(`${server.url}/oidc/jwks`)), { issuer: server.issuer, audience, typ: 'at+jwt' });

  it('exchanges it, as often as asked, for a token to another API resource with the permissions her roles give there (Logto access-token-exchange.test.ts)', async () => {
    const own = await signIn();
    for (let round = 0; round < 2; round += 1) {
      const issued = await exchange(own);
      expect(issued).toMatchObject({ token_type: 'bearer', issued_token_type: accessTokenType, scope: 'read:billing' });
      const { payload } = await verify(issued.access_token);
      // Her own token: her, this application, no actor and no impersonation.
      expect(payload).toMatchObject({ sub: ada, client_id: app.id, scope: 'read:billing' });
      expect(payload).not.toHaveProperty('act');
      expect(payload).not.toHaveProperty('impersonation_id');
    }
  });

  it("takes RFC 8693 §3's jwt type for the same token (Logto jwt-access-token.test.ts)", async () => {
    const issued = await exchange(await signIn(), { subject_token_type: jwtType });
    expect((await verify(issued.access_token)).payload.sub).toBe(ada);
  });

  it('never outlives the token it was exchanged for, whatever the resource allows', async () => {
    const own = await signIn();
    const issued = await exchange(own);
    // Billing allows a day; her Orders token lives an hour.
    expect(decodeJwt(issued.access_token).exp).toBeLessThanOrEqual(decodeJwt(own).exp!);
    const again = await exchange(issued.access_token, { resource: orders, scope: 'read:orders' });
    expect(decodeJwt(again.access_token).exp).toBeLessThanOrEqual(decodeJwt(own).exp!);
  });

  it('grants what her roles give now: a role taken away after the sign-in is not in the exchanged token', async () => {
    const own = await signIn();
    await server.api('DELETE', `/api/users/${ada}/roles/${billingRole.id}`);
    try {
      expect((await exchange(own)).scope).toBe('');
    } finally {
      await server.create(`/api/users/${ada}/roles`, { roleIds: [billingRole.id] });
    }
  });

  it('is refused to any other application than the one the token was issued to, with invalid_request (RFC 8693 §2.2.2)', async () => {
    // The Orders service received Ada's token as its resource server would; it must not turn it into her Billing token.
    const own = await signIn();
    await expect(exchange(own, {}, other)).rejects.toMatchObject(refusal('issued to another client'));
  });

  it('refuses what is not an access token of this provider: garbage, a forged signature, an ID token, a client_credentials token (RFC 8693 §2.2.2)', async () => {
    const own = await signIn();
    const [header, payload] = own.split('.');
    const flow = await codeFlow(new TestBrowser(server.url), { clientId: app.id, redirectUri: callback, scope: 'openid', identifier: 'ada', password });
    const idToken = (await redeem(server, { clientId: app.id, clientSecret: app.secret }, flow)).id_token!;
    const machine = await server.create('/api/applications', { name: 'Machine', type: 'MachineToMachine', customClientMetadata: { allowTokenExchange: true } });
    const machineToken = (await oauth.clientCredentialsGrant(await server.discover(machine.id, machine.secret), { resource: billing })).access_token;
    for (const token of ['invalid.access.token', `${header}.${payload}.invalid_signature`, idToken]) {
      await expect(exchange(token)).rejects.toMatchObject(refusal(/invalid|expired/));
    }
    await expect(exchange(machineToken, {}, machine)).rejects.toMatchObject(refusal(/invalid|expired/));
  });

  it('refuses an impersonated token: its user is someone else, and trading it would shed its `act`', async () => {
    const { body } = await server.api('POST', '/api/subject-tokens', { body: { userId: ada } });
    const impersonated = await oauth.genericGrantRequest(await server.discover(app.id, app.secret), grantType, {
      subject_token: body.subjectToken,
      subject_token_type: accessTokenType,
      resource: orders,
      scope: 'read:orders',
    });
    await expect(exchange(impersonated.access_token)).rejects.toMatchObject(refusal(/invalid|expired/));
  });

  it('refuses the token of a user suspended since, and an actor_token beside one', async () => {
    const own = await signIn();
    await expect(exchange(own, { actor_token: own, actor_token_type: accessTokenType })).rejects.toMatchObject(refusal('actor_token is not accepted'));
    await server.api('PATCH', `/api/users/${ada}/is-suspended`, { body: { isSuspended: true } });
    try {
      await expect(exchange(own)).rejects.toMatchObject(refusal(/invalid|expired/));
    } finally {
      await server.api('PATCH', `/api/users/${ada}/is-suspended`, { body: { isSuspended: false } });
    }
  });

  it('records no impersonation: the audit stays as it was', async () => {
    const before = (await server.api('GET', '/api/impersonations')).body as unknown[];
    await exchange(await signIn());
    expect((await server.api('GET', '/api/impersonations')).body).toHaveLength(before.length);
  });
});
