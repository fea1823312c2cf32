import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('organizations, their members, roles and permissions', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('orgs');
  });
  afterAll(async () => {
    await server.close();
  });

  const post = (path: string, body: unknown) => server.api('POST', path, { body });
  const names = (list: Array<{ name: string }>) => list.map(({ name }) => name).sort();

  it('creates, lists, searches, reads, updates and deletes an organization', async () => {
    const created = await post('/api/organizations', { name: 'Acme', description: 'Rockets', customData: { tier: 'gold' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Acme',
      description: 'Rockets',
      customData: { tier: 'gold' },
      isMfaRequired: false,
      branding: {},
      color: {},
      createdAt: expect.any(Number),
    });
    await post('/api/organizations', { name: 'Globex' });
    const found = await server.api('GET', '/api/organizations?q=acm');
    expect(found.body.map(({ id }: { id: string }) => id)).toEqual([created.body.id]);
    expect(found.headers.get('total-number')).toBe('1');
    const patched = await server.api('PATCH', `/api/organizations/${created.body.id}`, { body: { description: null } });
    expect(patched.body).toMatchObject({ name: 'Acme', description: null, customData: { tier: 'gold' } });
    expect((await server.api('DELETE', `/api/organizations/${created.body.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/organizations/${created.body.id}`)).status).toBe(404);
  });

  it('manages organization permissions and roles built from them', async () => {
    const { body: read } = await post('/api/organization-scopes', { name: 'read:docs', description: 'Read documents' });
    const { body: edit } = await post('/api/organization-scopes', { name: 'edit:docs' });
    expect((await post('/api/organization-scopes', { name: 'read:docs' })).body.code).toBe('entity.unique_integrity_violation');

    const role = await post('/api/organization-roles', { name: 'Editor', organizationScopeIds: [read.id, edit.id] });
    expect(role.status).toBe(201);
    expect(role.body).toMatchObject({ name: 'Editor', description: null });
    expect(names(role.body.scopes)).toEqual(['edit:docs', 'read:docs']);
    expect((await post('/api/organization-roles', { name: 'Editor' })).body.code).toBe('entity.unique_integrity_violation');
    expect((await post('/api/organization-roles', { name: 'Ghost', organizationScopeIds: ['nosuchscope'] })).body.code).toBe(
      'entity.relation_foreign_key_not_found',
    );
    expect((await server.api('GET', '/api/organization-roles?q=Ghost')).body).toEqual([]);

    expect((await server.api('PUT', `/api/organization-roles/${role.body.id}/scopes`, { body: { organizationScopeIds: [read.id] } })).status).toBe(204);
    expect(names((await server.api('GET', `/api/organization-roles/${role.body.id}/scopes`)).body)).toEqual(['read:docs']);
    expect((await post(`/api/organization-roles/${role.body.id}/scopes`, { organizationScopeIds: [edit.id] })).status).toBe(201);
    expect((await server.api('DELETE', `/api/organization-roles/${role.body.id}/scopes/${read.id}`)).status).toBe(204);
    expect(names((await server.api('GET', `/api/organization-roles/${role.body.id}`)).body.scopes)).toEqual(['edit:docs']);

    // Deleting a permission removes it from every organization role.
    expect((await server.api('DELETE', `/api/organization-scopes/${edit.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/organization-roles/${role.body.id}`)).body.scopes).toEqual([]);
  });

  it('manages members: add, replace, remove, with their organization roles', async () => {
    const { body: org } = await post('/api/organizations', { name: 'Initech' });
    const { body: admin } = await post('/api/organization-roles', { name: 'Initech admin' });
    const { body: viewer } = await post('/api/organization-roles', { name: 'Initech viewer' });
    const users = [];
    for (const username of ['peter', 'milton', 'bill']) {
      const created = await post('/api/users', { username });
      expect(created.status).toBe(200);
      users.push(created.body);
    }
    const [peter, milton, bill] = users;

    expect((await post(`/api/organizations/${org.id}/users`, { userIds: [peter.id, milton.id] })).status).toBe(201);
    // Roles only for members.
    const notMember = await post(`/api/organizations/${org.id}/users/${bill.id}/roles`, { organizationRoleIds: [admin.id] });
    expect({ status: notMember.status, code: notMember.body.code, data: notMember.body.data }).toEqual({
      status: 422,
      code: 'organization.require_membership',
      data: undefined,
    });

    const granted = await post(`/api/organizations/${org.id}/users/${peter.id}/roles`, { organizationRoleIds: [admin.id, viewer.id] });
    expect(granted.status).toBe(201);
    // Logto's answer, the role ids; ours beside it, the roles.
    expect([...granted.body.organizationRoleIds].sort()).toEqual([admin.id, viewer.id].sort());
    expect(names(granted.body.organizationRoles)).toEqual(['Initech admin', 'Initech viewer']);
    expect((await server.api('PUT', `/api/organizations/${org.id}/users/${peter.id}/roles`, { body: { organizationRoleIds: [viewer.id] } })).status).toBe(204);
    expect(names((await server.api('GET', `/api/organizations/${org.id}/users/${peter.id}/roles`)).body)).toEqual(['Initech viewer']);
    // A member's roles page like every other list, and members show theirs sorted by name (as Logto's
    // packages/core/src/routes/organization/user/index.ts).
    await server.api('PUT', `/api/organizations/${org.id}/users/${milton.id}/roles`, { body: { organizationRoleIds: [viewer.id, admin.id] } });
    const firstPage = await server.api('GET', `/api/organizations/${org.id}/users/${milton.id}/roles?page=1&page_size=1`);
    expect({ count: firstPage.body.length, total: firstPage.headers.get('total-number') }).toEqual({ count: 1, total: '2' });
    const secondPage = await server.api('GET', `/api/organizations/${org.id}/users/${milton.id}/roles?page=2&page_size=1`);
    expect([...names(firstPage.body), ...names(secondPage.body)].sort()).toEqual(['Initech admin', 'Initech viewer']);
    const miltonAsMember = (await server.api('GET', `/api/organizations/${org.id}/users`)).body.find(({ id }: { id: string }) => id === milton.id);
    expect(miltonAsMember.organizationRoles.map(({ name }: { name: string }) => name)).toEqual(['Initech admin', 'Initech viewer']);
    await server.api('PUT', `/api/organizations/${org.id}/users/${milton.id}/roles`, { body: { organizationRoleIds: [] } });

    const members = await server.api('GET', `/api/organizations/${org.id}/users`);
    expect(members.headers.get('total-number')).toBe('2');
    const peterAsMember = members.body.find(({ id }: { id: string }) => id === peter.id);
    expect(peterAsMember.organizationRoles).toEqual([{ id: viewer.id, name: 'Initech viewer' }]);
    expect(peterAsMember).not.toHaveProperty('passwordHash');

    // Replacing the members drops those who leave, with their roles there.
    expect((await server.api('PUT', `/api/organizations/${org.id}/users`, { body: { userIds: [milton.id, bill.id] } })).status).toBe(204);
    expect((await server.api('GET', `/api/organizations/${org.id}/users`)).body.map(({ username }: { username: string }) => username).sort()).toEqual([
      'bill',
      'milton',
    ]);
    expect(await server.database.db.collection('organization_user_roles').countDocuments({ organizationId: org.id, userId: peter.id })).toBe(0);

    await post(`/api/organizations/${org.id}/users/${milton.id}/roles`, { organizationRoleIds: [admin.id] });
    expect((await server.api('DELETE', `/api/organizations/${org.id}/users/${milton.id}/roles/${viewer.id}`)).status).toBe(404);
    expect((await server.api('DELETE', `/api/organizations/${org.id}/users/${milton.id}/roles/${admin.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/organizations/${org.id}/users/${milton.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/organizations/${org.id}/users/${milton.id}`)).status).toBe(404);
  });

  // Logto's generic relation routes (packages/core/src/utils/SchemaRouter.ts, organization/user/role-relations.ts):
  // an unknown id is a broken foreign key, 422 entity.relation_foreign_key_not_found; not being a member is 422.
  it('refuses unknown users, organizations and roles with 422 as Logto, writing nothing', async () => {
    const { body: org } = await post('/api/organizations', { name: 'Hooli' });
    const { body: user } = await post('/api/users', { username: 'gavin' });
    await post(`/api/organizations/${org.id}/users`, { userIds: [user.id] });
    const before = await snapshot(server.database.db);
    for (const [path, body] of [
      [`/api/organizations/${org.id}/users`, { userIds: [user.id, 'nosuchuser'] }],
      [`/api/organizations/nosuchorg/users`, { userIds: [user.id] }],
      [`/api/organizations/${org.id}/users/${user.id}/roles`, { organizationRoleIds: ['nosuchrole'] }],
    ] as const) {
      expect((await post(path, body)).body).toMatchObject({ code: 'entity.relation_foreign_key_not_found' });
    }
    expect((await server.api('PUT', `/api/organizations/${org.id}/users`, { body: { userIds: ['nosuchuser'] } })).status).toBe(422);
    for (const path of [`/api/organizations/nosuchorg/users/${user.id}/roles`, `/api/organizations/${org.id}/users/nosuchuser/roles`]) {
      expect((await server.api('GET', path)).body).toMatchObject({ code: 'organization.require_membership' });
    }
    // Removing from an organization that does not exist is 404, as Logto's.
    expect((await server.api('DELETE', `/api/organizations/nosuchorg/users/${user.id}`)).status).toBe(404);
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('deleting an organization or an organization role removes every reference to it', async () => {
    const { body: org } = await post('/api/organizations', { name: 'Vandelay' });
    const { body: role } = await post('/api/organization-roles', { name: 'Importer' });
    const { body: user } = await post('/api/users', { username: 'art' });
    await post(`/api/organizations/${org.id}/users`, { userIds: [user.id] });
    await post(`/api/organizations/${org.id}/users/${user.id}/roles`, { organizationRoleIds: [role.id] });
    const db = server.database.db;

    expect((await server.api('DELETE', `/api/organization-roles/${role.id}`)).status).toBe(204);
    expect(await db.collection('organization_user_roles').countDocuments({ organizationRoleId: role.id })).toBe(0);

    expect((await server.api('DELETE', `/api/organizations/${org.id}`)).status).toBe(204);
    expect(await db.collection('organization_users').countDocuments({ organizationId: org.id })).toBe(0);
    expect((await server.api('GET', `/api/users/${user.id}`)).status).toBe(200);
  });

  it('refuses bad organization input with 400', async () => {
    for (const [path, body, message] of [
      ['/api/organizations', { name: '' }, 'body.name must NOT have fewer than 1 characters'],
      ['/api/organizations', { name: 'x', customData: { $gt: 1 } }, 'body.customData has a key that is not allowed (`$gt`)'],
      ['/api/organization-roles', { name: 'x', organizationScopeIds: 'all' }, 'body.organizationScopeIds must be array'],
    ] as const) {
      const response = await post(path, body);
      expect(response.status).toBe(400);
      expect(response.body.message).toBe(message);
    }
  });
});
