import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A member's organization roles as Logto's integration-tests api/organization/
 * organization-user.roles.test.ts expect them (core routes/organization/user/role-relations.ts):
 * by id or by name, Logto's answer and codes, membership first.
 */
describe('organization member roles, as Logto', () => {
  let server: TestServer;
  let organization: string;
  let member: string;
  let stranger: string;
  let admin: { id: string; name: string };
  let viewer: { id: string; name: string };
  let machine: { id: string };

  beforeAll(async () => {
    server = await startTestServer('logto-member-roles');
    organization = (await server.create('/api/organizations', { name: 'Roles Inc' })).id;
    member = (await server.create('/api/users', { username: 'role_member' })).id;
    stranger = (await server.create('/api/users', { username: 'role_stranger' })).id;
    await server.create(`/api/organizations/${organization}/users`, { userIds: [member] });
    admin = await server.create('/api/organization-roles', { name: 'roles admin' });
    viewer = await server.create('/api/organization-roles', { name: 'roles viewer' });
    machine = await server.create('/api/organization-roles', { name: 'roles machine', type: 'MachineToMachine' });
  });
  afterAll(async () => {
    await server.close();
  });

  const roles = (user: string) => `/api/organizations/${organization}/users/${user}/roles`;
  const held = async (user = member) => ((await server.api('GET', roles(user))).body as Array<{ id: string }>).map(({ id }) => id).sort();

  it('adds by ids and by names at once, answering Logto’s {organizationRoleIds}', async () => {
    const added = await server.api('POST', roles(member), { body: { organizationRoleIds: [admin.id], organizationRoleNames: [viewer.name] } });
    expect(added.status).toBe(201);
    expect([...added.body.organizationRoleIds].sort()).toEqual([admin.id, viewer.id].sort());
    expect(await held()).toEqual([admin.id, viewer.id].sort());
    // Replaced by names: only what was named stays.
    expect((await server.api('PUT', roles(member), { body: { organizationRoleNames: [viewer.name] } })).status).toBe(204);
    expect(await held()).toEqual([viewer.id]);
  });

  it('refuses, writing nothing: a non-member (422 organization.require_membership, before the roles are looked at), an unknown name (422 organization.role_names_not_found), an unknown id (422 entity.relation_foreign_key_not_found), a machine role (422 entity.db_constraint_violated)', async () => {
    const before = await snapshot(server.database.db);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [roles(stranger), { organizationRoleIds: ['no-such-role'] }, 'organization.require_membership'],
      [roles('no-such-user'), { organizationRoleIds: [admin.id] }, 'organization.require_membership'],
      [roles(member), { organizationRoleNames: ['invalid_name'] }, 'organization.role_names_not_found'],
      [roles(member), { organizationRoleIds: ['no-such-role'] }, 'entity.relation_foreign_key_not_found'],
      [roles(member), { organizationRoleIds: [machine.id] }, 'entity.db_constraint_violated'],
    ];
    for (const [path, body, code] of cases) {
      const answer = await server.api('POST', path, { body });
      expect({ path, status: answer.status, code: answer.body.code }).toEqual({ path, status: 422, code });
    }
    const replaced = await server.api('PUT', roles(member), { body: { organizationRoleNames: ['invalid_name'] } });
    expect({ status: replaced.status, code: replaced.body.code }).toEqual({ status: 422, code: 'organization.role_names_not_found' });
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('removes a role held (204); one not held is 404 entity.not_found, a non-member 422', async () => {
    await server.api('POST', roles(member), { body: { organizationRoleIds: [admin.id] } });
    expect((await server.api('DELETE', `${roles(member)}/${admin.id}`)).status).toBe(204);
    const notHeld = await server.api('DELETE', `${roles(member)}/${admin.id}`);
    expect({ status: notHeld.status, code: notHeld.body.code }).toEqual({ status: 404, code: 'entity.not_found' });
    const outsider = await server.api('DELETE', `${roles(stranger)}/${admin.id}`);
    expect({ status: outsider.status, code: outsider.body.code }).toEqual({ status: 422, code: 'organization.require_membership' });
  });

  it('forgets a member’s roles when the member leaves: their list is then 422, as for any non-member', async () => {
    const leaving = (await server.create('/api/users', { username: 'role_leaver' })).id;
    await server.create(`/api/organizations/${organization}/users`, { userIds: [leaving] });
    await server.api('POST', roles(leaving), { body: { organizationRoleIds: [admin.id, viewer.id] } });
    expect(await held(leaving)).toHaveLength(2);
    expect((await server.api('DELETE', `/api/organizations/${organization}/users/${leaving}`)).status).toBe(204);
    expect((await server.api('GET', roles(leaving))).body.code).toBe('organization.require_membership');
    // Back as a member, nothing of before is held.
    await server.create(`/api/organizations/${organization}/users`, { userIds: [leaving] });
    expect(await held(leaving)).toEqual([]);
  });
});
