import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Logto's organization roles (packages/core/src/routes/organization-role/index.ts): a type (`User` or
 * `MachineToMachine`), organization permissions and API resource permissions (`resourceScopeIds` at
 * creation, the `resource-scopes` relation of its SchemaRouter), shown as `scopes` and `resourceScopes`.
 */
describe("organization roles' types and API resource permissions, as Logto's", () => {
  let server: TestServer;
  let resource: { id: string; name: string; indicator: string };
  let read: { id: string; name: string };
  let write: { id: string; name: string };
  beforeAll(async () => {
    server = await startTestServer('logto-organization-roles');
    resource = await server.create('/api/resources', { name: 'Documents', indicator: 'https://documents.example.com' });
    read = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'documents:read' });
    write = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'documents:write' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('creates a role of a type with API permissions, shown with their resource; User unless said', async () => {
    const created = await server.api('POST', '/api/organization-roles', {
      body: { name: 'robot reader', type: 'MachineToMachine', resourceScopeIds: [read.id] },
    });
    expect(created).toMatchObject({
      status: 201,
      body: {
        name: 'robot reader',
        type: 'MachineToMachine',
        scopes: [],
        resourceScopes: [{ id: read.id, name: 'documents:read', resource: { id: resource.id, name: 'Documents' } }],
      },
    });
    expect((await server.api('POST', '/api/organization-roles', { body: { name: 'plain member' } })).body).toMatchObject({ type: 'User', resourceScopes: [] });
    expect((await server.api('POST', '/api/organization-roles', { body: { name: 'x', type: 'Robot' } })).status).toBe(400);
    const unknown = await server.api('POST', '/api/organization-roles', { body: { name: 'ghost reader', resourceScopeIds: ['nosuchscope'] } });
    expect(unknown.body.code).toBe('entity.relation_foreign_key_not_found');
    expect((await server.api('GET', '/api/organization-roles?q=ghost')).body).toEqual([]);
  });

  it('manages the resource-scopes relation as its SchemaRouter does, and a deleted permission leaves it', async () => {
    const role = await server.create('/api/organization-roles', { name: 'editor of documents' });
    const path = `/api/organization-roles/${role.id}/resource-scopes`;
    expect(await server.api('POST', path, { body: { scopeIds: [read.id, read.id] } })).toMatchObject({ status: 201, body: { scopeIds: [read.id] } });
    expect((await server.api('PUT', path, { body: { scopeIds: [read.id, write.id] } })).status).toBe(204);
    const listed = await server.api('GET', path);
    expect(listed.body.map(({ id }: { id: string }) => id).sort()).toEqual([read.id, write.id].sort());
    expect(listed.headers.get('total-number')).toBe('2');
    expect((await server.api('GET', `/api/organization-roles/${role.id}`)).body.resourceScopes.map(({ name }: { name: string }) => name).sort()).toEqual([
      'documents:read',
      'documents:write',
    ]);

    const before = await snapshot(server.database.db);
    expect((await server.api('POST', path, { body: { scopeIds: ['nosuchscope'] } })).body.code).toBe('entity.relation_foreign_key_not_found');
    expect((await server.api('POST', '/api/organization-roles/nosuchrole/resource-scopes', { body: { scopeIds: [read.id] } })).status).toBe(422);
    expect(await snapshot(server.database.db)).toBe(before);

    expect((await server.api('DELETE', `${path}/${write.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `${path}/${write.id}`)).body.code).toBe('entity.not_found');
    const changes = await server.api('GET', `/api/changes?entity=OrganizationRole&entityId=${role.id}`);
    expect(changes.body.map(({ action }: { action: string }) => action)).toContain('resourceScopes.updated');

    const temporary = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'documents:temporary' });
    await server.create(path, { scopeIds: [temporary.id] });
    await server.api('DELETE', `/api/resources/${resource.id}/scopes/${temporary.id}`);
    expect((await server.api('GET', path)).body.map(({ id }: { id: string }) => id)).toEqual([read.id]);
  });

  it("refuses the Management API's permissions to any organization role", async () => {
    const management = (await server.api('GET', '/api/resources')).body.find(({ indicator }: { indicator: string }) => indicator.endsWith('/api'));
    const [all] = (await server.api('GET', `/api/resources/${management.id}/scopes`)).body;
    const role = await server.create('/api/organization-roles', { name: 'would-be admin', type: 'MachineToMachine' });
    const before = await snapshot(server.database.db);
    expect((await server.api('POST', `/api/organization-roles/${role.id}/resource-scopes`, { body: { scopeIds: [all.id] } })).body.code).toBe(
      'role.management_api_scopes_not_assignable_to_user_role',
    );
    expect((await server.api('POST', '/api/organization-roles', { body: { name: 'sneaky', resourceScopeIds: [all.id] } })).status).toBe(400);
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('gives members User roles only: a MachineToMachine one is 422 entity.db_constraint_violated, writing nothing', async () => {
    const organization = await server.create('/api/organizations', { name: 'Typed Inc' });
    const user = await server.create('/api/users', { username: 'typed_member' });
    await server.create(`/api/organizations/${organization.id}/users`, { userIds: [user.id] });
    const robot = await server.create('/api/organization-roles', { name: 'machine only', type: 'MachineToMachine' });
    const before = await snapshot(server.database.db);
    for (const [method, path, body] of [
      ['POST', `/api/organizations/${organization.id}/users/${user.id}/roles`, { organizationRoleIds: [robot.id] }],
      ['PUT', `/api/organizations/${organization.id}/users/${user.id}/roles`, { organizationRoleNames: ['machine only'] }],
      ['POST', `/api/organizations/${organization.id}/users/roles`, { userIds: [user.id], organizationRoleIds: [robot.id] }],
    ] as const) {
      expect((await server.api(method, path, { body })).body).toMatchObject({ code: 'entity.db_constraint_violated', data: { organizationRoleId: robot.id } });
    }
    expect(await snapshot(server.database.db)).toBe(before);
  });
});
