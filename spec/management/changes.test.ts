import * as oauth from 'openid-client';

import { startTestServer, type TestServer } from '../support/server.js';

const day = 24 * 60 * 60 * 1000;

/** `GET /api/changes`: the log of every write, who asked for it, newest first, kept for a while. */
describe('the change log', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('changes', { CHANGES_RETENTION_DAYS: '30' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists what changed and who asked, newest first, by entity and id, with the total', async () => {
    const since = Date.now();
    const user = await server.create('/api/users', { username: 'logged_user', primaryEmail: 'logged@example.com' });
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'Logged User' } });
    const all = await server.api('GET', `/api/changes?entity=User&entityId=${user.id}`);
    expect(all.status).toBe(200);
    expect(all.headers.get('total-number')).toBe('2');
    expect(all.body.map(({ action }: { action: string }) => action)).toEqual(['updated', 'created']);
    expect(all.body[1]).toMatchObject({
      entity: 'User',
      entityId: user.id,
      action: 'created',
      data: { username: 'logged_user' },
      origin: { method: 'POST', path: '/api/users', clientId: expect.any(String) },
      createdAt: expect.any(Number),
    });
    expect(all.body[1].createdAt).toBeGreaterThanOrEqual(since);
    const paged = await server.api('GET', `/api/changes?entity=User&entityId=${user.id}&page=2&page_size=1`);
    expect(paged.body.map(({ action }: { action: string }) => action)).toEqual(['created']);
    expect((await server.api('GET', `/api/changes?entityId=${user.id}&until=${since - 1}`)).body).toEqual([]);
  });

  it("never holds a secret: an application's secret is not in its records", async () => {
    const app = await server.create('/api/applications', { name: 'Logged app', type: 'MachineToMachine' });
    const extra = await server.create(`/api/applications/${app.id}/secrets`, { name: 'second' });
    const records = await server.api('GET', `/api/changes?entity=Application&entityId=${app.id}`);
    expect(records.body.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(records.body)).not.toContain(app.secret);
    expect(JSON.stringify(records.body)).not.toContain(extra.value);
  });

  it('keeps a record for CHANGES_RETENTION_DAYS (a TTL index removes it then)', async () => {
    const role = await server.create('/api/roles', { name: 'Logged role' });
    const stored = await server.database.db.collection<{ createdAt: Date; expiresAt: Date }>('changes').findOne({ entity: 'Role', id: role.id });
    expect(stored!.expiresAt.getTime() - stored!.createdAt.getTime()).toBe(30 * day);
    const indexes = await server.database.db.collection('changes').indexes();
    expect(indexes).toContainEqual(expect.objectContaining({ key: { expiresAt: 1 }, expireAfterSeconds: 0 }));
  });

  it('refuses a bad filter with 400 naming it, and a token without the `all` scope with 403', async () => {
    const bad = await server.api('GET', '/api/changes?since=yesterday');
    expect(bad).toMatchObject({ status: 400, body: { code: 'guard.invalid_input', data: { field: 'query.since' } } });
    expect((await server.api('GET', '/api/changes?entity=Us%24er')).status).toBe(400);
    expect((await server.api('GET', '/api/changes', { token: null })).status).toBe(401);
    // A backend that may only issue subject tokens reads no change log.
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Impersonation only', type: 'MachineToMachine' } });
    const impersonation = (await server.api('GET', '/api/resources/management-api/scopes')).body.find(({ name }: { name: string }) => name === 'impersonation');
    await server.api('POST', `/api/roles/${role.id}/scopes`, { body: { scopeIds: [impersonation.id] } });
    const backend = await server.create('/api/applications', { name: 'Integrator backend', type: 'MachineToMachine' });
    await server.api('POST', `/api/applications/${backend.id}/roles`, { body: { roleIds: [role.id] } });
    const config = await server.discover(backend.id, backend.secret);
    const { access_token: token, scope } = await oauth.clientCredentialsGrant(config, {
      resource: server.identity.managementApiIndicator,
      scope: 'all impersonation',
    });
    expect(scope).toBe('impersonation');
    expect(await server.api('GET', '/api/changes', { token })).toMatchObject({ status: 403, body: { code: 'auth.forbidden' } });
  });
});
