import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Logto's `koaGuard` (packages/core/src/middleware/koa-guard.ts) parses bodies with zod, which strips
 * the keys a schema does not name: a client that sends more than a route knows still works, and only
 * the named fields ever reach the handler. A partial update that names nothing the route can change
 * is 422 `entity.invalid_input`.
 */
describe('request bodies, as Logto reads them', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('logto-bodies');
  });
  afterAll(async () => {
    await server.close();
  });

  describe('fields a route does not name are ignored, never applied', () => {
    it('a user (admin-user/basics.ts): status, password hash, id and unknown profile fields cannot be set by the back door', async () => {
      const created = await server.api('POST', '/api/users', {
        body: { username: 'stripped', id: 'chosen-id', isSuspended: true, passwordHash: 'x', hasPassword: true, profile: { nickname: 'S', shoeSize: 9 } },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ username: 'stripped', isSuspended: false, hasPassword: false, profile: { nickname: 'S' } });
      expect(created.body.id).not.toBe('chosen-id');
      expect(created.body.profile).not.toHaveProperty('shoeSize');
      const stored = await server.database.db.collection('users').findOne({ _id: created.body.id });
      expect(stored?.passwordHash).toBeNull();
      expect(stored?.isSuspended).toBe(false);

      const patched = await server.api('PATCH', `/api/users/${created.body.id}`, { body: { name: 'Stripped', isSuspended: true, createdAt: 1 } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: 'Stripped', isSuspended: false });
      expect(patched.body.createdAt).toBe(created.body.createdAt);
    });

    it('an application (applications/application.ts): a chosen secret or a type change is not taken', async () => {
      const created = await server.api('POST', '/api/applications', { body: { name: 'Stripped app', type: 'SPA', secret: 'mine', isAdmin: true } });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ name: 'Stripped app', type: 'SPA' });
      expect(await server.database.db.collection('application_secrets').countDocuments({ applicationId: created.body.id })).toBe(0);

      const patched = await server.api('PATCH', `/api/applications/${created.body.id}`, { body: { name: 'Renamed', type: 'Traditional' } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: 'Renamed', type: 'SPA' });
    });

    it('a resource, an organization scope and a hook (resource.ts, organization-scope, hook.ts): built-in flags and signing keys stay ours', async () => {
      const resource = await server.api('POST', '/api/resources', { body: { name: 'R', indicator: 'https://stripped.example.com', isBuiltIn: true } });
      expect(resource.status).toBe(201);
      const scope = await server.api('POST', '/api/organization-scopes', { body: { name: 'stripped:read', isBuiltIn: true } });
      expect(scope.status).toBe(201);
      for (const [collection, id] of [
        ['resources', resource.body.id],
        ['organization_scopes', scope.body.id],
      ]) {
        expect(await server.database.db.collection(collection).findOne({ _id: id })).not.toHaveProperty('isBuiltIn', true);
      }

      const hook = await server.api('POST', '/api/hooks', {
        body: { name: 'h', events: ['User.Created'], config: { url: 'https://receiver.example.com/hook' }, signingKey: 'whsec_mine' },
      });
      expect(hook.status).toBe(201);
      expect(hook.body.signingKey).not.toBe('whsec_mine');
    });

    it('a query parameter a list does not know is ignored as well', async () => {
      const listed = await server.api('GET', '/api/applications?page=1&page_size=5&utm_source=logto-console');
      expect(listed.status).toBe(200);
    });
  });

  describe('a partial update that names no field it can change is 422 entity.invalid_input and writes nothing', () => {
    let ids: Record<string, string>;
    beforeAll(async () => {
      const resource = await server.create('/api/resources', { name: 'Patchable', indicator: 'https://patchable.example.com' });
      const scope = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'patch:read' });
      ids = {
        user: (await server.create('/api/users', { username: 'patchable' })).id,
        application: (await server.create('/api/applications', { name: 'Patchable', type: 'SPA' })).id,
        role: (await server.create('/api/roles', { name: 'patchable', description: 'd' })).id,
        resource: resource.id,
        scope: scope.id,
        organization: (await server.create('/api/organizations', { name: 'Patchable' })).id,
        organizationRole: (await server.create('/api/organization-roles', { name: 'patchable' })).id,
        organizationScope: (await server.create('/api/organization-scopes', { name: 'patchable' })).id,
        hook: (await server.create('/api/hooks', { name: 'h', events: ['User.Created'], config: { url: 'https://receiver.example.com/hook' } })).id,
      };
    });

    const routes: Array<[string, (ids: Record<string, string>) => string]> = [
      ['admin-user/basics.ts', (i) => `/api/users/${i.user}`],
      ['applications/application.ts', (i) => `/api/applications/${i.application}`],
      ['role.ts', (i) => `/api/roles/${i.role}`],
      ['resource.ts', (i) => `/api/resources/${i.resource}`],
      ['resource.ts (scopes)', (i) => `/api/resources/${i.resource}/scopes/${i.scope}`],
      ['organization/index.ts', (i) => `/api/organizations/${i.organization}`],
      ['organization-role/index.ts', (i) => `/api/organization-roles/${i.organizationRole}`],
      ['organization-scope/index.ts', (i) => `/api/organization-scopes/${i.organizationScope}`],
      ['hook.ts', (i) => `/api/hooks/${i.hook}`],
    ];
    it.each(routes)('PATCH as Logto %s: {} and a body of unknown fields', async (_file, path) => {
      const before = await snapshot(server.database.db);
      for (const body of [{}, { notAField: 1 }]) {
        const answer = await server.api('PATCH', path(ids), { body });
        expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 422, code: 'entity.invalid_input' });
      }
      expect(await snapshot(server.database.db)).toBe(before);
    });

    it('a resource indicator cannot be changed: the PATCH names nothing else and is 422', async () => {
      const answer = await server.api('PATCH', `/api/resources/${ids.resource}`, { body: { indicator: 'https://elsewhere.example.com' } });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 422, code: 'entity.invalid_input' });
      expect((await server.api('GET', `/api/resources/${ids.resource}`)).body.indicator).toBe('https://patchable.example.com');
    });
  });
});
