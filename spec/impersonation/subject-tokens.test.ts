import * as oauth from 'openid-client';

import { startTestServer, type TestServer } from '../support/server.js';

/** Issuing subject tokens: who may ask, for whom, with what context. */
describe('POST /api/subject-tokens', () => {
  let server: TestServer;
  let target: { id: string };

  beforeAll(async () => {
    server = await startTestServer('subject-tokens');
    target = await server.create('/api/users', { username: 'customer', name: 'Cus Tomer' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('accepts a token with only the impersonation scope, which opens nothing else', async () => {
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Impersonator', type: 'MachineToMachine' } });
    const scopes = await server.api('GET', `/api/resources/management-api/scopes`);
    const impersonation = scopes.body.find(({ name }: { name: string }) => name === 'impersonation');
    await server.database.db
      .collection('roles_scopes')
      .insertOne({ _id: `${role.id}:${impersonation.id}` as never, roleId: role.id, scopeId: impersonation.id });
    const { body: backend } = await server.api('POST', '/api/applications', { body: { name: 'Integrator backend', type: 'MachineToMachine' } });
    await server.api('POST', `/api/applications/${backend.id}/roles`, { body: { roleIds: [role.id] } });
    const config = await server.discover(backend.id, backend.secret);
    const { access_token, scope } = await oauth.clientCredentialsGrant(config, {
      resource: server.identity.managementApiIndicator,
      scope: 'all impersonation',
    });
    expect(scope).toBe('impersonation');
    const issued = await server.api('POST', '/api/subject-tokens', { token: access_token, body: { userId: target.id } });
    expect(issued.status).toBe(201);
    // The kill switch goes with issuing, for what this backend issued; reading the audit and changing the policy do not.
    expect((await server.api('POST', `/api/impersonations/${issued.body.impersonationId}/revoke`, { token: access_token })).status).toBe(200);
    const anothers = await server.api('POST', '/api/subject-tokens', { body: { userId: target.id } });
    const refused = await server.api('POST', `/api/impersonations/${anothers.body.impersonationId}/revoke`, { token: access_token });
    expect(refused).toMatchObject({ status: 404, body: { code: 'entity.not_exists_with_id' } });
    expect((await server.api('POST', `/api/impersonations/${anothers.body.impersonationId}/revoke`)).status).toBe(200);
    for (const [method, path] of [
      ['GET', '/api/users'],
      ['GET', '/api/impersonations'],
      ['GET', '/api/impersonations/checkpoints'],
      ['PATCH', '/api/configs/impersonation'],
    ] as const) {
      const other = await server.api(method, path, { token: access_token, ...(method === 'PATCH' && { body: { requireReason: false } }) });
      expect([path, other.status]).toEqual([path, 403]);
      expect(other.body.message).toBe('the access token lacks the required scope (all)');
    }
  });

  it('refuses unknown and suspended users, and bad context', async () => {
    expect((await server.api('POST', '/api/subject-tokens', { body: { userId: 'nosuchuser' } })).status).toBe(404);
    const { body: suspended } = await server.api('POST', '/api/users', { body: { username: 'frozen' } });
    await server.api('PATCH', `/api/users/${suspended.id}/is-suspended`, { body: { isSuspended: true } });
    const refused = await server.api('POST', '/api/subject-tokens', { body: { userId: suspended.id } });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('user.suspended');
    for (const [context, message] of [
      [{ $where: 1 }, 'body.context has a key that is not allowed (`$where`)'],
      [{ a: { 'b.c': 1 } }, 'body.context has a key that is not allowed (`b.c`)'],
      ['ticket', 'body.context must be object'],
      [{ note: 'x'.repeat(5000) }, 'body.context must not be larger than 4096 bytes'],
    ] as const) {
      const response = await server.api('POST', '/api/subject-tokens', { body: { userId: target.id, context } });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe(message);
    }
    expect((await server.api('POST', '/api/subject-tokens', { token: null, body: { userId: target.id } })).status).toBe(401);
  });
});
