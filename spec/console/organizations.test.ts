import { consoleHelpers } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Organizations in the console (issue 42): created, members added (an unknown one refused at the
 * field), a role of the template given and taken away, an invitation sent by email (a bad address and a
 * second pending one refused, nothing made) and revoked, the
 * organization deleted; the roles template's roles and permissions.
 */
describe('the console: organizations and the roles template', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    server = await startTestServer('console-organizations');
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body === undefined ? undefined : { body });

  it('builds the roles template: a role, a permission, the permission given to the role and taken away, each deleted after confirming', async () => {
    const admin = await helpers.administrator('console_org_ava');
    const path = '/console/organization-template';
    const unnamed = await admin.submit(path, `${path}/roles`, { name: '' });
    expect(unnamed.status).toBe(400);
    expect(await unnamed.text()).toMatch(/id="roleName"[^>]*aria-invalid="true"/);
    expect((await admin.submit(path, `${path}/roles`, { name: 'Billing admin' })).status).toBe(303);
    expect((await admin.submit(path, `${path}/permissions`, { name: 'invoices:approve', description: 'Approve invoices' })).status).toBe(303);
    const [role] = ((await api('GET', '/api/organization-roles')).body as Array<{ id: string; name: string }>).filter(({ name }) => name === 'Billing admin');
    const [scope] = (await api('GET', '/api/organization-scopes')).body as Array<{ id: string }>;
    const given = await admin.submit(path, `${path}/roles/${role!.id}/permissions`, { organizationScopeId: scope!.id });
    expect(given.status).toBe(303);
    expect(((await api('GET', `/api/organization-roles/${role!.id}/scopes`)).body as Array<{ id: string }>).map(({ id }) => id)).toEqual([scope!.id]);
    const page = await (await admin.browser.go(path)).text();
    expect(page).toContain('<code>invoices:approve</code>');
    const take = `${path}/roles/${role!.id}/permissions/${scope!.id}/remove`;
    expect((await admin.submit(take, take)).status).toBe(303);
    expect((await api('GET', `/api/organization-roles/${role!.id}/scopes`)).body).toEqual([]);
    const dropScope = `${path}/permissions/${scope!.id}/delete`;
    expect((await admin.submit(dropScope, dropScope)).status).toBe(303);
    expect((await api('GET', '/api/organization-scopes')).body).toEqual([]);
    const dropRole = `${path}/roles/${role!.id}/delete`;
    expect((await admin.submit(dropRole, dropRole)).status).toBe(303);
    expect((await api('GET', `/api/organization-roles/${role!.id}`)).status).toBe(404);
  });

  it('creates an organization, adds a member and gives them a role there, invites by email, revokes the invitation, removes the member, deletes it', async () => {
    const admin = await helpers.administrator('console_org_bea');
    const member = await helpers.person('console_org_member', { role: false, factor: false });
    const role = await server.create('/api/organization-roles', { name: 'Viewer' });

    const created = await admin.submit('/console/organizations/new', '/console/organizations/new', { name: 'Initech', description: 'Printers' });
    expect(created.status).toBe(303);
    const path = created.headers.get('location')!;
    const id = path.split('/').pop()!;

    const unknown = await admin.submit(path, `${path}/members`, { userId: 'nobody-here' });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toMatch(/id="userId"[^>]*aria-invalid="true"/);
    expect((await api('GET', `/api/organizations/${id}/users`)).body).toEqual([]);
    expect((await admin.submit(path, `${path}/members`, { userId: member.id })).status).toBe(303);
    const gave = await admin.submit(path, `${path}/members/${member.id}/roles`, { organizationRoleId: role.id });
    expect(gave.status).toBe(303);
    expect(await (await admin.browser.go(gave.headers.get('location')!)).text()).toContain('The member holds the role now.');
    expect(((await api('GET', `/api/organizations/${id}/users/${member.id}/roles`)).body as Array<{ id: string }>).map(({ id: held }) => held)).toEqual([
      role.id,
    ]);
    const takeRole = `${path}/members/${member.id}/roles/${role.id}/remove`;
    expect((await admin.submit(takeRole, takeRole)).status).toBe(303);
    expect((await api('GET', `/api/organizations/${id}/users/${member.id}/roles`)).body).toEqual([]);

    const badEmail = await admin.submit(path, `${path}/invitations`, { invitee: 'not-an-email', organizationRoleId: '' });
    expect(badEmail.status).toBe(400);
    expect(await badEmail.text()).toMatch(/id="invitee"[^>]*aria-invalid="true"/);
    expect((await api('GET', `/api/organization-invitations?organizationId=${id}`)).body).toEqual([]);
    // Sent by the API's email connector (the test server's), as Logto's console sends it.
    const invited = await admin.submit(path, `${path}/invitations`, { invitee: 'newcomer@initech.test', organizationRoleId: role.id, send: 'yes' });
    expect(invited.status).toBe(303);
    expect(await (await admin.browser.go(invited.headers.get('location')!)).text()).toContain('The invitation is sent.');
    const [invitation] = (await api('GET', `/api/organization-invitations?organizationId=${id}`)).body as Array<{ id: string; inviterId: string }>;
    expect(invitation).toMatchObject({ inviterId: admin.id, status: 'Pending', organizationRoles: [{ id: role.id, name: 'Viewer' }] });
    // A second one to the same address while the first is pending: the API's refusal, said on the page.
    const again = await admin.submit(path, `${path}/invitations`, { invitee: 'newcomer@initech.test', organizationRoleId: '' });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
    expect((await api('GET', `/api/organization-invitations?organizationId=${id}`)).body).toHaveLength(1);
    // Under another organization's address, it is not found, and stays pending.
    const other = await server.create('/api/organizations', { name: 'Elsewhere' });
    const elsewhere = `/console/organizations/${other.id}/invitations/${invitation!.id}/revoke`;
    expect((await admin.browser.go(elsewhere)).status).toBe(404);
    expect((await api('GET', `/api/organization-invitations/${invitation!.id}`)).body.status).toBe('Pending');
    const revoke = `${path}/invitations/${invitation!.id}/revoke`;
    expect((await admin.submit(revoke, revoke)).status).toBe(303);
    expect((await api('GET', `/api/organization-invitations/${invitation!.id}`)).body.status).toBe('Revoked');

    // Just-in-time membership: a domain (a bad one said at the field) and a role given on joining, each removed after confirming.
    const badDomain = await admin.submit(path, `${path}/jit/domains`, { emailDomain: 'not a domain' });
    expect(badDomain.status).toBe(400);
    expect(await badDomain.text()).toMatch(/id="emailDomain"[^>]*aria-invalid="true"/);
    expect((await admin.submit(path, `${path}/jit/domains`, { emailDomain: 'initech.test' })).status).toBe(303);
    expect((await admin.submit(path, `${path}/jit/roles`, { organizationRoleId: role.id })).status).toBe(303);
    expect((await api('GET', `/api/organizations/${id}/jit/email-domains`)).body).toEqual([{ organizationId: id, emailDomain: 'initech.test' }]);
    expect(((await api('GET', `/api/organizations/${id}/jit/roles`)).body as Array<{ id: string }>).map(({ id: held }) => held)).toEqual([role.id]);
    const dropDomain = `${path}/jit/domains/initech.test/remove`;
    expect((await admin.submit(dropDomain, dropDomain)).status).toBe(303);
    const dropRole = `${path}/jit/roles/${role.id}/remove`;
    expect((await admin.submit(dropRole, dropRole)).status).toBe(303);
    expect((await api('GET', `/api/organizations/${id}/jit/email-domains`)).body).toEqual([]);
    expect((await api('GET', `/api/organizations/${id}/jit/roles`)).body).toEqual([]);

    const removeMember = `${path}/members/${member.id}/remove`;
    expect((await admin.submit(removeMember, removeMember)).status).toBe(303);
    expect((await api('GET', `/api/organizations/${id}/users`)).body).toEqual([]);
    expect((await admin.submit(`${path}/delete`, `${path}/delete`)).status).toBe(303);
    expect((await api('GET', `/api/organizations/${id}`)).status).toBe(404);
    expect((await admin.browser.go(path)).status).toBe(404);
  });
});
