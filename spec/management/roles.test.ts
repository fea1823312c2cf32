import * as oauth from 'openid-client';

import { snapshot } from '../support/db.js';
import { signUpWithApi } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('/api/roles', () => {
  let server: TestServer;
  let resource: { id: string; indicator: string };
  let read: { id: string };
  let write: { id: string };
  beforeAll(async () => {
    server = await startTestServer('roles');
    ({ body: resource } = await server.api('POST', '/api/resources', { body: { name: 'Orders', indicator: 'https://orders.test' } }));
    ({ body: read } = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'read:orders' } }));
    ({ body: write } = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'write:orders' } }));
  });
  afterAll(async () => {
    await server.close();
  });

  it('creates a role with permissions, then lists, reads, updates and filters roles', async () => {
    const created = await server.api('POST', '/api/roles', { body: { name: 'Order reader', description: 'Reads orders', scopeIds: [read.id] } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Order reader',
      description: 'Reads orders',
      type: 'User',
      isDefault: false,
      createdAt: expect.any(Number),
    });
    const scopes = await server.api('GET', `/api/roles/${created.body.id}/scopes`);
    expect(scopes.body.map(({ name }: { name: string }) => name)).toEqual(['read:orders']);

    const patched = await server.api('PATCH', `/api/roles/${created.body.id}`, { body: { description: 'Reads all orders', isDefault: true } });
    expect(patched.body).toMatchObject({ name: 'Order reader', description: 'Reads all orders', isDefault: true });
    expect((await server.api('GET', `/api/roles/${created.body.id}`)).body.isDefault).toBe(true);
    // Not by default for the users the other tests make.
    await server.api('PATCH', `/api/roles/${created.body.id}`, { body: { isDefault: false } });

    const users = await server.api('GET', '/api/roles?type=User&search=%25reader%25');
    expect(users.body.map(({ id }: { id: string }) => id)).toEqual([created.body.id]);
    const m2m = await server.api('GET', '/api/roles?type=MachineToMachine');
    expect(m2m.body.every(({ type }: { type: string }) => type === 'MachineToMachine')).toBe(true);
  });

  it('refuses a taken name (422) and unknown permissions (404), writing nothing', async () => {
    await server.api('POST', '/api/roles', { body: { name: 'Taken' } });
    const before = await snapshot(server.database.db);
    const taken = await server.api('POST', '/api/roles', { body: { name: 'Taken' } });
    expect(taken.status).toBe(422);
    expect(taken.body.code).toBe('role.name_in_use');
    const unknown = await server.api('POST', '/api/roles', { body: { name: 'Fresh', scopeIds: [read.id, 'nosuchscope'] } });
    expect(unknown.status).toBe(404);
    // Logto's code (packages/core/src/database/update-where.ts and its queries): entity.not_exists_with_id.
    expect(unknown.body).toMatchObject({ code: 'entity.not_exists_with_id', data: { name: 'scope', id: 'nosuchscope' } });
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('adds and removes permissions of a role', async () => {
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Editor' } });
    // Logto's role.scope.ts: 200 with every permission the role now has.
    const added = await server.api('POST', `/api/roles/${role.id}/scopes`, { body: { scopeIds: [read.id, write.id] } });
    expect(added.status).toBe(200);
    expect(added.body.map(({ id }: { id: string }) => id).sort()).toEqual([read.id, write.id].sort());
    expect((await server.api('POST', `/api/roles/${role.id}/scopes`, { body: { scopeIds: [] } })).status).toBe(400);
    expect((await server.api('DELETE', `/api/roles/${role.id}/scopes/${write.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/roles/${role.id}/scopes/${write.id}`)).status).toBe(404);
    expect((await server.api('GET', `/api/roles/${role.id}/scopes`)).body.map(({ id }: { id: string }) => id)).toEqual([read.id]);
  });

  it("assigns user roles to users, and lists a role's users", async () => {
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Support' } });
    const { body: a } = await server.api('POST', '/api/users', { body: { username: 'sup_a' } });
    const { body: b } = await server.api('POST', '/api/users', { body: { username: 'sup_b' } });
    expect((await server.api('POST', `/api/roles/${role.id}/users`, { body: { userIds: [a.id] } })).status).toBe(201);
    // Logto's answers (packages/core/src/routes/admin-user/role.openapi.json): POST 201 {roleIds, addedRoleIds},
    // a repeated id taken once; adding what is there adds nothing and is no error.
    expect(await server.api('POST', `/api/users/${b.id}/roles`, { body: { roleIds: [role.id, role.id] } })).toMatchObject({
      status: 201,
      body: { roleIds: [role.id], addedRoleIds: [role.id] },
    });
    expect((await server.api('POST', `/api/users/${b.id}/roles`, { body: { roleIds: [role.id] } })).body).toEqual({ roleIds: [role.id], addedRoleIds: [] });
    expect((await server.api('POST', `/api/users/${b.id}/roles`, { body: { roleIds: [] } })).body).toEqual({ roleIds: [], addedRoleIds: [] });
    const users = await server.api('GET', `/api/roles/${role.id}/users`);
    expect(users.body.map(({ username }: { username: string }) => username).sort()).toEqual(['sup_a', 'sup_b']);
    expect(users.headers.get('total-number')).toBe('2');
    expect((await server.api('GET', `/api/users/${a.id}/roles`)).body.map(({ name }: { name: string }) => name)).toEqual(['Support']);

    // PUT 200 {roleIds}; an empty list empties the set.
    expect(await server.api('PUT', `/api/users/${a.id}/roles`, { body: { roleIds: [] } })).toMatchObject({ status: 200, body: { roleIds: [] } });
    expect((await server.api('GET', `/api/users/${a.id}/roles`)).body).toEqual([]);
    expect((await server.api('DELETE', `/api/roles/${role.id}/users/${b.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/users/${b.id}/roles/${role.id}`)).status).toBe(404);
  });

  it('answers concurrent conflicting writes without a 500, and keeps the links consistent', async () => {
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Contended' } });
    const { body: user } = await server.api('POST', '/api/users', { body: { username: 'contended' } });
    const requests = Array.from({ length: 12 }, (_, i) =>
      i % 2 === 0
        ? server.api('PUT', `/api/users/${user.id}/roles`, { body: { roleIds: [role.id] } })
        : server.api('DELETE', `/api/users/${user.id}/roles/${role.id}`),
    );
    const statuses = new Set((await Promise.all(requests)).map(({ status }) => status));
    expect([...statuses].every((status) => [200, 204, 404, 409].includes(status))).toBe(true);
    expect(await server.database.db.collection('users_roles').countDocuments({ userId: user.id })).toBeLessThanOrEqual(1);
  });

  it('refuses to mix role types: machine-to-machine roles go to machine-to-machine applications only', async () => {
    const { body: m2mRole } = await server.api('POST', '/api/roles', { body: { name: 'Robot', type: 'MachineToMachine' } });
    const { body: userRole } = await server.api('POST', '/api/roles', { body: { name: 'Human' } });
    const { body: user } = await server.api('POST', '/api/users', { body: { username: 'mixer' } });
    const { body: spa } = await server.api('POST', '/api/applications', { body: { name: 'spa', type: 'SPA' } });
    const { body: m2m } = await server.api('POST', '/api/applications', { body: { name: 'm2m', type: 'MachineToMachine' } });
    const before = await snapshot(server.database.db);
    for (const [path, body] of [
      [`/api/users/${user.id}/roles`, { roleIds: [m2mRole.id] }],
      [`/api/roles/${m2mRole.id}/users`, { userIds: [user.id] }],
      [`/api/applications/${m2m.id}/roles`, { roleIds: [userRole.id] }],
      [`/api/applications/${spa.id}/roles`, { roleIds: [m2mRole.id] }],
      [`/api/roles/${m2mRole.id}/applications`, { applicationIds: [spa.id] }],
    ] as const) {
      const response = await server.api('POST', path, { body });
      expect(response.status).toBe(422);
    }
    // Logto's codes where it has them (packages/core/src/routes/admin-user/role.ts, applications/application-role.ts).
    const codes = await Promise.all(
      [
        [`/api/users/${user.id}/roles`, { roleIds: [m2mRole.id] }, 'user.invalid_role_type'],
        [`/api/applications/${m2m.id}/roles`, { roleIds: [userRole.id] }, 'application.invalid_role_type'],
        [`/api/applications/${spa.id}/roles`, { roleIds: [m2mRole.id] }, 'application.invalid_type'],
        [`/api/roles/${m2mRole.id}/users`, { userIds: [user.id] }, 'role.type_mismatch'],
      ].map(async ([path, body, code]) => [(await server.api('POST', path as string, { body })).body.code, code]),
    );
    for (const [got, code] of codes) expect(got).toBe(code);
    expect((await server.api('GET', `/api/applications/${spa.id}/roles`)).body.code).toBe('application.invalid_type');
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it("gives a client_credentials token exactly the permissions of the application's roles", async () => {
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Order robot', type: 'MachineToMachine', scopeIds: [read.id] } });
    const { body: app } = await server.api('POST', '/api/applications', { body: { name: 'robot', type: 'MachineToMachine' } });
    const config = await server.discover(app.id, app.secret);
    const token = () => oauth.clientCredentialsGrant(config, { resource: resource.indicator, scope: 'read:orders write:orders' });
    expect((await token()).scope).toBe('');

    expect((await server.api('POST', `/api/applications/${app.id}/roles`, { body: { roleIds: [role.id] } })).status).toBe(201);
    expect((await token()).scope).toBe('read:orders');

    expect((await server.api('POST', `/api/roles/${role.id}/scopes`, { body: { scopeIds: [write.id] } })).status).toBe(200);
    expect((await token()).scope).toBe('read:orders write:orders');

    expect((await server.api('GET', `/api/roles/${role.id}/applications`)).body.map(({ id }: { id: string }) => id)).toEqual([app.id]);
    expect((await server.api('DELETE', `/api/roles/${role.id}`)).status).toBe(204);
    expect((await token()).scope).toBe('');
  });

  it('deletes a role with every reference to it', async () => {
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Temporary', scopeIds: [read.id] } });
    const { body: user } = await server.api('POST', '/api/users', { body: { username: 'temp_user' } });
    await server.api('POST', `/api/users/${user.id}/roles`, { body: { roleIds: [role.id] } });
    expect((await server.api('DELETE', `/api/roles/${role.id}`)).status).toBe(204);
    const db = server.database.db;
    expect(await db.collection('users_roles').countDocuments({ roleId: role.id })).toBe(0);
    expect(await db.collection('roles_scopes').countDocuments({ roleId: role.id })).toBe(0);
    expect((await server.api('GET', `/api/roles/${role.id}`)).status).toBe(404);
  });

  it('deleting a permission removes it from every role', async () => {
    const { body: scope } = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'delete:orders' } });
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'Deleter', scopeIds: [scope.id] } });
    expect((await server.api('DELETE', `/api/resources/${resource.id}/scopes/${scope.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/roles/${role.id}/scopes`)).body).toEqual([]);
  });

  it('keeps the built-in Management API role', async () => {
    const roles = await server.api('GET', '/api/roles?type=MachineToMachine&page_size=100');
    const builtIn = roles.body.find(({ name }: { name: string }) => name === 'Management API access');
    for (const [method, path, body] of [
      ['DELETE', `/api/roles/${builtIn.id}`, undefined],
      ['PATCH', `/api/roles/${builtIn.id}`, { name: 'Mine now' }],
      ['POST', `/api/roles/${builtIn.id}/scopes`, { scopeIds: [read.id] }],
    ] as const) {
      const response = await server.api(method, path, { body });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('role.built_in');
    }
  });

  // Logto (packages/core/src/routes/admin-user/basics.ts and the experience's registration) gives a
  // new user every role marked `isDefault`.
  it('gives every new user the default roles: created through the Management API or signing up', async () => {
    const byDefault = await server.create('/api/roles', { name: 'Everyone', isDefault: true });
    await server.create('/api/roles', { name: 'Not by default' });
    const roleNamesOf = async (userId: string) =>
      ((await server.api('GET', `/api/users/${userId}/roles`)).body as Array<{ name: string }>).map(({ name }) => name);

    const created = await server.create('/api/users', { username: 'defaulted' });
    expect(await roleNamesOf(created.id)).toEqual(['Everyone']);

    const redirectUri = 'http://127.0.0.1/callback';
    const web = await server.create('/api/applications', {
      name: 'Default roles web',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const signedUp = await signUpWithApi(server, web.id, redirectUri, 'signed_up_defaulted', 'a long enough password 1', '198.51.100.77');
    expect(await roleNamesOf(signedUp.id)).toEqual(['Everyone']);
    await server.api('DELETE', `/api/roles/${byDefault.id}`);
  });
});
