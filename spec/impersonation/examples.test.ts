import * as oauth from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { runImpersonationDemo } from '../../examples/impersonation-demo.js';
import { impersonate } from '../../examples/impersonation-flow.js';
import { startIntegratorBackend } from '../../examples/integrator-backend.js';
import { TestBrowser } from '../support/browser.js';
import { codeFlow } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const password = 'correct horse battery staple';
const callback = 'http://127.0.0.1:9/callback';

describe('examples: the integrator backend and the three-step impersonation flow', () => {
  let server: TestServer;
  let backend: Awaited<ReturnType<typeof startIntegratorBackend>>;
  const ids: Record<string, string> = {};
  let consoleApp: { id: string };

  beforeAll(async () => {
    server = await startTestServer('flow');
    const post = server.create;
    const backendApi = await post('/api/resources', { name: 'Support backend', indicator: 'https://backend.flow.test' });
    const impersonateScope = await post(`/api/resources/${backendApi.id}/scopes`, { name: 'impersonate:users' });
    const orders = await post('/api/resources', { name: 'Orders', indicator: 'https://orders.flow.test' });
    const readOrders = await post(`/api/resources/${orders.id}/scopes`, { name: 'read:orders' });
    const support = await post('/api/roles', { name: 'Support engineer', scopeIds: [impersonateScope.id] });
    const customer = await post('/api/roles', { name: 'Customer', scopeIds: [readOrders.id] });
    ids.engineer = (await post('/api/users', { username: 'engineer', password })).id;
    ids.intern = (await post('/api/users', { username: 'intern', password })).id;
    ids.customer = (await post('/api/users', { username: 'customer', password })).id;
    await post(`/api/users/${ids.engineer}/roles`, { roleIds: [support.id] });
    await post(`/api/users/${ids.customer}/roles`, { roleIds: [customer.id] });

    // The backend's credentials hold only the Management API's `impersonation` scope.
    const impersonator = await post('/api/roles', { name: 'Impersonation backend', type: 'MachineToMachine', scopeIds: ['management-api-impersonation'] });
    const backendApp = await post('/api/applications', { name: 'Integrator backend', type: 'MachineToMachine' });
    await post(`/api/applications/${backendApp.id}/roles`, { roleIds: [impersonator.id] });
    consoleApp = await post('/api/applications', {
      name: 'Support console',
      type: 'SPA',
      customClientMetadata: { allowTokenExchange: true },
      oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
    });

    backend = await startIntegratorBackend({
      issuer: server.issuer,
      managementApi: server.identity.managementApiIndicator,
      identityUrl: `http://localhost:${server.port}`,
      clientId: backendApp.id,
      clientSecret: backendApp.secret,
      audience: backendApi.indicator,
    });
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
  });

  /** The engineer's own tokens: it signs in to the support console through the sign-in page (code flow with PKCE). */
  async function tokensOf(userId: string, resource: string, scope: string) {
    const { body: user } = await server.api('GET', `/api/users/${userId}`);
    const flow = await codeFlow(new TestBrowser(server.url), {
      clientId: consoleApp.id,
      redirectUri: callback,
      scope,
      identifier: user.username,
      password,
      ...(resource && { resource }),
    });
    const config = await server.discover(consoleApp.id);
    return (
      await oauth.authorizationCodeGrant(
        config,
        flow.callback,
        { pkceCodeVerifier: flow.verifier, expectedState: 'state-1', expectedNonce: 'nonce-1' },
        resource ? { resource } : undefined,
      )
    ).access_token;
  }

  it('gives the engineer a token that represents the customer, names the engineer as actor, and carries the ticket', async () => {
    const result = await impersonate({
      issuer: server.issuer.replace(server.url, `http://localhost:${server.port}`),
      clientId: consoleApp.id,
      backendUrl: backend.url,
      actorAccessToken: await tokensOf(ids.engineer!, 'https://backend.flow.test', 'openid impersonate:users'),
      actorIdentityToken: await tokensOf(ids.engineer!, '', 'openid'),
      userId: ids.customer!,
      reason: 'order stuck',
      ticketId: 'T-100',
      resource: 'https://orders.flow.test',
      scope: 'read:orders',
    });
    expect(result.refresh_token).toBeUndefined();
    const { payload } = await jwtVerify(result.access_token, createRemoteJWKSet(new URL(`http://localhost:${server.port}/oidc/jwks`)), {
      issuer: server.issuer,
      audience: 'https://orders.flow.test',
    });
    expect(payload).toMatchObject({
      sub: ids.customer,
      act: { sub: ids.engineer },
      scope: 'read:orders',
      client_id: consoleApp.id,
      impersonation_id: expect.any(String),
    });

    const audit = await server.api('GET', `/api/impersonations?targetUserId=${ids.customer}`);
    expect(audit.body[0]).toMatchObject({
      kind: 'exchange.succeeded',
      actorUserId: ids.engineer,
      boundActorId: ids.engineer,
      impersonationId: payload.impersonation_id,
      reason: 'order stuck',
      ticketId: 'T-100',
      context: { ticketId: 'T-100', reason: 'order stuck', actor: ids.engineer },
    });
  });

  it('stops at the backend when the engineer may not impersonate', async () => {
    await expect(
      impersonate({
        issuer: server.issuer,
        clientId: consoleApp.id,
        backendUrl: backend.url,
        actorAccessToken: await tokensOf(ids.intern!, 'https://backend.flow.test', 'openid impersonate:users'),
        actorIdentityToken: 'unused',
        userId: ids.customer!,
        reason: 'curious',
        ticketId: 'T-0',
        resource: 'https://orders.flow.test',
      }),
    ).rejects.toThrow('impersonation refused: impersonate:users is required');
  });

  it('npm run example:impersonation: from nothing to an impersonated token against a running server', async () => {
    const { engineerId, customerId, claims } = await runImpersonationDemo({
      identityUrl: server.url,
      managementClientId: server.admin.clientId,
      managementClientSecret: server.admin.clientSecret,
    });
    expect(claims).toMatchObject({ sub: customerId, act: { sub: engineerId }, scope: 'read:orders', impersonation_id: expect.any(String) });
  });
});
