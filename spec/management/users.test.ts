import { snapshot } from '../support/db.js';
import { testPasswordHashing } from '../support/env.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('/api/users', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('users');
  });
  afterAll(async () => {
    await server.close();
  });

  const create = (body: Record<string, unknown>) => server.api('POST', '/api/users', { body });

  it('creates a user with a hashed password that is never returned', async () => {
    const { status, body } = await create({
      username: 'alice',
      primaryEmail: 'Alice@Example.com',
      primaryPhone: '15551234567',
      name: 'Alice',
      password: 'correct horse battery',
      customData: { plan: 'pro', nested: { a: [1, 2] } },
      profile: { givenName: 'Alice', locale: 'en-GB' },
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{12}$/),
      username: 'alice',
      primaryEmail: 'Alice@Example.com',
      primaryPhone: '15551234567',
      name: 'Alice',
      avatar: null,
      customData: { plan: 'pro', nested: { a: [1, 2] } },
      profile: { givenName: 'Alice', locale: 'en-GB' },
      identities: {},
      isSuspended: false,
      hasPassword: true,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      lastSignInAt: null,
    });
    const stored = await server.database.db.collection('users').findOne({ _id: body.id });
    // scrypt at the cost this server is set to (the test servers' least: PASSWORD_SCRYPT), its parameters kept with it.
    const { N, r, p } = testPasswordHashing;
    expect(stored!.passwordHash).toMatch(new RegExp(`^scrypt\\$${N}\\$${r}\\$${p}\\$`));
    expect(JSON.stringify(stored)).not.toContain('correct horse battery');
  });

  it.each([
    ['username', { username: 'alice' }, 'user.username_already_in_use'],
    ['email, whatever its case', { primaryEmail: 'ALICE@example.COM' }, 'user.email_already_in_use'],
    ['phone', { primaryPhone: '15551234567' }, 'user.phone_already_in_use'],
  ])('refuses a taken %s with 422 naming it, writing nothing', async (_field, body, code) => {
    const before = await snapshot(server.database.db);
    const response = await create(body);
    expect(response.status).toBe(422);
    expect(response.body.code).toBe(code);
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('creates users without any identifier (none of the unique fields collide on null)', async () => {
    expect((await create({ name: 'Anonymous one' })).status).toBe(200);
    expect((await create({ name: 'Anonymous two' })).status).toBe(200);
  });

  // Logto's search (packages/core/src/utils/search.ts): `like` by default, so `%` marks where anything may stand.
  it('searches by username, email, phone and name, and paginates', async () => {
    await create({ username: 'bob_builder', primaryEmail: 'bob@build.test', name: 'Bob' });
    await create({ username: 'carol', primaryPhone: '442079460958', name: 'Carol Bobson' });
    const byAny = await server.api('GET', '/api/users?search=%25bob%25');
    expect(byAny.body.map(({ username }: { username: string }) => username).sort()).toEqual(['bob_builder', 'carol']);
    expect(byAny.headers.get('total-number')).toBe('2');
    expect((await server.api('GET', '/api/users?search.primaryEmail=%25BUILD.test')).body.map(({ username }: { username: string }) => username)).toEqual([
      'bob_builder',
    ]);
    expect((await server.api('GET', '/api/users?search.primaryPhone=44207%25')).body).toHaveLength(1);
    expect((await server.api('GET', '/api/users?search.name=%25Bobson%25')).body).toHaveLength(1);
    expect((await server.api('GET', '/api/users?search=.*')).body).toHaveLength(0);
    const page = await server.api('GET', '/api/users?page=1&page_size=2');
    expect(page.body).toHaveLength(2);
    expect(Number(page.headers.get('total-number'))).toBeGreaterThanOrEqual(5);
  });

  it('updates fields, custom data (merged) and profile (merged)', async () => {
    const { body: user } = await create({ username: 'dave', customData: { a: 1 }, profile: { givenName: 'Dave' } });
    const patched = await server.api('PATCH', `/api/users/${user.id}`, {
      body: { name: 'Dave D', primaryEmail: 'dave@x.test', avatar: 'https://img.test/d.png' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Dave D', primaryEmail: 'dave@x.test', avatar: 'https://img.test/d.png', customData: { a: 1 } });
    expect(patched.body.updatedAt).toBeGreaterThanOrEqual(user.updatedAt);

    const customData = await server.api('PATCH', `/api/users/${user.id}/custom-data`, { body: { customData: { b: 2 } } });
    expect(customData.body).toEqual({ a: 1, b: 2 });
    const profile = await server.api('PATCH', `/api/users/${user.id}/profile`, { body: { profile: { familyName: 'D' } } });
    expect(profile.body).toEqual({ givenName: 'Dave', familyName: 'D' });

    const cleared = await server.api('PATCH', `/api/users/${user.id}`, { body: { primaryEmail: null } });
    expect(cleared.body.primaryEmail).toBeNull();
  });

  // Logto's verifyUserPassword (packages/core/src/libraries/user.ts): 422 session.invalid_credentials, with or without a password.
  it('sets and verifies a password', async () => {
    const { body: user } = await create({ username: 'erin' });
    expect(user.hasPassword).toBe(false);
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: 'whatever1' } })).body.code).toBe(
      'session.invalid_credentials',
    );
    const set = await server.api('PATCH', `/api/users/${user.id}/password`, { body: { password: 'new password 1' } });
    expect(set.body.hasPassword).toBe(true);
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: 'new password 1' } })).status).toBe(204);
    const wrong = await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: 'wrong password' } });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({ code: 'session.invalid_credentials', message: 'the password does not match' });
    expect((await server.api('PATCH', `/api/users/${user.id}/password`, { body: { password: 'short' } })).status).toBe(400);
  });

  it('suspends a user, keeping its data and ending its sessions and grants', async () => {
    const { body: user } = await create({ username: 'frank' });
    const db = server.database.db;
    await db.collection('oidc_Session').insertOne({ _id: 'sess-frank' as never, payload: '{}', accountId: user.id });
    await db.collection('oidc_Grant').insertOne({ _id: 'grant-frank' as never, payload: '{}', accountId: user.id });
    const suspended = await server.api('PATCH', `/api/users/${user.id}/is-suspended`, { body: { isSuspended: true } });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ isSuspended: true, username: 'frank' });
    expect(await db.collection('oidc_Session').countDocuments({ accountId: user.id })).toBe(0);
    expect(await db.collection('oidc_Grant').countDocuments({ accountId: user.id })).toBe(0);
    expect((await server.api('PATCH', `/api/users/${user.id}/is-suspended`, { body: { isSuspended: false } })).body.isSuspended).toBe(false);
  });

  it('deletes a user with its role assignments, memberships and sessions', async () => {
    const { body: user } = await create({ username: 'gina' });
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'gina-role' } });
    const { body: organization } = await server.api('POST', '/api/organizations', { body: { name: 'Gina Inc' } });
    const { body: orgRole } = await server.api('POST', '/api/organization-roles', { body: { name: 'gina-org-role' } });
    expect((await server.api('POST', `/api/users/${user.id}/roles`, { body: { roleIds: [role.id] } })).status).toBe(201);
    expect((await server.api('POST', `/api/organizations/${organization.id}/users`, { body: { userIds: [user.id] } })).status).toBe(201);
    expect(
      (await server.api('POST', `/api/organizations/${organization.id}/users/${user.id}/roles`, { body: { organizationRoleIds: [orgRole.id] } })).status,
    ).toBe(201);
    const db = server.database.db;
    await db.collection('oidc_Session').insertOne({ _id: 'sess-gina' as never, payload: '{}', accountId: user.id });

    expect((await server.api('DELETE', `/api/users/${user.id}`)).status).toBe(204);
    for (const [collection, filter] of [
      ['users', { _id: user.id }],
      ['users_roles', { userId: user.id }],
      ['organization_users', { userId: user.id }],
      ['organization_user_roles', { userId: user.id }],
      ['oidc_Session', { accountId: user.id }],
    ] as const) {
      expect(await db.collection(collection).countDocuments(filter as never)).toBe(0);
    }
    expect((await server.api('GET', `/api/users/${user.id}`)).status).toBe(404);
    expect((await server.api('DELETE', `/api/users/${user.id}`)).status).toBe(404);
  });

  it.each([
    [{ username: '1abc' }, 'body.username must match pattern "^[A-Za-z_][A-Za-z0-9_]*$"'],
    [{ primaryEmail: 'not-an-email' }, 'body.primaryEmail must match pattern "^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$"'],
    [{ primaryPhone: '+1 555 abc' }, 'body.primaryPhone must match pattern "^\\+?[0-9 ().-]+$"'],
    [{ password: 'short' }, 'body.password must NOT have fewer than 8 characters'],
    [{ customData: { 'a.b': 1 } }, 'body.customData has a key that is not allowed (`a.b`)'],
    [JSON.parse('{"customData":{"x":{"__proto__":{"admin":true}}}}'), 'body.customData has a key that is not allowed (`__proto__`)'],
  ])('refuses %j with 400 naming the field, writing nothing', async (body, message) => {
    const before = await snapshot(server.database.db);
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'guard.invalid_input', message });
    expect(await snapshot(server.database.db)).toBe(before);
  });

  // Logto's GET /users/:userId/custom-data and /has-password (packages/core/src/routes/admin-user/basics.ts)
  // and /organizations (admin-user/organization.ts).
  it("answers a user's custom data, whether it has a password, and its organizations with its roles there, as Logto", async () => {
    const withPassword = await server.create('/api/users', { username: 'views_of', password: 'a long enough password', customData: { plan: 'pro' } });
    const without = await server.create('/api/users', { username: 'no_password_here' });
    expect(await server.api('GET', `/api/users/${withPassword.id}/custom-data`)).toMatchObject({ status: 200, body: { plan: 'pro' } });
    expect((await server.api('GET', `/api/users/${withPassword.id}/has-password`)).body).toEqual({ hasPassword: true });
    expect((await server.api('GET', `/api/users/${without.id}/has-password`)).body).toEqual({ hasPassword: false });

    const org = await server.create('/api/organizations', { name: 'Views Inc' });
    await server.create('/api/organizations', { name: 'Elsewhere' });
    const [viewer, admin] = [
      await server.create('/api/organization-roles', { name: 'views viewer' }),
      await server.create('/api/organization-roles', { name: 'views admin' }),
    ];
    await server.create(`/api/organizations/${org.id}/users`, { userIds: [withPassword.id] });
    await server.create(`/api/organizations/${org.id}/users/${withPassword.id}/roles`, { organizationRoleIds: [viewer.id, admin.id] });
    const organizations = await server.api('GET', `/api/users/${withPassword.id}/organizations`);
    expect(organizations.body).toEqual([
      expect.objectContaining({
        id: org.id,
        name: 'Views Inc',
        organizationRoles: [
          { id: admin.id, name: 'views admin' },
          { id: viewer.id, name: 'views viewer' },
        ],
      }),
    ]);
    expect((await server.api('GET', `/api/users/${without.id}/organizations`)).body).toEqual([]);
    for (const view of ['custom-data', 'has-password', 'organizations']) expect((await server.api('GET', `/api/users/nobody/${view}`)).status).toBe(404);
  });
});
