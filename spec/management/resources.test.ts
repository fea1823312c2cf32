import * as oauth from 'openid-client';
import { decodeJwt } from 'jose';

import { startTestServer, type TestServer } from '../support/server.js';

describe('/api/resources and their scopes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('resources');
  });
  afterAll(async () => {
    await server.close();
  });

  const db = () => server.database.db;

  it('creates a resource with default token lifetime and no scopes', async () => {
    const { status, body } = await server.api('POST', '/api/resources', { body: { name: 'Orders', indicator: 'https://orders.example.com' } });
    expect(status).toBe(201);
    expect(body).toEqual({
      id: expect.any(String),
      name: 'Orders',
      indicator: 'https://orders.example.com',
      isDefault: false,
      accessTokenTtl: 3600,
      createdAt: expect.any(Number),
      scopes: [],
    });
  });

  it('refuses a second resource with the same indicator with 422, writing nothing', async () => {
    await server.api('POST', '/api/resources', { body: { name: 'A', indicator: 'https://dup.example.com' } });
    const before = await db().collection('resources').countDocuments();
    const { status, body } = await server.api('POST', '/api/resources', { body: { name: 'B', indicator: 'https://dup.example.com' } });
    expect(status).toBe(422);
    // Logto's code and status (packages/core/src/routes/resource.ts).
    expect(body).toEqual({ code: 'resource.resource_identifier_in_use', message: 'a resource with indicator `https://dup.example.com` exists already' });
    expect(await db().collection('resources').countDocuments()).toBe(before);
  });

  it('lists, reads, updates and deletes resources', async () => {
    const { body: created } = await server.api('POST', '/api/resources', {
      body: { name: 'Billing', indicator: 'https://billing.example.com', accessTokenTtl: 600 },
    });
    const listed = await server.api('GET', '/api/resources?includeScopes=true&page=1');
    expect(listed.status).toBe(200);
    expect(Number(listed.headers.get('total-number'))).toBeGreaterThanOrEqual(2);
    expect(listed.body.find(({ id }: { id: string }) => id === created.id)).toMatchObject({ name: 'Billing', scopes: [] });
    expect((await server.api('GET', `/api/resources/${created.id}`)).body).toMatchObject({ accessTokenTtl: 600 });

    const patched = await server.api('PATCH', `/api/resources/${created.id}`, { body: { name: 'Billing v2' } });
    expect(patched.body).toMatchObject({ name: 'Billing v2', indicator: 'https://billing.example.com', accessTokenTtl: 600 });

    expect((await server.api('DELETE', `/api/resources/${created.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/resources/${created.id}`)).status).toBe(404);
  });

  it('refuses bad resource input with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'x' }, 'body.indicator is required'],
      [{ name: 'x', indicator: 'no scheme' }, 'body.indicator must match pattern "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+$"'],
      [{ name: 'x', indicator: 'https://a.example.com', accessTokenTtl: 'long' }, 'body.accessTokenTtl must be integer'],
      [{ name: 'x', indicator: 'https://a.example.com', accessTokenTtl: 5 }, 'body.accessTokenTtl must be >= 60'],
    ];
    const before = await db().collection('resources').countDocuments();
    for (const [body, message] of cases) {
      const response = await server.api('POST', '/api/resources', { body });
      expect(response.status).toBe(400);
      expect(response.body.message).toBe(message);
    }
    expect(await db().collection('resources').countDocuments()).toBe(before);
  });

  it("manages a resource's scopes, refusing a duplicate name with 422", async () => {
    const { body: resource } = await server.api('POST', '/api/resources', { body: { name: 'Scoped', indicator: 'https://scoped.example.com' } });
    const created = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'read:orders', description: 'Read orders' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      resourceId: resource.id,
      name: 'read:orders',
      description: 'Read orders',
      createdAt: expect.any(Number),
    });

    const duplicate = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'read:orders' } });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.code).toBe('scope.name_exists');
    expect((await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'has space' } })).status).toBe(400);

    const listed = await server.api('GET', `/api/resources/${resource.id}/scopes`);
    expect(listed.body.map(({ name }: { name: string }) => name)).toEqual(['read:orders']);
    expect(listed.headers.get('total-number')).toBe('1');

    const patched = await server.api('PATCH', `/api/resources/${resource.id}/scopes/${created.body.id}`, { body: { description: null } });
    expect(patched.body).toMatchObject({ name: 'read:orders', description: null });

    expect((await server.api('DELETE', `/api/resources/${resource.id}/scopes/${created.body.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/resources/${resource.id}/scopes/${created.body.id}`)).status).toBe(404);
    expect((await server.api('GET', '/api/resources/nosuchresource/scopes')).status).toBe(404);
  });

  it("deleting a resource removes its scopes and every role's grant of them", async () => {
    const { body: resource } = await server.api('POST', '/api/resources', { body: { name: 'Gone', indicator: 'https://gone.example.com' } });
    const { body: scope } = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'x' } });
    await db()
      .collection('roles_scopes')
      .insertOne({ _id: 'r:s' as never, roleId: 'some-role', scopeId: scope.id });
    expect((await server.api('DELETE', `/api/resources/${resource.id}`)).status).toBe(204);
    expect(await db().collection('scopes').countDocuments({ resourceId: resource.id })).toBe(0);
    expect(await db().collection('roles_scopes').countDocuments({ scopeId: scope.id })).toBe(0);
  });

  it('keeps the Management API resource from being changed or deleted', async () => {
    const listed = await server.api('GET', '/api/resources');
    const management = listed.body.find(({ indicator }: { indicator: string }) => indicator === server.identity.managementApiIndicator);
    expect(management).toBeDefined();
    for (const [method, path, body] of [
      ['PATCH', `/api/resources/${management.id}`, { name: 'mine' }],
      ['DELETE', `/api/resources/${management.id}`, undefined],
      ['POST', `/api/resources/${management.id}/scopes`, { name: 'more' }],
    ] as const) {
      const response = await server.api(method, path, { body });
      // Logto's code and status: 400 resource.cannot_modify_management_api.
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('resource.cannot_modify_management_api');
    }
  });

  it('makes a change visible on the next token request', async () => {
    const { body: resource } = await server.api('POST', '/api/resources', {
      body: { name: 'Live', indicator: 'https://live.example.com', accessTokenTtl: 600 },
    });
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    const first = await oauth.clientCredentialsGrant(config, { resource: resource.indicator });
    expect(first.expires_in).toBe(600);
    expect(decodeJwt(first.access_token).aud).toBe('https://live.example.com');

    await server.api('PATCH', `/api/resources/${resource.id}`, { body: { accessTokenTtl: 900 } });
    expect((await oauth.clientCredentialsGrant(config, { resource: resource.indicator })).expires_in).toBe(900);

    await server.api('DELETE', `/api/resources/${resource.id}`);
    await expect(oauth.clientCredentialsGrant(config, { resource: resource.indicator })).rejects.toMatchObject({ error: 'invalid_target' });
  });

  // Logto's PATCH /resources/:id/is-default (packages/core/src/routes/resource.ts): at most one default API
  // resource, which a token asked for without `resource` is issued for (its oidc defaultResource).
  it('marks one default API resource, which a token request without resource then gets', async () => {
    const [first, second] = await Promise.all([
      server.create('/api/resources', { name: 'Default one', indicator: 'https://default-one.example.com' }),
      server.create('/api/resources', { name: 'Default two', indicator: 'https://default-two.example.com' }),
    ]);
    const scope = await server.create(`/api/resources/${second.id}/scopes`, { name: 'read:default' });
    const role = await server.create('/api/roles', { name: 'default reader', type: 'MachineToMachine', scopeIds: [scope.id] });
    const app = await server.create('/api/applications', { name: 'default machine', type: 'MachineToMachine' });
    await server.create(`/api/applications/${app.id}/roles`, { roleIds: [role.id] });
    const config = await server.discover(app.id, app.secret);
    await expect(oauth.clientCredentialsGrant(config, { scope: 'read:default' })).rejects.toMatchObject({ error: 'invalid_target' });

    const marked = await server.api('PATCH', `/api/resources/${first.id}/is-default`, { body: { isDefault: true } });
    expect(marked).toMatchObject({ status: 200, body: { id: first.id, isDefault: true } });
    expect((await server.api('PATCH', `/api/resources/${second.id}/is-default`, { body: { isDefault: true } })).body.isDefault).toBe(true);
    expect((await server.api('GET', `/api/resources/${first.id}`)).body.isDefault).toBe(false);
    expect(await db().collection('resources').countDocuments({ isDefault: true })).toBe(1);

    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'read:default' });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: second.indicator, scope: 'read:default' });
    // The default is no grant: an application without the role gets a token for it that carries nothing.
    const stranger = await server.create('/api/applications', { name: 'roleless machine', type: 'MachineToMachine' });
    const strangers = await oauth.clientCredentialsGrant(await server.discover(stranger.id, stranger.secret), { scope: 'read:default' });
    expect(decodeJwt(strangers.access_token)).toMatchObject({ aud: second.indicator });
    expect(decodeJwt(strangers.access_token).scope ?? '').toBe('');

    expect((await server.api('PATCH', `/api/resources/${second.id}/is-default`, { body: { isDefault: false } })).body.isDefault).toBe(false);
    await expect(oauth.clientCredentialsGrant(config, { scope: 'read:default' })).rejects.toMatchObject({ error: 'invalid_target' });

    const management = (await server.api('GET', '/api/resources')).body.find(({ indicator }: { indicator: string }) => indicator.endsWith('/api'));
    expect((await server.api('PATCH', `/api/resources/${management.id}/is-default`, { body: { isDefault: true } })).body.code).toBe(
      'resource.cannot_modify_management_api',
    );
    expect((await server.api('PATCH', `/api/resources/${first.id}/is-default`, { body: {} })).status).toBe(400);
  });
});
