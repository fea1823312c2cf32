import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Lists page as Logto's koaPagination (packages/core/src/middleware/koa-pagination.ts): `page` and
 * `page_size`, `Total-Number` and `Link` on a paged answer; where a route declares it optional
 * (`koaPagination({ isOptional: true })`), a request without either gets every row and no header.
 */
describe('lists, paged as Logto pages them', () => {
  let server: TestServer;
  const many = 23; // more than a default page of 20
  let organizationId: string;
  let userId: string;
  let roleId: string;
  let organizationRoleId: string;

  beforeAll(async () => {
    server = await startTestServer('logto-pagination');
    const resource = await server.create('/api/resources', { name: 'Paged', indicator: 'https://paged.example.com' });
    const scopes = [];
    for (let i = 0; i < many; i += 1) {
      await server.create('/api/applications', { name: `app ${i}`, type: 'SPA' });
      await server.create('/api/resources', { name: `resource ${i}`, indicator: `https://paged-${i}.example.com` });
      await server.create('/api/hooks', { name: `hook ${i}`, events: ['User.Created'], config: { url: `https://receiver.example.com/${i}` } });
      await server.create('/api/roles', { name: `paged role ${i}` });
      scopes.push((await server.create(`/api/resources/${resource.id}/scopes`, { name: `paged:${i}` })).id);
    }
    roleId = (await server.create('/api/roles', { name: 'holds many', scopeIds: scopes })).id;

    organizationId = (await server.create('/api/organizations', { name: 'Paged Inc' })).id;
    userId = (await server.create('/api/users', { username: 'paged_member' })).id;
    await server.create(`/api/organizations/${organizationId}/users`, { userIds: [userId] });
    const organizationScopes = [];
    const organizationRoles = [];
    for (let i = 0; i < many; i += 1) {
      organizationScopes.push((await server.create('/api/organization-scopes', { name: `paged:org:${i}` })).id);
      organizationRoles.push((await server.create('/api/organization-roles', { name: `paged org role ${i}` })).id);
    }
    organizationRoleId = (await server.create('/api/organization-roles', { name: 'holds many', organizationScopeIds: organizationScopes })).id;
    await server.create(`/api/organizations/${organizationId}/users/${userId}/roles`, { organizationRoleIds: organizationRoles });
  }, 120_000);
  afterAll(async () => {
    await server.close();
  });

  const optional: Array<[string, () => string, number]> = [
    ['applications/application.ts', () => '/api/applications', many + 1], // and the bootstrap client
    ['resource.ts', () => '/api/resources', many + 2], // and "Paged" and the Management API
    ['hook.ts', () => '/api/hooks', many],
    ['role.scope.ts', () => `/api/roles/${roleId}/scopes`, many],
    ['organization-role/index.ts (scopes)', () => `/api/organization-roles/${organizationRoleId}/scopes`, many],
    ['organization-scope/index.ts (isPaginationOptional)', () => '/api/organization-scopes', many],
    ['organization/user/role-relations.ts', () => `/api/organizations/${organizationId}/users/${userId}/roles`, many],
  ];
  it.each(optional)('optional as Logto %s: without page every row and no Total-Number; with page_size a page', async (_file, path, rows) => {
    const all = await server.api('GET', path());
    expect(all.status).toBe(200);
    expect(all.body.length).toBeGreaterThanOrEqual(rows);
    expect(all.headers.get('total-number')).toBeNull();

    const paged = await server.api('GET', `${path()}?page=2&page_size=5`);
    expect(paged.body).toHaveLength(5);
    expect(Number(paged.headers.get('total-number'))).toBe(all.body.length);
    expect(paged.body.map(({ id }: { id: string }) => id)).toEqual(all.body.slice(5, 10).map(({ id }: { id: string }) => id));
  });

  it('elsewhere (role.ts, admin-user, organization) a list pages by default: 20 rows, Total-Number, and Link to its neighbours (RFC 8288)', async () => {
    for (const path of ['/api/roles', '/api/organization-roles']) {
      const answer = await server.api('GET', path);
      expect(answer.body).toHaveLength(20);
      const total = Number(answer.headers.get('total-number'));
      expect(total).toBeGreaterThan(20);
      const links = answer.headers.get('link');
      expect(links).toContain(`<${path}?page=1>; rel="first"`);
      expect(links).toContain(`<${path}?page=${Math.ceil(total / 20)}>; rel="last"`);
      expect(links).toContain(`<${path}?page=2>; rel="next"`);
      expect(links).not.toContain('rel="prev"');
    }
    const second = await server.api('GET', '/api/roles?page=2&page_size=10');
    expect(second.headers.get('link')).toContain('</api/roles?page=1&page_size=10>; rel="prev"');
  });

  it('a bad page or page size is 400 guard.invalid_pagination, as Logto', async () => {
    for (const query of ['page=0', 'page_size=101', 'page=two']) {
      const answer = await server.api('GET', `/api/applications?${query}`);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'guard.invalid_pagination' });
    }
  });
});
