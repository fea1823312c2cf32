import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The relation routes answer as Logto's do. Logto has hand-written ones, each with its own answers, and
 * the generic ones of its SchemaRouter (packages/core/src/utils/SchemaRouter.ts), which answer alike.
 */
describe('relation routes, answered as Logto answers them', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('logto-relations');
  });
  afterAll(async () => {
    await server.close();
  });

  const post = (path: string, body: unknown) => server.api('POST', path, { body });
  const put = (path: string, body: unknown) => server.api('PUT', path, { body });

  /** Answers the request's result and whether it left the data as it was. */
  async function refused(request: () => Promise<{ status: number; body: { code?: string; data?: unknown } }>) {
    const before = await snapshot(server.database.db);
    const answer = await request();
    return { status: answer.status, code: answer.body.code, data: answer.body.data, unchanged: (await snapshot(server.database.db)) === before };
  }

  it('organization members (organization/user/index.ts): POST answers {userIds}, ignores members already there; PUT 204; an unknown id is 422', async () => {
    const organization = await server.create('/api/organizations', { name: 'Members Inc' });
    const [a, b] = await Promise.all([server.create('/api/users', { username: 'member_a' }), server.create('/api/users', { username: 'member_b' })]);
    const path = `/api/organizations/${organization.id}/users`;

    expect(await post(path, { userIds: [a.id, a.id] })).toMatchObject({ status: 201, body: { userIds: [a.id] } });
    // "Organization existed users assignment will be ignored" (index.users.openapi.json).
    expect(await post(path, { userIds: [a.id, b.id] })).toMatchObject({ status: 201, body: { userIds: [a.id, b.id] } });
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id).sort()).toEqual([a.id, b.id].sort());

    expect(await refused(() => post(path, { userIds: [] }))).toMatchObject({ status: 400, unchanged: true });
    for (const [target, body] of [
      [path, { userIds: [a.id, 'nosuchuser'] }],
      ['/api/organizations/nosuchorg/users', { userIds: [a.id] }],
    ] as const) {
      expect(await refused(() => post(target, body))).toEqual({
        status: 422,
        code: 'entity.relation_foreign_key_not_found',
        data: expect.anything(),
        unchanged: true,
      });
    }
    expect(await refused(() => put(path, { userIds: ['nosuchuser'] }))).toMatchObject({
      status: 422,
      code: 'entity.relation_foreign_key_not_found',
      unchanged: true,
    });

    expect(await put(path, { userIds: [b.id, b.id] })).toMatchObject({ status: 204 });
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id)).toEqual([b.id]);
    // A delete that removes nothing is 404 entity.not_found there (SchemaRouter's DeletionError).
    expect((await server.api('DELETE', `${path}/${a.id}`)).body.code).toBe('entity.not_found');
    expect((await server.api('DELETE', `/api/organizations/nosuchorg/users/${a.id}`)).body.code).toBe('entity.not_found');
    for (const collection of ['organizations', 'organization-roles', 'organization-scopes']) {
      expect(await server.api('DELETE', `/api/${collection}/nosuchid`)).toMatchObject({ status: 404, body: { code: 'entity.not_found' } });
    }
    expect((await put(path, { userIds: [] })).status).toBe(204);
  });

  it("an organization role's permissions (organization-role/index.ts): POST answers {organizationScopeIds}; an unknown id is 422", async () => {
    const role = await server.create('/api/organization-roles', { name: 'relation role' });
    const [read, write] = await Promise.all([
      server.create('/api/organization-scopes', { name: 'rel:read' }),
      server.create('/api/organization-scopes', { name: 'rel:write' }),
    ]);
    const path = `/api/organization-roles/${role.id}/scopes`;
    expect(await post(path, { organizationScopeIds: [read.id] })).toMatchObject({ status: 201, body: { organizationScopeIds: [read.id] } });
    expect(await post(path, { organizationScopeIds: [read.id, write.id] })).toMatchObject({ status: 201 });
    expect(await refused(() => post(path, { organizationScopeIds: ['nosuchscope'] }))).toMatchObject({
      status: 422,
      code: 'entity.relation_foreign_key_not_found',
      unchanged: true,
    });
    expect(await refused(() => post('/api/organization-roles/nosuchrole/scopes', { organizationScopeIds: [read.id] }))).toMatchObject({
      status: 422,
      code: 'entity.relation_foreign_key_not_found',
      unchanged: true,
    });
    expect((await put(path, { organizationScopeIds: [write.id] })).status).toBe(204);
  });

  it("a member's organization roles (organization/user/role-relations.ts): ids may repeat and roles held already are no error", async () => {
    const organization = await server.create('/api/organizations', { name: 'Roles Inc' });
    const user = await server.create('/api/users', { username: 'role_holder' });
    const role = await server.create('/api/organization-roles', { name: 'holder' });
    await post(`/api/organizations/${organization.id}/users`, { userIds: [user.id] });
    const path = `/api/organizations/${organization.id}/users/${user.id}/roles`;
    expect((await post(path, { organizationRoleIds: [role.id, role.id] })).status).toBe(201);
    expect((await post(path, { organizationRoleIds: [role.id] })).status).toBe(201);
    expect(await refused(() => post(path, { organizationRoleIds: ['nosuchrole'] }))).toMatchObject({
      status: 422,
      code: 'entity.relation_foreign_key_not_found',
      unchanged: true,
    });
    expect((await put(path, { organizationRoleIds: [role.id, role.id] })).status).toBe(204);
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id)).toEqual([role.id]);
  });

  it("a role's users and applications (role.user.ts, role.application.ts): 201, and one already assigned is 422 naming it", async () => {
    const role = await server.create('/api/roles', { name: 'assigned role' });
    const robot = await server.create('/api/roles', { name: 'robot role', type: 'MachineToMachine' });
    const user = await server.create('/api/users', { username: 'assigned_user' });
    const app = await server.create('/api/applications', { name: 'assigned app', type: 'MachineToMachine' });

    expect((await post(`/api/roles/${role.id}/users`, { userIds: [user.id, user.id] })).status).toBe(201);
    expect(await refused(() => post(`/api/roles/${role.id}/users`, { userIds: [user.id] }))).toEqual({
      status: 422,
      code: 'role.user_exists',
      data: { userId: user.id },
      unchanged: true,
    });
    expect(await refused(() => post(`/api/roles/${role.id}/users`, { userIds: ['nosuchuser'] }))).toMatchObject({
      status: 404,
      code: 'entity.not_exists_with_id',
      unchanged: true,
    });

    expect((await post(`/api/roles/${robot.id}/applications`, { applicationIds: [app.id] })).status).toBe(201);
    expect(await refused(() => post(`/api/roles/${robot.id}/applications`, { applicationIds: [app.id] }))).toEqual({
      status: 422,
      code: 'role.application_exists',
      data: { applicationId: app.id },
      unchanged: true,
    });
  });

  it("a role's permissions (role.scope.ts): 200 with every permission the role has; one it has already is 422 role.scope_exists", async () => {
    const resource = await server.create('/api/resources', { name: 'Relations', indicator: 'https://relations.example.com' });
    const [read, write] = await Promise.all([
      server.create(`/api/resources/${resource.id}/scopes`, { name: 'read:rel' }),
      server.create(`/api/resources/${resource.id}/scopes`, { name: 'write:rel' }),
    ]);
    const role = await server.create('/api/roles', { name: 'permitted role' });
    const path = `/api/roles/${role.id}/scopes`;
    expect((await post(path, { scopeIds: [read.id] })).status).toBe(200);
    const second = await post(path, { scopeIds: [write.id] });
    expect(second.status).toBe(200);
    expect(second.body.map(({ id }: { id: string }) => id).sort()).toEqual([read.id, write.id].sort());
    expect(await refused(() => post(path, { scopeIds: [read.id] }))).toEqual({
      status: 422,
      code: 'role.scope_exists',
      data: { scopeId: read.id },
      unchanged: true,
    });
  });

  it("an application's roles (applications/application-role.ts): POST {roleIds, addedRoleIds} 201, PUT {roleIds} 200, an empty list changes nothing", async () => {
    const app = await server.create('/api/applications', { name: 'role app', type: 'MachineToMachine' });
    const [one, two] = await Promise.all([
      server.create('/api/roles', { name: 'app role one', type: 'MachineToMachine' }),
      server.create('/api/roles', { name: 'app role two', type: 'MachineToMachine' }),
    ]);
    const path = `/api/applications/${app.id}/roles`;
    expect(await post(path, { roleIds: [one.id, one.id] })).toMatchObject({ status: 201, body: { roleIds: [one.id], addedRoleIds: [one.id] } });
    expect(await post(path, { roleIds: [one.id, two.id] })).toMatchObject({ status: 201, body: { roleIds: [one.id, two.id], addedRoleIds: [two.id] } });
    expect(await post(path, { roleIds: [] })).toMatchObject({ status: 201, body: { roleIds: [], addedRoleIds: [] } });
    expect(await put(path, { roleIds: [two.id] })).toMatchObject({ status: 200, body: { roleIds: [two.id] } });
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id)).toEqual([two.id]);
  });
});

// Logto's routes for members' roles (packages/core/src/routes/organization/user/index.ts, role-relations.ts).
describe("organization members' roles, as Logto's", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('logto-member-roles');
  });
  afterAll(async () => {
    await server.close();
  });

  it('POST /organizations/:id/users/roles gives these roles to each of these members; a non-member or unknown role writes nothing', async () => {
    const organization = await server.create('/api/organizations', { name: 'Bulk Inc' });
    const [a, b, outsider] = await Promise.all(['bulk_a', 'bulk_b', 'bulk_out'].map((username) => server.create('/api/users', { username })));
    const [viewer, editor] = await Promise.all([
      server.create('/api/organization-roles', { name: 'bulk viewer' }),
      server.create('/api/organization-roles', { name: 'bulk editor' }),
    ]);
    await server.create(`/api/organizations/${organization.id}/users`, { userIds: [a.id, b.id] });
    const path = `/api/organizations/${organization.id}/users/roles`;

    for (const body of [
      { userIds: [a.id, outsider.id], organizationRoleIds: [viewer.id] },
      { userIds: [a.id], organizationRoleIds: [viewer.id, 'nosuchrole'] },
    ]) {
      const before = await snapshot(server.database.db);
      expect((await server.api('POST', path, { body })).body.code).toBe('entity.relation_foreign_key_not_found');
      expect(await snapshot(server.database.db)).toBe(before);
    }
    expect((await server.api('POST', path, { body: { userIds: [a.id, b.id, a.id], organizationRoleIds: [viewer.id, editor.id] } })).status).toBe(201);
    for (const user of [a, b]) {
      const held = await server.api('GET', `/api/organizations/${organization.id}/users/${user.id}/roles`);
      expect(held.body.map(({ name }: { name: string }) => name).sort()).toEqual(['bulk editor', 'bulk viewer']);
    }
  });

  it('roles may be named by organizationRoleNames beside their ids; an unknown name is 422', async () => {
    const organization = await server.create('/api/organizations', { name: 'Names Inc' });
    const user = await server.create('/api/users', { username: 'named_member' });
    await server.create(`/api/organizations/${organization.id}/users`, { userIds: [user.id] });
    const [admin, auditor] = await Promise.all([
      server.create('/api/organization-roles', { name: 'names admin' }),
      server.create('/api/organization-roles', { name: 'names auditor' }),
    ]);
    const path = `/api/organizations/${organization.id}/users/${user.id}/roles`;
    expect((await server.api('POST', path, { body: { organizationRoleNames: ['names admin'] } })).status).toBe(201);
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id)).toEqual([admin.id]);
    expect((await server.api('PUT', path, { body: { organizationRoleIds: [admin.id], organizationRoleNames: ['names auditor'] } })).status).toBe(204);
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id).sort()).toEqual([admin.id, auditor.id].sort());
    const before = await snapshot(server.database.db);
    // Logto's code for an unknown name (organization-user.roles.test.ts), naming it.
    expect((await server.api('POST', path, { body: { organizationRoleNames: ['no such role'] } })).body).toMatchObject({
      code: 'organization.role_names_not_found',
      data: { roleNames: ['no such role'] },
    });
    expect((await server.api('POST', path, { body: {} })).status).toBe(400);
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it("GET /organizations/:id/users/:userId/scopes answers the permissions a member's roles give there; a non-member is 422", async () => {
    const organization = await server.create('/api/organizations', { name: 'Scopes Inc' });
    const [member, stranger] = await Promise.all([
      server.create('/api/users', { username: 'scoped_member' }),
      server.create('/api/users', { username: 'stranger' }),
    ]);
    await server.create(`/api/organizations/${organization.id}/users`, { userIds: [member.id] });
    const [read, write, unrelated] = await Promise.all(
      ['docs:read', 'docs:write', 'docs:delete'].map((name) => server.create('/api/organization-scopes', { name })),
    );
    void unrelated;
    const [reader, writer] = await Promise.all([
      server.create('/api/organization-roles', { name: 'scoped reader', organizationScopeIds: [read.id] }),
      server.create('/api/organization-roles', { name: 'scoped writer', organizationScopeIds: [read.id, write.id] }),
    ]);
    await server.create(`/api/organizations/${organization.id}/users/${member.id}/roles`, { organizationRoleIds: [reader.id, writer.id] });
    const scopes = await server.api('GET', `/api/organizations/${organization.id}/users/${member.id}/scopes`);
    expect(scopes.body.map(({ name }: { name: string }) => name)).toEqual(['docs:read', 'docs:write']);
    expect((await server.api('GET', `/api/organizations/${organization.id}/users/${stranger.id}/scopes`)).body.code).toBe('organization.require_membership');
  });
});
