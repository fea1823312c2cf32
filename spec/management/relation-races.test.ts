import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Relation writes to one owner are serialized, and each change record says the difference it
 * really made: concurrent replacements of a set leave one request's set, and the announced
 * additions and removals add up to it. A target deleted while it is being linked leaves no link.
 */
describe('relation writes under concurrency', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('relation-races');
  });
  afterAll(async () => {
    await server.close();
  });

  it("20 concurrent PUTs of an organization's members leave one of the sets, and the announced deltas add up to it", async () => {
    const organization = await server.create('/api/organizations', { name: 'Raced' });
    const users: string[] = [];
    for (let i = 0; i < 24; i += 1) users.push((await server.create('/api/users', { username: `raced_${i}` })).id);
    // Each request names a different set: a window of 8 users sliding along the 24.
    const sets = Array.from({ length: 20 }, (_, i) => users.slice(i % 17, (i % 17) + 8));
    const answers = await Promise.all(sets.map((userIds) => server.api('PUT', `/api/organizations/${organization.id}/users`, { body: { userIds } })));
    // The writers take turns on the set's lock; one that waited 10 s for its turn (a machine with a
    // load of 8) is answered 409 request.conflict and wrote nothing. On a quiet machine all are 204.
    for (const { status, body } of answers) expect(status === 204 || (status === 409 && body.code === 'request.conflict')).toBe(true);
    const applied = sets.filter((_, index) => answers[index]!.status === 204);
    expect(applied.length).toBeGreaterThan(0);

    const { body: members } = await server.api('GET', `/api/organizations/${organization.id}/users?page_size=100`);
    const final = (members as Array<{ id: string }>).map(({ id }) => id).sort();
    expect(applied.map((set) => [...set].sort().join())).toContain(final.join());

    const records = await server.database.db
      .collection('changes')
      .find({ entity: 'Organization', action: 'membership.updated', id: organization.id })
      .toArray();
    const net = new Map<string, number>();
    for (const { data } of records) {
      for (const id of data.addedUserIds as string[]) net.set(id, (net.get(id) ?? 0) + 1);
      for (const id of data.removedUserIds as string[]) net.set(id, (net.get(id) ?? 0) - 1);
    }
    for (const id of users) expect([id, net.get(id) ?? 0]).toEqual([id, final.includes(id) ? 1 : 0]);
  });

  it('leaves no link to a role deleted while it was being assigned', async () => {
    const user = await server.create('/api/users', { username: 'assigned_while_deleted' });
    const roles: string[] = [];
    for (let i = 0; i < 12; i += 1) roles.push((await server.create('/api/roles', { name: `short-lived ${i}` })).id);
    await Promise.all(
      roles.flatMap((roleId) => [
        server.api('POST', `/api/users/${user.id}/roles`, { body: { roleIds: [roleId] } }),
        server.api('DELETE', `/api/roles/${roleId}`),
      ]),
    );
    const { db } = server.database;
    const links = await db.collection('users_roles').find({ userId: user.id }).toArray();
    const existing = await db.collection('roles').countDocuments({ _id: { $in: links.map(({ roleId }) => roleId) } });
    expect(existing).toBe(links.length);
  });

  it('leaves no link to a permission deleted while a role was being created with it', async () => {
    const resource = await server.create('/api/resources', { name: 'Raced API', indicator: 'https://raced.example.com' });
    const scopes: string[] = [];
    for (let i = 0; i < 12; i += 1) scopes.push((await server.create(`/api/resources/${resource.id}/scopes`, { name: `raced:${i}` })).id);
    await Promise.all(
      scopes.flatMap((scopeId, i) => [
        server.api('POST', '/api/roles', { body: { name: `created with ${i}`, scopeIds: [scopeId] } }),
        server.api('DELETE', `/api/resources/${resource.id}/scopes/${scopeId}`),
      ]),
    );
    const { db } = server.database;
    const links = await db
      .collection('roles_scopes')
      .find({ scopeId: { $in: scopes } })
      .toArray();
    expect(links).toEqual([]);
  });

  it('leaves no assignment of an organization role deleted while it was being given to a member, nor of a member removed meanwhile', async () => {
    const organization = await server.create('/api/organizations', { name: 'Raced roles' });
    const user = await server.create('/api/users', { username: 'member_while_deleted' });
    const roles: string[] = [];
    for (let i = 0; i < 12; i += 1) roles.push((await server.create('/api/organization-roles', { name: `short-lived org role ${i}` })).id);
    expect((await server.api('POST', `/api/organizations/${organization.id}/users`, { body: { userIds: [user.id] } })).status).toBe(201);
    await Promise.all([
      ...roles.flatMap((roleId) => [
        server.api('POST', `/api/organizations/${organization.id}/users/${user.id}/roles`, { body: { organizationRoleIds: [roleId] } }),
        server.api('DELETE', `/api/organization-roles/${roleId}`),
      ]),
    ]);
    const { db } = server.database;
    expect(
      await db
        .collection('organization_user_roles')
        .find({ organizationRoleId: { $in: roles } })
        .toArray(),
    ).toEqual([]);

    const kept = (await server.create('/api/organization-roles', { name: 'kept org role' })).id;
    await Promise.all([
      server.api('POST', `/api/organizations/${organization.id}/users/${user.id}/roles`, { body: { organizationRoleIds: [kept] } }),
      server.api('DELETE', `/api/organizations/${organization.id}/users/${user.id}`),
    ]);
    const member = await db.collection('organization_users').countDocuments({ organizationId: organization.id, userId: user.id });
    const assigned = await db.collection('organization_user_roles').countDocuments({ organizationId: organization.id, userId: user.id });
    expect({ member, assigned: member === 0 ? assigned : 0 }).toEqual({ member: 0, assigned: 0 });
  });
});
