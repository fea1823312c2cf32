import { snapshot } from '../support/db.js';
import { eventsDuring, hookTestEnv, logtoUserFields, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('the events each Management API route announces', () => {
  let server: TestServer;
  let receiver: Receiver;
  let hook: { id: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('hook-events', hookTestEnv);
    hook = await subscribe(server, receiver);
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  /** Runs one request and answers the events it produced, after checking its status. */
  async function eventsOf(method: string, path: string, body: unknown, status: number) {
    let answer: Awaited<ReturnType<TestServer['api']>> | undefined;
    const received = await eventsDuring(server, receiver, async () => {
      answer = await server.api(method, path, { body });
    });
    if (answer!.status !== status) throw new Error(`${method} ${path} answered ${answer!.status}: ${JSON.stringify(answer!.body)}`);
    return { received, answer: answer! };
  }
  const names = (received: Array<{ body: { event: string } }>) => received.map(({ body }) => body.event);

  // Logto's data-hook context (packages/core/src/libraries/hook/utils.ts, buildManagementApiContext):
  // `path` and `matchedRoute` relative to the Management API's root, as Logto's receivers route on them.
  it('announces the user routes, each with the request behind it (paths relative to the API root, as Logto), the acting client and no secret', async () => {
    const created = await eventsOf('POST', '/api/users', { username: 'hooked', password: 'a long enough password' }, 200);
    expect(names(created.received)).toEqual(['User.Created']);
    const [event] = created.received;
    const userId = created.answer.body.id;
    expect(event!.body).toEqual({
      id: event!.id,
      hookId: hook.id,
      event: 'User.Created',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: expect.objectContaining({ id: userId, username: 'hooked', applicationId: null }),
      method: 'POST',
      path: '/users',
      matchedRoute: '/users',
      params: {},
      status: 200,
      clientId: server.admin.clientId,
      ip: expect.any(String),
      userAgent: expect.any(String),
      // Beyond Logto: the entity, and the event's place in the one order and among the user's events.
      entity: { type: 'User', id: userId },
      sequence: expect.any(Number),
      version: 1,
    });
    expect(event!.raw).not.toMatch(/passwordHash|scrypt|a long enough password/);
    // Exactly Logto's user fields (@logto/schemas userInfoSelectFields), nothing of ours besides.
    expect(Object.keys(event!.body.data).sort()).toEqual(logtoUserFields);

    // Beyond Logto: `changes` names what each update changed, as field paths, never a secret's value.
    const updates: Array<[string, string, unknown, string[]]> = [
      ['PATCH', `/api/users/${userId}`, { name: 'Hooked', primaryPhone: '+61 412 345 699' }, ['name', 'primaryPhone']],
      ['PATCH', `/api/users/${userId}/custom-data`, { customData: { plan: 'pro' } }, ['customData.plan']],
      ['PATCH', `/api/users/${userId}/profile`, { profile: { nickname: 'hk' } }, ['profile.nickname']],
      ['PATCH', `/api/users/${userId}/password`, { password: 'another long password' }, ['password']],
      ['PATCH', `/api/users/${userId}`, { name: 'Hooked' }, []],
    ];
    for (const [method, path, body, changes] of updates) {
      const { received } = await eventsOf(method, path, body, 200);
      expect(names(received)).toEqual(['User.Data.Updated']);
      const relative = path.replace(/^\/api/, '');
      expect(received[0]!.body).toMatchObject({
        method,
        path: relative,
        matchedRoute: relative.replace(userId, ':userId'),
        params: { userId },
        data: { id: userId },
      });
      expect(received[0]!.body.changes).toEqual(changes);
      expect(received[0]!.raw).not.toMatch(/passwordHash|another long password/);
    }

    const suspended = await eventsOf('PATCH', `/api/users/${userId}/is-suspended`, { isSuspended: true }, 200);
    expect(names(suspended.received)).toEqual(['User.SuspensionStatus.Updated']);
    expect(suspended.received[0]!.body.data).toMatchObject({ id: userId, isSuspended: true });
    expect(suspended.received[0]!.body.changes).toEqual(['isSuspended']);

    const deleted = await eventsOf('DELETE', `/api/users/${userId}`, undefined, 204);
    expect(names(deleted.received)).toEqual(['User.Deleted']);
    // The entity as it was before the delete.
    expect(deleted.received[0]!.body).toMatchObject({ status: 204, data: { id: userId, username: 'hooked', name: 'Hooked' } });
  });

  // Role.Scopes.Updated as Logto's (packages/core/src/routes/role.ts): `roleId` beside `data`, the role's permissions.
  it('announces roles, their permissions (roleId and the permissions as they now are, as Logto), and API permissions', async () => {
    const { body: resource } = await server.api('POST', '/api/resources', { body: { name: 'Orders', indicator: 'https://orders.example' } });
    const scope = await eventsOf('POST', `/api/resources/${resource.id}/scopes`, { name: 'read:orders' }, 201);
    expect(names(scope.received)).toEqual(['Scope.Created']);
    const scopeId = scope.answer.body.id;
    const { body: write } = await server.api('POST', `/api/resources/${resource.id}/scopes`, { body: { name: 'write:orders' } });
    expect(names((await eventsOf('PATCH', `/api/resources/${resource.id}/scopes/${scopeId}`, { description: 'Read orders' }, 200)).received)).toEqual([
      'Scope.Data.Updated',
    ]);

    const plain = await eventsOf('POST', '/api/roles', { name: 'plain role' }, 200);
    expect(names(plain.received)).toEqual(['Role.Created']);
    const withScopes = await eventsOf('POST', '/api/roles', { name: 'scoped role', scopeIds: [scopeId] }, 200);
    expect(names(withScopes.received)).toEqual(['Role.Created', 'Role.Scopes.Updated']);
    const roleId = withScopes.answer.body.id;
    expect(withScopes.received[1]!.body).toMatchObject({ roleId, data: [expect.objectContaining({ id: scopeId, name: 'read:orders' })] });
    const scopeIdsOf = (body: { data: Array<{ id: string }> }) => body.data.map(({ id }) => id).sort();

    expect(names((await eventsOf('PATCH', `/api/roles/${roleId}`, { description: 'Reads' }, 200)).received)).toEqual(['Role.Data.Updated']);
    // Logto's role.scope.ts answers 200 with the role's permissions.
    const added = await eventsOf('POST', `/api/roles/${roleId}/scopes`, { scopeIds: [write.id] }, 200);
    expect(added.received.map(({ body }) => [body.event, body.roleId, scopeIdsOf(body)])).toEqual([
      ['Role.Scopes.Updated', roleId, [scopeId, write.id].sort()],
    ]);
    // Adding what the role already has is 422 role.scope_exists there, and a refused write announces nothing.
    const again = await eventsOf('POST', `/api/roles/${roleId}/scopes`, { scopeIds: [write.id] }, 422);
    expect(again.answer.body).toMatchObject({ code: 'role.scope_exists', data: { scopeId: write.id } });
    expect(again.received).toEqual([]);
    const removed = await eventsOf('DELETE', `/api/roles/${roleId}/scopes/${write.id}`, undefined, 204);
    expect(removed.received.map(({ body }) => [body.event, body.roleId, scopeIdsOf(body)])).toEqual([['Role.Scopes.Updated', roleId, [scopeId]]]);

    expect(names((await eventsOf('DELETE', `/api/roles/${plain.answer.body.id}`, undefined, 204)).received)).toEqual(['Role.Deleted']);
    expect(names((await eventsOf('DELETE', `/api/resources/${resource.id}/scopes/${scopeId}`, undefined, 204)).received)).toEqual(['Scope.Deleted']);
  });

  // Organization.Membership.Updated as Logto's (packages/core/src/libraries/hook/utils.ts, truncateMembershipDelta):
  // `organizationId`, `addedUserIds` and `removedUserIds` at the top, each omitted when empty.
  it('announces organizations, their members (the delta at the top, as Logto), organization roles and permissions', async () => {
    const org = await eventsOf('POST', '/api/organizations', { name: 'Hooks Inc' }, 201);
    expect(names(org.received)).toEqual(['Organization.Created']);
    const orgId = org.answer.body.id;
    expect(names((await eventsOf('PATCH', `/api/organizations/${orgId}`, { description: 'hooked' }, 200)).received)).toEqual(['Organization.Data.Updated']);

    const { body: ann } = await server.api('POST', '/api/users', { body: { username: 'ann_member' } });
    const { body: bob } = await server.api('POST', '/api/users', { body: { username: 'bob_member' } });
    const membership = (received: Array<{ body: Record<string, unknown> }>) =>
      received.map(({ body }) =>
        Object.fromEntries(Object.entries(body).filter(([key]) => ['event', 'organizationId', 'addedUserIds', 'removedUserIds', 'data'].includes(key))),
      );
    expect(membership((await eventsOf('POST', `/api/organizations/${orgId}/users`, { userIds: [ann.id] }, 201)).received)).toEqual([
      { event: 'Organization.Membership.Updated', organizationId: orgId, addedUserIds: [ann.id] },
    ]);
    expect(membership((await eventsOf('PUT', `/api/organizations/${orgId}/users`, { userIds: [bob.id] }, 204)).received)).toEqual([
      { event: 'Organization.Membership.Updated', organizationId: orgId, addedUserIds: [bob.id], removedUserIds: [ann.id] },
    ]);
    // A PUT of the same set changes nothing and is announced without a delta.
    expect(membership((await eventsOf('PUT', `/api/organizations/${orgId}/users`, { userIds: [bob.id] }, 204)).received)).toEqual([
      { event: 'Organization.Membership.Updated', organizationId: orgId },
    ]);
    expect(membership((await eventsOf('DELETE', `/api/organizations/${orgId}/users/${bob.id}`, undefined, 204)).received)).toEqual([
      { event: 'Organization.Membership.Updated', organizationId: orgId, removedUserIds: [bob.id] },
    ]);

    const read = await eventsOf('POST', '/api/organization-scopes', { name: 'read:hooks' }, 201);
    expect(names(read.received)).toEqual(['OrganizationScope.Created']);
    const readId = read.answer.body.id;
    expect(names((await eventsOf('PATCH', `/api/organization-scopes/${readId}`, { description: 'Read' }, 200)).received)).toEqual([
      'OrganizationScope.Data.Updated',
    ]);
    const { body: edit } = await server.api('POST', '/api/organization-scopes', { body: { name: 'edit:hooks' } });

    const plainRole = await eventsOf('POST', '/api/organization-roles', { name: 'hooks viewer' }, 201);
    expect(names(plainRole.received)).toEqual(['OrganizationRole.Created']);
    const role = await eventsOf('POST', '/api/organization-roles', { name: 'hooks editor', organizationScopeIds: [readId] }, 201);
    expect(names(role.received)).toEqual(['OrganizationRole.Created', 'OrganizationRole.Scopes.Updated']);
    const roleId = role.answer.body.id;
    // Created with its permissions, and shown with them.
    expect(role.received[0]!.body.data).toMatchObject({ id: roleId, scopes: [{ id: readId, name: 'read:hooks' }] });
    expect(names((await eventsOf('PATCH', `/api/organization-roles/${roleId}`, { description: 'Edits' }, 200)).received)).toEqual([
      'OrganizationRole.Data.Updated',
    ]);
    // The organization role's permissions as they now are, beside `organizationRoleId`.
    const scopesOf = (received: Array<{ body: { event: string; organizationRoleId: string; data: Array<{ id: string }> } }>) =>
      received.map(({ body }) => [body.event, body.organizationRoleId, body.data.map(({ id }) => id).sort()]);
    expect(scopesOf((await eventsOf('PUT', `/api/organization-roles/${roleId}/scopes`, { organizationScopeIds: [edit.id] }, 204)).received)).toEqual([
      ['OrganizationRole.Scopes.Updated', roleId, [edit.id]],
    ]);
    expect(scopesOf((await eventsOf('POST', `/api/organization-roles/${roleId}/scopes`, { organizationScopeIds: [readId] }, 201)).received)).toEqual([
      ['OrganizationRole.Scopes.Updated', roleId, [edit.id, readId].sort()],
    ]);
    expect(scopesOf((await eventsOf('DELETE', `/api/organization-roles/${roleId}/scopes/${readId}`, undefined, 204)).received)).toEqual([
      ['OrganizationRole.Scopes.Updated', roleId, [edit.id]],
    ]);

    expect(names((await eventsOf('DELETE', `/api/organization-roles/${plainRole.answer.body.id}`, undefined, 204)).received)).toEqual([
      'OrganizationRole.Deleted',
    ]);
    expect(names((await eventsOf('DELETE', `/api/organization-scopes/${readId}`, undefined, 204)).received)).toEqual(['OrganizationScope.Deleted']);
    expect(names((await eventsOf('DELETE', `/api/organizations/${orgId}`, undefined, 204)).received)).toEqual(['Organization.Deleted']);
  });

  it('announces nothing for writes outside the catalog (applications, resources, a role given through the role)', async () => {
    const { body: user } = await server.api('POST', '/api/users', { body: { username: 'quiet' } });
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'quiet role' } });
    const received = await eventsDuring(server, receiver, async () => {
      await server.create('/api/applications', { name: 'quiet app', type: 'MachineToMachine' });
      await server.create('/api/resources', { name: 'Quiet', indicator: 'https://quiet.example' });
      await server.create(`/api/roles/${role.id}/users`, { userIds: [user.id] });
    });
    expect(names(received)).toEqual([]);
  });

  it('announces nothing for a rejected request, and writes no event', async () => {
    const { body: user } = await server.api('POST', '/api/users', { body: { username: 'taken' } });
    const before = await snapshot(server.database.db);
    const received = await eventsDuring(server, receiver, async () => {
      expect((await server.api('POST', '/api/users', { body: { username: 'taken' } })).status).toBe(422);
      expect((await server.api('PATCH', `/api/users/${user.id}`, { body: { username: 42 } })).status).toBe(400);
      expect((await server.api('DELETE', '/api/roles/nosuchrole')).status).toBe(404);
      expect((await server.api('POST', '/api/roles', { body: { name: 'ghost', scopeIds: ['nosuchscope'] } })).status).toBe(404);
      expect((await server.api('PATCH', `/api/users/${user.id}`, { token: null, body: { name: 'x' } })).status).toBe(401);
    });
    expect(received).toEqual([]);
    expect(await snapshot(server.database.db)).toEqual(before);
  });

  it('delivers each event only to the hooks subscribed to it', async () => {
    const other = await startReceiver();
    try {
      const narrow = await subscribe(server, other, ['Role.Deleted'], 'narrow');
      const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'narrowly watched' } });
      const received = await eventsDuring(server, receiver, () => server.api('DELETE', `/api/roles/${role.id}`));
      expect(names(received)).toEqual(['Role.Deleted']);
      expect(other.received.map(({ body }) => [body.event, body.hookId])).toEqual([['Role.Deleted', narrow.id]]);
      // Both hooks got the same event, under the same id.
      expect(other.received[0]!.id).toBe(received[0]!.id);
    } finally {
      await other.close();
    }
  });
});
