import * as oauth from 'openid-client';
import { SignJWT, decodeJwt, importJWK, type JWK } from 'jose';

import { userWith as createUserWith } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const strong = 'correct horse battery staple';
const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * The Management API accepts only what is meant for it: machine-to-machine tokens of live
 * applications, for the scopes they still hold; an impersonation-only backend reaches one route.
 */
describe('authorization: who may call the Management API', () => {
  let server: TestServer;
  let readerRoleId: string;
  let web: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    server = await startTestServer('authz-api', { TRUST_PROXY: '1' });
    const orders = await server.create('/api/resources', { name: 'Orders', indicator: 'https://orders.example.com' });
    const readId = (await server.create(`/api/resources/${orders.id}/scopes`, { name: 'read:orders' })).id;
    readerRoleId = (await server.create('/api/roles', { name: 'reader', scopeIds: [readId] })).id;
    const created = await server.create('/api/applications', {
      name: 'Web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    web = { clientId: created.id, clientSecret: created.secret };
  });
  afterAll(async () => {
    await server.close();
  });

  const userWith = (username: string, roleIds: string[] = []) => createUserWith(server, username, strong, roleIds);

  describe('the Management API is for machine-to-machine applications only', () => {
    let m2mScopeId: string;
    beforeAll(async () => {
      const scopes = await server.api('GET', '/api/resources/management-api/scopes');
      m2mScopeId = scopes.body.find((scope: { name: string }) => scope.name === 'all').id;
    });

    it('refuses Management API permissions on a User role: POST /api/roles and POST /api/roles/:id/scopes answer 400', async () => {
      const created = await server.api('POST', '/api/roles', { body: { name: 'sneaky', scopeIds: [m2mScopeId] } });
      expect(created).toMatchObject({ status: 400, body: { code: 'role.management_api_scopes_not_assignable_to_user_role' } });
      expect((await server.api('GET', '/api/roles?search=sneaky')).body).toEqual([]);
      const role = await server.create('/api/roles', { name: 'user-role' });
      const added = await server.api('POST', `/api/roles/${role.id}/scopes`, { body: { scopeIds: [m2mScopeId] } });
      expect(added).toMatchObject({ status: 400, body: { code: 'role.management_api_scopes_not_assignable_to_user_role' } });
      // A machine-to-machine role may hold them.
      expect((await server.api('POST', '/api/roles', { body: { name: 'ops', type: 'MachineToMachine', scopeIds: [m2mScopeId] } })).status).toBe(200);
    });

    it('answers 403 to a user-bound token for its audience, even one signed by this provider with scope all', async () => {
      const userId = await userWith('forged_admin');
      const [keys] = await server.database.db.collection<{ _id: string; keys: JWK[] }>('system').find({ _id: 'signing' }).toArray();
      const jwk = keys!.keys.find(({ alg }) => alg === 'ES256')!;
      const token = await new SignJWT({ scope: 'all', client_id: web.clientId })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: jwk.kid! })
        .setIssuer(server.issuer)
        .setAudience(server.identity.managementApiIndicator)
        .setSubject(userId)
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti('user-bound')
        .sign(await importJWK(jwk, 'ES256'));
      expect(await server.api('GET', '/api/users', { token })).toMatchObject({ status: 403, body: { code: 'auth.forbidden' } });
    });

    it("stops accepting a deleted application's token, and one whose application lost the permission", async () => {
      const ops = await server.create('/api/applications', { name: 'Short-lived ops', type: 'MachineToMachine' });
      await server.create(`/api/applications/${ops.id}/roles`, { roleIds: ['management-api-access'] });
      const config = await server.discover(ops.id, ops.secret);
      const issue = async () => (await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator })).access_token;
      const before = await issue();
      expect((await server.api('GET', '/api/users', { token: before })).status).toBe(200);
      expect((await server.api('DELETE', `/api/applications/${ops.id}/roles/management-api-access`)).status).toBe(204);
      expect(await server.api('GET', '/api/users', { token: before })).toMatchObject({ status: 403, body: { code: 'auth.forbidden' } });

      await server.create(`/api/applications/${ops.id}/roles`, { roleIds: ['management-api-access'] });
      const again = await issue();
      expect((await server.api('DELETE', `/api/applications/${ops.id}`)).status).toBe(204);
      expect(await server.api('GET', '/api/users', { token: again })).toMatchObject({ status: 401, body: { code: 'auth.invalid_token' } });
    });

    it('issues Management API tokens for MANAGEMENT_API_TOKEN_TTL (600 s by default)', async () => {
      const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
      const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
      expect(tokens.expires_in).toBe(600);
      const { exp, iat } = decodeJwt(tokens.access_token);
      expect(exp! - iat!).toBe(600);
    });
  });

  it('records the client address the trusted proxy saw, not the left end of X-Forwarded-For that the client wrote', async () => {
    const answer = await server.api('POST', '/api/roles', { body: { name: 'behind-proxy' }, headers: { 'x-forwarded-for': '1.2.3.4, 198.51.100.99' } });
    expect(answer.status).toBe(200);
    const [change] = await server.database.db.collection('changes').find({ 'origin.path': '/api/roles', id: answer.body.id }).toArray();
    expect(change?.origin.ip).toBe('198.51.100.99');
  });

  describe('an impersonation-only backend', () => {
    let backend: { clientId: string; clientSecret: string };
    let backendToken: string;
    let exchanger: { clientId: string; clientSecret: string };

    beforeAll(async () => {
      const role = await server.create('/api/roles', { name: 'impersonation-only', type: 'MachineToMachine', scopeIds: ['management-api-impersonation'] });
      const created = await server.create('/api/applications', { name: 'Integrator backend', type: 'MachineToMachine' });
      await server.create(`/api/applications/${created.id}/roles`, { roleIds: [role.id] });
      backend = { clientId: created.id, clientSecret: created.secret };
      const config = await server.discover(backend.clientId, backend.clientSecret);
      const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all impersonation', resource: server.identity.managementApiIndicator });
      expect(tokens.scope).toBe('impersonation');
      backendToken = tokens.access_token;
      const app = await server.create('/api/applications', {
        name: 'Support console',
        type: 'Traditional',
        customClientMetadata: { allowTokenExchange: true },
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      });
      exchanger = { clientId: app.id, clientSecret: app.secret };
    });

    it('reaches /api/subject-tokens and nothing else', async () => {
      const userId = await userWith('impersonated_one');
      expect((await server.api('POST', '/api/subject-tokens', { token: backendToken, body: { userId } })).status).toBe(201);
      for (const [method, path] of [
        ['GET', '/api/users'],
        ['GET', `/api/users/${userId}`],
        ['POST', '/api/roles'],
        ['GET', '/api/applications'],
        ['GET', '/api/impersonations'],
        // Sessions and grants (issue 38): seeing or ending them is the Management API's `all`.
        ['GET', `/api/users/${userId}/sessions`],
        ['DELETE', `/api/users/${userId}/sessions`],
        ['GET', `/api/users/${userId}/grants`],
      ] as const) {
        expect((await server.api(method, path, { token: backendToken, ...(method === 'POST' && { body: { name: 'x' } }) })).status).toBe(403);
      }
    });

    it('cannot mint a Management API token by exchanging a subject token (invalid_target)', async () => {
      const userId = await userWith('impersonated_two', [readerRoleId]);
      const { body } = await server.api('POST', '/api/subject-tokens', { token: backendToken, body: { userId } });
      const response = await fetch(`http://localhost:${server.port}/oidc/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${exchanger.clientId}:${exchanger.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: tokenExchange,
          subject_token: body.subjectToken,
          subject_token_type: accessTokenType,
          resource: server.identity.managementApiIndicator,
          scope: 'all impersonation',
        }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_target');
    });
  });
});
