import * as oauth from 'openid-client';

import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * A subject token is sealed with its user's role ids and the exchange trusts them without reading
 * the user: so every change that would make the exchange refuse, or grant less, must void the
 * tokens already issued. Each test issues a token, makes one change, and tries to exchange it.
 */
describe('impersonation: subject tokens voided by what changes after their issuance', () => {
  let server: TestServer;
  let resource: { id: string; indicator: string };
  let reader: { id: string };
  let writer: { id: string };
  let admin: { id: string };
  let spa: { id: string };

  beforeAll(async () => {
    server = await startTestServer('voiding');
    const post = server.create;
    resource = await post('/api/resources', { name: 'Ledger', indicator: 'https://ledger.test' });
    const read = await post(`/api/resources/${resource.id}/scopes`, { name: 'ledger:read' });
    const write = await post(`/api/resources/${resource.id}/scopes`, { name: 'ledger:write' });
    reader = await post('/api/roles', { name: 'Reader', scopeIds: [read.id] });
    writer = await post('/api/roles', { name: 'Writer', scopeIds: [write.id] });
    admin = await post('/api/roles', { name: 'Ledger admin' });
    expect((await server.api('PATCH', '/api/configs/impersonation', { body: { protectedRoleIds: [admin.id] } })).status).toBe(200);
    spa = await post('/api/applications', { name: 'Support SPA', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
  });
  afterAll(async () => {
    await server.close();
  });

  /** A new user holding these roles. */
  let users = 0;
  const userWith = async (...roleIds: string[]) => {
    users += 1;
    const user = (await server.create('/api/users', { username: `user_${users}` })) as { id: string };
    if (roleIds.length > 0) expect((await server.api('POST', `/api/users/${user.id}/roles`, { body: { roleIds } })).status).toBe(201);
    return user;
  };
  const issue = async (userId: string) => {
    const { status, body } = await server.api('POST', '/api/subject-tokens', { body: { userId } });
    expect(status).toBe(201);
    return body as { subjectToken: string; impersonationId: string };
  };
  const exchange = async (subjectToken: string, scope = 'ledger:read ledger:write') => {
    try {
      const config = await server.discover(spa.id);
      return await oauth.genericGrantRequest(config, grantType, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: resource.indicator,
        scope,
      });
    } catch (error) {
      return { error: (error as { error?: string }).error ?? String(error) };
    }
  };
  const audit = async (impersonationId: string) =>
    (await server.api('GET', `/api/impersonations?impersonationId=${impersonationId}`)).body as Array<{ kind: string; failureReason?: string }>;

  /** The token was voided for `reason`, and its exchange refused saying so in the audit. */
  const expectVoided = async ({ subjectToken, impersonationId }: { subjectToken: string; impersonationId: string }, reason: string) => {
    expect(await exchange(subjectToken)).toEqual({ error: 'invalid_request' });
    const records = await audit(impersonationId);
    expect(records.find(({ kind }) => kind === 'subject_token.voided')).toMatchObject({ failureReason: reason });
    expect(records.find(({ kind }) => kind === 'exchange.failed')).toMatchObject({ failureReason: `the subject token was voided: ${reason}` });
  };

  it('voids it when one of the user’s roles is taken away (DELETE /api/users/:userId/roles/:roleId)', async () => {
    const user = await userWith(reader.id, writer.id);
    const issued = await issue(user.id);
    expect((await server.api('DELETE', `/api/users/${user.id}/roles/${writer.id}`)).status).toBe(204);
    await expectVoided(issued, "the user's roles changed");
    // A token issued after the change grants what the user holds now.
    expect(await exchange((await issue(user.id)).subjectToken)).toMatchObject({ scope: 'ledger:read' });
  });

  it('voids it when the user’s roles are replaced (PUT /api/users/:userId/roles) or changed from the role’s side (/api/roles/:id/users)', async () => {
    const replaced = await userWith(reader.id, writer.id);
    const first = await issue(replaced.id);
    expect((await server.api('PUT', `/api/users/${replaced.id}/roles`, { body: { roleIds: [reader.id] } })).status).toBe(200);
    await expectVoided(first, "the user's roles changed");

    const removed = await userWith(reader.id, writer.id);
    const second = await issue(removed.id);
    expect((await server.api('DELETE', `/api/roles/${writer.id}/users/${removed.id}`)).status).toBe(204);
    await expectVoided(second, "the user's roles changed");
  });

  it('voids it when the user is given a protected role, whichever route gives it', async () => {
    const user = await userWith(reader.id);
    const issued = await issue(user.id);
    expect((await server.api('POST', `/api/roles/${admin.id}/users`, { body: { userIds: [user.id] } })).status).toBe(201);
    await expectVoided(issued, "the user's roles changed");
    expect((await server.api('POST', '/api/subject-tokens', { body: { userId: user.id } })).body).toMatchObject({ code: 'impersonation.user_protected' });
  });

  it('voids it when one of the user’s roles is deleted', async () => {
    const doomed = (await server.create('/api/roles', { name: 'Doomed' })) as { id: string };
    const user = await userWith(reader.id, doomed.id);
    const issued = await issue(user.id);
    expect((await server.api('DELETE', `/api/roles/${doomed.id}`)).status).toBe(204);
    await expectVoided(issued, "one of the user's roles was deleted");
  });

  it('voids it when the user is suspended or deleted, and when the impersonation is revoked', async () => {
    const suspended = await userWith(reader.id);
    const first = await issue(suspended.id);
    expect((await server.api('PATCH', `/api/users/${suspended.id}/is-suspended`, { body: { isSuspended: true } })).status).toBe(200);
    await expectVoided(first, 'the user was suspended');

    const deleted = await userWith(reader.id);
    const second = await issue(deleted.id);
    expect((await server.api('DELETE', `/api/users/${deleted.id}`)).status).toBe(204);
    await expectVoided(second, 'the user was deleted');

    const revoked = await userWith(reader.id);
    const third = await issue(revoked.id);
    expect((await server.api('POST', `/api/impersonations/${third.impersonationId}/revoke`)).status).toBe(200);
    await expectVoided(third, 'the impersonation was revoked');
  });

  it('leaves it alone for changes that take nothing away: another user’s roles, lifting a suspension, a profile edit, an empty assignment', async () => {
    const user = await userWith(reader.id);
    const other = await userWith(reader.id);
    const issued = await issue(user.id);
    expect((await server.api('DELETE', `/api/users/${other.id}/roles/${reader.id}`)).status).toBe(204);
    expect((await server.api('PATCH', `/api/users/${user.id}/is-suspended`, { body: { isSuspended: false } })).status).toBe(200);
    expect((await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'Renamed' } })).status).toBe(200);
    expect((await server.api('POST', `/api/roles/${writer.id}/users`, { body: { userIds: [] } })).status).toBeLessThan(500);
    expect((await audit(issued.impersonationId)).map(({ kind }) => kind)).toEqual(['subject_token.issued']);
    expect(await exchange(issued.subjectToken)).toMatchObject({ scope: 'ledger:read' });
  });

  it('never grants a permission taken away before the exchange, however issuance and the change interleave', async () => {
    // Issuance reads the roles before and after storing the token; the change voids what it finds
    // after it commits. Whatever the interleaving, one of the two sees the other.
    for (let round = 0; round < 8; round += 1) {
      const user = await userWith(reader.id, writer.id);
      const [issuance, removal] = await Promise.all([
        server.api('POST', '/api/subject-tokens', { body: { userId: user.id } }),
        server.api('DELETE', `/api/users/${user.id}/roles/${writer.id}`),
      ]);
      expect(removal.status).toBe(204);
      expect(issuance.status).toBe(201);
      const result = await exchange(issuance.body.subjectToken);
      if ('scope' in result) expect(result.scope).toBe('ledger:read');
      else expect(result).toEqual({ error: 'invalid_request' });
    }
  });
});
