import { consoleBuiltIn } from '../../console/built-in.js';
import { consoleHelpers } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * API resources, permissions, roles and their assignments in the console (issue 42), and a
 * machine-to-machine application's roles and an application's look: each made through the
 * Management API's handlers, refusals said at the field with nothing made, removals confirmed.
 */
describe('the console: API resources, roles and applications’ roles', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    server = await startTestServer('console-access');
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body === undefined ? undefined : { body });
  const idFrom = (location: string | null) => location!.split('?')[0]!.split('/').pop()!;

  it('creates an API resource (a bad indicator said at the field), adds a permission, deletes it and the resource after confirming', async () => {
    const admin = await helpers.administrator('console_access_ann');
    const count = async () => ((await api('GET', '/api/resources?page=1&page_size=100')).body as unknown[]).length;
    const before = await count();
    const bad = await admin.submit('/console/resources/new', '/console/resources/new', { name: 'Invoices', indicator: 'not a uri' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/id="indicator"[^>]*aria-invalid="true"/);
    expect(await count()).toBe(before);
    const created = await admin.submit('/console/resources/new', '/console/resources/new', { name: 'Invoices', indicator: 'https://invoices.test' });
    expect(created.status).toBe(303);
    const id = idFrom(created.headers.get('location'));
    const page = `/console/resources/${id}`;
    expect(await (await admin.browser.go(page)).text()).toContain('https://invoices.test');

    const spaced = await admin.submit(page, `${page}/permissions`, { name: 'read invoices', description: '' });
    expect(spaced.status).toBe(400);
    expect(await spaced.text()).toMatch(/id="permission-name"[^>]*aria-invalid="true"/);
    const added = await admin.submit(page, `${page}/permissions`, { name: 'invoices:read', description: 'Read invoices' });
    expect(added.status).toBe(303);
    expect(await (await admin.browser.go(added.headers.get('location')!)).text()).toContain('The permission is added.');
    const [scope] = (await api('GET', `/api/resources/${id}/scopes`)).body as Array<{ id: string; name: string }>;
    expect(scope).toMatchObject({ name: 'invoices:read' });
    const changes = (await api('GET', `/api/changes?entityId=${scope!.id}`)).body as Array<{ origin: { type?: string; id?: string } }>;
    expect(changes[0]?.origin).toMatchObject({ type: 'user', id: admin.id });

    const removePermission = `${page}/permissions/${scope!.id}/delete`;
    expect((await admin.browser.go(removePermission)).status).toBe(200);
    expect((await admin.submit(removePermission, removePermission)).status).toBe(303);
    expect((await api('GET', `/api/resources/${id}/scopes`)).body).toEqual([]);
    expect((await admin.browser.go(`${page}/permissions/no-such-scope/delete`)).status).toBe(404);

    const deleted = await admin.submit(`${page}/delete`, `${page}/delete`);
    expect(deleted.status).toBe(303);
    expect((await api('GET', `/api/resources/${id}`)).status).toBe(404);
  });

  it('creates a user role, gives it a permission and a user (an unknown user refused with the API’s words), takes them away after confirming, deletes it', async () => {
    const admin = await helpers.administrator('console_access_ben');
    const resource = await server.create('/api/resources', { name: 'Reports', indicator: 'https://reports.test' });
    const scope = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'reports:read' });
    const member = await helpers.person('console_access_member', { role: false, factor: false });

    const unnamed = await admin.submit('/console/roles/new', '/console/roles/new', { name: '', description: 'x', type: 'User' });
    expect(unnamed.status).toBe(400);
    expect(await unnamed.text()).toMatch(/id="name"[^>]*aria-invalid="true"/);
    const created = await admin.submit('/console/roles/new', '/console/roles/new', { name: 'Analyst', description: 'Reads reports', type: 'User' });
    expect(created.status).toBe(303);
    const roleId = idFrom(created.headers.get('location'));
    const page = `/console/roles/${roleId}`;
    expect(await (await admin.browser.go(page)).text()).toContain(`<option value="${scope.id}">reports:read</option>`);

    expect((await admin.submit(page, `${page}/permissions`, { scopeId: scope.id })).status).toBe(303);
    expect(((await api('GET', `/api/roles/${roleId}/scopes`)).body as Array<{ id: string }>).map(({ id }) => id)).toEqual([scope.id]);

    const unknown = await admin.submit(page, `${page}/users`, { userId: 'no-such-user' });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toMatch(/id="userId"[^>]*aria-invalid="true"/);
    expect((await api('GET', `/api/roles/${roleId}/users`)).body).toEqual([]);
    const given = await admin.submit(page, `${page}/users`, { userId: member.id });
    expect(given.status).toBe(303);
    expect(await (await admin.browser.go(given.headers.get('location')!)).text()).toContain('The user holds the role now.');
    expect(((await api('GET', `/api/users/${member.id}/roles`)).body as Array<{ id: string }>).map(({ id }) => id)).toEqual([roleId]);

    const takeAway = `${page}/users/${member.id}/remove`;
    expect((await admin.browser.go(takeAway)).status).toBe(200);
    expect((await admin.submit(takeAway, takeAway)).status).toBe(303);
    expect((await api('GET', `/api/users/${member.id}/roles`)).body).toEqual([]);
    const dropPermission = `${page}/permissions/${scope.id}/remove`;
    expect((await admin.submit(dropPermission, dropPermission)).status).toBe(303);
    expect((await api('GET', `/api/roles/${roleId}/scopes`)).body).toEqual([]);

    expect((await admin.submit(`${page}/delete`, `${page}/delete`)).status).toBe(303);
    expect((await api('GET', `/api/roles/${roleId}`)).status).toBe(404);
  });

  it('a machine-to-machine role is given from the application’s page and taken away from the role’s; the application’s look is saved, a bad colour said at the field', async () => {
    const admin = await helpers.administrator('console_access_cy');
    const role = await server.create('/api/roles', { name: 'Exporter', description: 'Exports', type: 'MachineToMachine' });
    const application = await server.create('/api/applications', { name: 'Nightly export', type: 'MachineToMachine' });
    const page = `/console/applications/${application.id}`;
    const shown = await (await admin.browser.go(page)).text();
    expect(shown).toContain('Machine-to-machine roles');
    expect(shown).toContain(`<option value="${role.id}">Exporter</option>`);
    const given = await admin.submit(page, `${page}/roles`, { roleId: role.id });
    expect(given.status).toBe(303);
    expect(((await api('GET', `/api/applications/${application.id}/roles`)).body as Array<{ id: string }>).map(({ id }) => id)).toEqual([role.id]);
    expect(await (await admin.browser.go(`/console/roles/${role.id}`)).text()).toContain('Nightly export');
    const takeAway = `/console/roles/${role.id}/applications/${application.id}/remove`;
    expect((await admin.submit(takeAway, takeAway)).status).toBe(303);
    expect((await api('GET', `/api/applications/${application.id}/roles`)).body).toEqual([]);
    // A user role is not for an application: the API's refusal, nothing given.
    const userRole = await server.create('/api/roles', { name: 'Not for machines', description: 'x', type: 'User' });
    expect((await admin.submit(page, `${page}/roles`, { roleId: userRole.id })).status).toBe(400);
    expect((await api('GET', `/api/applications/${application.id}/roles`)).body).toEqual([]);

    // Renamed; a web application's URIs edited, a bad one said at the field.
    const web = await server.create('/api/applications', { name: 'Shop', type: 'Traditional', oidcClientMetadata: { redirectUris: ['https://shop.test/cb'] } });
    const edit = `/console/applications/${web.id}/edit`;
    expect(await (await admin.browser.go(edit)).text()).toContain('https://shop.test/cb');
    const badUri = await admin.submit(edit, edit, { name: 'Shop', redirectUris: 'not a uri', postLogoutRedirectUris: '' });
    expect(badUri.status).toBe(400);
    expect(await badUri.text()).toMatch(/id="redirectUris"[^>]*aria-invalid="true"/);
    const edited = await admin.submit(edit, edit, {
      name: 'Shop 2',
      redirectUris: 'https://shop.test/cb\nhttps://shop.test/cb2',
      postLogoutRedirectUris: 'https://shop.test/bye',
    });
    expect(edited.status).toBe(303);
    expect((await api('GET', `/api/applications/${web.id}`)).body).toMatchObject({
      name: 'Shop 2',
      oidcClientMetadata: { redirectUris: ['https://shop.test/cb', 'https://shop.test/cb2'], postLogoutRedirectUris: ['https://shop.test/bye'] },
    });

    const look = `${page}/look`;
    const badColour = await admin.submit(look, look, { displayName: 'Export robot', primaryColor: 'blue' });
    expect(badColour.status).toBe(400);
    expect(await badColour.text()).toMatch(/id="primaryColor"[^>]*aria-invalid="true"/);
    expect((await api('GET', `/api/applications/${application.id}/sign-in-experience`)).status).toBe(404);
    const saved = await admin.submit(look, look, { displayName: 'Export robot', primaryColor: '#0055aa', termsOfUseUrl: 'https://export.test/terms' });
    expect(saved.status).toBe(303);
    expect((await api('GET', `/api/applications/${application.id}/sign-in-experience`)).body).toMatchObject({
      displayName: 'Export robot',
      color: { primaryColor: '#0055aa' },
      termsOfUseUrl: 'https://export.test/terms',
      privacyPolicyUrl: null,
    });
    expect(await (await admin.browser.go(look)).text()).toContain('value="Export robot"');
  });

  it('the console’s own role, its permission and its application cannot be deleted, from the console or the API: nobody could enter again', async () => {
    const admin = await helpers.administrator('console_access_dee');
    const role = `/console/roles/${consoleBuiltIn.roleId}`;
    const refused = await admin.submit(`${role}/delete`, `${role}/delete`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('cannot be deleted');
    expect((await api('DELETE', `/api/roles/${consoleBuiltIn.roleId}`)).body).toMatchObject({ code: 'role.built_in' });
    expect((await api('DELETE', `/api/roles/${consoleBuiltIn.roleId}/scopes/${consoleBuiltIn.scopeId}`)).body).toMatchObject({ code: 'role.built_in' });
    const application = `/console/applications/${consoleBuiltIn.applicationId}`;
    expect((await admin.submit(`${application}/delete`, `${application}/delete`)).status).toBe(400);
    expect((await api('DELETE', `/api/applications/${consoleBuiltIn.applicationId}`)).body).toMatchObject({ code: 'application.built_in' });
    // Still in: the role, its permission and the application are as they were.
    expect((await admin.browser.go('/console/users')).status).toBe(200);
    expect(((await api('GET', `/api/roles/${consoleBuiltIn.roleId}/scopes`)).body as Array<{ id: string }>).map(({ id }) => id)).toEqual([
      consoleBuiltIn.scopeId,
    ]);
  });

  it('a choice offers every role, past the API’s first page of 100; a long list of holders says it shows the first 100 of how many', async () => {
    const admin = await helpers.administrator('console_access_eli');
    const made: Array<{ id: string }> = [];
    for (let index = 0; index < 101; index += 1)
      made.push(await server.create('/api/roles', { name: `Bulk role ${String(index).padStart(3, '0')}`, description: 'bulk', type: 'User' }));
    const policy = await (await admin.browser.go('/console/impersonation-policy')).text();
    for (const role of [made[0]!, made[100]!]) expect(policy).toContain(`value="${role.id}"`);
    expect(await (await admin.browser.go('/console/roles')).text()).toContain('Bulk role 100');
    const holders = await Promise.all(Array.from({ length: 101 }, (_, index) => server.create('/api/users', { username: `bulk_holder_${index}` })));
    // The API takes at most 100 ids a request.
    for (const batch of [holders.slice(0, 100), holders.slice(100)]) {
      expect((await api('POST', `/api/roles/${made[0]!.id}/users`, { userIds: batch.map(({ id }) => id) })).status).toBe(201);
    }
    expect(await (await admin.browser.go(`/console/roles/${made[0]!.id}`)).text()).toContain('The first 100 of 101');
  });
});
