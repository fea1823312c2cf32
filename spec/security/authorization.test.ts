import * as oauth from 'openid-client';
import { decodeJwt } from 'jose';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem, signUpWithApi, userWith as createUserWith } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const strong = 'correct horse battery staple';

/**
 * What a user may get is what its roles hold, on every grant. These tests play the attacker of
 * the outside attack report: someone who can reach a sign-in page signs up and asks for more.
 */
describe('authorization: every token carries only what its subject holds', () => {
  let server: TestServer;
  let ordersIndicator: string;
  let readId: string;
  let writeId: string;
  let readerRoleId: string;
  let web: { clientId: string; clientSecret: string };
  let spa: { clientId: string; clientSecret: string };
  let thirdParty: { clientId: string; clientSecret: string };
  let ip = 20;
  const nextIp = () => `203.0.113.${(ip += 1)}`;

  beforeAll(async () => {
    server = await startTestServer('authz', { TRUST_PROXY: '1' });
    ordersIndicator = 'https://orders.example.com';
    const orders = await server.create('/api/resources', { name: 'Orders', indicator: ordersIndicator });
    readId = (await server.create(`/api/resources/${orders.id}/scopes`, { name: 'read:orders' })).id;
    writeId = (await server.create(`/api/resources/${orders.id}/scopes`, { name: 'write:orders' })).id;
    // A same-named permission of another resource grants nothing on Orders.
    const other = await server.create('/api/resources', { name: 'Other', indicator: 'https://other.example.com' });
    const otherWrite = await server.create(`/api/resources/${other.id}/scopes`, { name: 'write:orders' });
    readerRoleId = (await server.create('/api/roles', { name: 'reader', scopeIds: [readId, otherWrite.id] })).id;
    const app = async (body: Record<string, unknown>) => {
      const created = await server.create('/api/applications', { oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] }, ...body });
      return { clientId: created.id as string, clientSecret: created.secret as string };
    };
    web = await app({ name: 'Web', type: 'Traditional' });
    spa = await app({ name: 'SPA', type: 'SPA' });
    thirdParty = await app({ name: 'Third party', type: 'Traditional', isThirdParty: true });
  });
  afterAll(async () => {
    await server.close();
  });

  const userWith = (username: string, roleIds: string[] = []) => createUserWith(server, username, strong, roleIds);
  const scopesOf = (accessToken: string) =>
    String(decodeJwt(accessToken).scope ?? '')
      .split(' ')
      .filter(Boolean)
      .sort();

  it('a user who signs up through the pages cannot get a Management API token through the code flow (invalid_target)', async () => {
    await signUpWithApi(server, web.clientId, redirectUri, 'mallory', strong, nextIp());
    // The authorization request itself is refused, before anyone signs in.
    const browser = new TestBrowser(server.url, nextIp());
    const authorize = new URL(`${server.url}/oidc/auth`);
    authorize.search = new URLSearchParams({
      client_id: web.clientId,
      response_type: 'code',
      scope: 'openid all',
      redirect_uri: redirectUri,
      state: 's',
      resource: server.identity.managementApiIndicator,
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    }).toString();
    const { url } = await browser.follow(authorize, redirectUri);
    expect(url.searchParams.get('error')).toBe('invalid_target');
  });

  it('a user without roles gets no permission of a resource through the code flow, only identity scopes', async () => {
    await userWith('no_roles');
    const flow = await codeFlow(new TestBrowser(server.url, nextIp()), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid profile read:orders write:orders',
      resource: ordersIndicator,
      identifier: 'no_roles',
      password: strong,
    });
    const tokens = await redeem(server, web, flow, ordersIndicator);
    expect(scopesOf(tokens.access_token)).toEqual([]);
    expect(decodeJwt(tokens.access_token).aud).toBe(ordersIndicator);
  });

  it('a user gets requested ∩ what its roles hold on that resource, by permission id, through the code flow', async () => {
    await userWith('reader_one', [readerRoleId]);
    const flow = await codeFlow(new TestBrowser(server.url, nextIp()), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid read:orders write:orders',
      resource: ordersIndicator,
      identifier: 'reader_one',
      password: strong,
    });
    const tokens = await redeem(server, web, flow, ordersIndicator);
    // write:orders of the other resource is held, but is not Orders' write:orders.
    expect(scopesOf(tokens.access_token)).toEqual(['read:orders']);
  });

  it('a refresh re-checks: a permission removed since is dropped, and a suspended or deleted user gets invalid_grant', async () => {
    const userId = await userWith('refresher', [readerRoleId]);
    const writerRole = await server.create('/api/roles', { name: 'writer-refresh', scopeIds: [writeId] });
    await server.create(`/api/users/${userId}/roles`, { roleIds: [writerRole.id] });
    const flow = await codeFlow(new TestBrowser(server.url, nextIp()), {
      clientId: spa.clientId,
      redirectUri,
      scope: 'openid offline_access read:orders write:orders',
      resource: ordersIndicator,
      identifier: 'refresher',
      password: strong,
      // OIDC Core §11: offline_access is granted only with prompt=consent.
      prompt: 'consent',
    });
    const config = await server.discover(spa.clientId);
    const first = await oauth.authorizationCodeGrant(
      config,
      flow.callback,
      { pkceCodeVerifier: flow.verifier, expectedState: 'state-1', expectedNonce: 'nonce-1' },
      { resource: ordersIndicator },
    );
    expect(scopesOf(first.access_token)).toEqual(['read:orders', 'write:orders']);
    expect(first.refresh_token).toEqual(expect.any(String));

    expect((await server.api('DELETE', `/api/users/${userId}/roles/${writerRole.id}`)).status).toBe(204);
    const second = await oauth.refreshTokenGrant(config, first.refresh_token!, { resource: ordersIndicator });
    expect(scopesOf(second.access_token)).toEqual(['read:orders']);

    await server.api('PATCH', `/api/users/${userId}/is-suspended`, { body: { isSuspended: true } });
    await expect(oauth.refreshTokenGrant(config, second.refresh_token ?? first.refresh_token!, { resource: ordersIndicator })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('a refresh of a deleted user is invalid_grant', async () => {
    const userId = await userWith('deleted_later', [readerRoleId]);
    const flow = await codeFlow(new TestBrowser(server.url, nextIp()), {
      clientId: spa.clientId,
      redirectUri,
      scope: 'openid offline_access read:orders',
      resource: ordersIndicator,
      identifier: 'deleted_later',
      password: strong,
      prompt: 'consent',
    });
    const config = await server.discover(spa.clientId);
    const tokens = await oauth.authorizationCodeGrant(
      config,
      flow.callback,
      { pkceCodeVerifier: flow.verifier, expectedState: 'state-1', expectedNonce: 'nonce-1' },
      { resource: ordersIndicator },
    );
    expect((await server.api('DELETE', `/api/users/${userId}`)).status).toBe(204);
    await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!, { resource: ordersIndicator })).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('the consent page of a third-party application offers only the permissions the user holds, and the token carries no more', async () => {
    await userWith('consents_reader', [readerRoleId]);
    let page = '';
    const flow = await codeFlow(new TestBrowser(server.url, nextIp()), {
      clientId: thirdParty.clientId,
      redirectUri,
      scope: 'openid read:orders write:orders',
      resource: ordersIndicator,
      identifier: 'consents_reader',
      password: strong,
      onConsentPage: (html) => {
        page = html;
      },
    });
    expect(page).toContain('read:orders');
    expect(page).not.toContain('write:orders');
    const tokens = await redeem(server, thirdParty, flow, ordersIndicator);
    expect(scopesOf(tokens.access_token)).toEqual(['read:orders']);
  });

  it("an application's own machine-to-machine roles give a user-bound token nothing", async () => {
    const m2mRole = await server.create('/api/roles', { name: 'm2m-orders', type: 'MachineToMachine', scopeIds: [writeId] });
    const exchanger = await server.create('/api/applications', {
      name: 'Exchanger with roles',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    // Only machine-to-machine applications take roles; a Traditional one is refused.
    expect((await server.api('POST', `/api/applications/${exchanger.id}/roles`, { body: { roleIds: [m2mRole.id] } })).status).toBe(422);
    await userWith('plain_user');
    const flow = await codeFlow(new TestBrowser(server.url, nextIp()), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid write:orders',
      resource: ordersIndicator,
      identifier: 'plain_user',
      password: strong,
    });
    expect(scopesOf((await redeem(server, web, flow, ordersIndicator)).access_token)).toEqual([]);
  });
});
