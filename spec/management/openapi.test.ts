import { Validator } from '@seriousme/openapi-schema-validator';

import { compileAllGuards } from '../../lib/http/guard.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('the OpenAPI document', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('openapi');
  });
  afterAll(async () => {
    await server.close();
  });

  it("compiles: every route's schemas are ones ajv accepts (they are otherwise compiled at a route's first request)", () => {
    expect(compileAllGuards()).toBeGreaterThan(200);
  });

  it('compiles each schema once in a process, however many apps it makes: another server adds none', async () => {
    const before = compileAllGuards();
    const other = await startTestServer('openapi-other');
    try {
      expect(compileAllGuards()).toBe(before);
    } finally {
      await other.close();
    }
  });

  it('is valid OpenAPI 3.1', async () => {
    const { status, body } = await server.api('GET', '/api/openapi.json');
    expect(status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(body);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is found from the front door: GET / names the issuer, its discovery, the reference and this document, and each answers', async () => {
    const front = await fetch(`${server.url}/`);
    expect(front.status).toBe(200);
    const links = (await front.json()) as { issuer: string; discovery: string; managementApi: { reference: string; openapi: string }; health: string };
    expect(links.issuer).toBe(server.issuer);
    for (const url of [links.discovery, links.managementApi.reference, links.managementApi.openapi, links.health]) {
      expect([200, 204]).toContain((await fetch(url)).status);
    }
    expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(404);
  });

  it("is also at Logto's path, in Logto's version (OpenAPI 3.0), and needs no token (it holds no data)", async () => {
    const open = await server.api('GET', '/api/openapi.json', { token: null });
    expect(open.status).toBe(200);
    const logtos = await server.api('GET', '/api/swagger.json', { token: null });
    expect([logtos.status, logtos.body.openapi, open.body.openapi]).toEqual([200, '3.0.3', '3.1.0']);
    expect(logtos.body.paths).toEqual(expect.objectContaining(Object.fromEntries(Object.keys(open.body.paths).map((path) => [path, expect.any(Object)]))));
  });

  it('gives every operation a unique id, a summary, the scopes it needs and its error answers', async () => {
    const { body } = await server.api('GET', '/api/openapi.json', { token: null });
    type Operation = {
      route: string;
      operationId: string;
      summary: string;
      security?: unknown[];
      responses: Record<string, { description: string }>;
      'x-scopes': string[];
    };
    const operations = Object.entries(body.paths as Record<string, Record<string, Omit<Operation, 'route'>>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]): Operation => ({ route: `${method.toUpperCase()} ${path}`, ...operation })),
    );
    expect(new Set(operations.map(({ operationId }) => operationId)).size).toBe(operations.length);
    for (const operation of operations) {
      expect([operation.route, typeof operation.operationId, typeof operation.summary]).toEqual([operation.route, 'string', 'string']);
      expect(operation.responses['400']).toBeDefined();
      if (operation.security?.length === 0) continue;
      expect([operation.route, operation['x-scopes'].length > 0, operation.responses['403'].description]).toEqual([
        operation.route,
        true,
        expect.stringContaining('scope'),
      ]);
    }
    const byRoute = new Map(operations.map((operation) => [operation.route, operation]));
    expect(byRoute.get('GET /api/users/{userId}/roles')).toMatchObject({
      operationId: 'getUsersByUserIdRoles',
      summary: 'List the roles of a user',
      'x-scopes': ['all'],
    });
    expect(byRoute.get('POST /api/subject-tokens')).toMatchObject({
      'x-scopes': ['all', 'impersonation'],
      security: [{ managementApi: ['all'] }, { managementApi: ['impersonation'] }],
    });
    expect(byRoute.get('POST /api/impersonations/{id}/revoke')!.summary).toBe('Revoke an impersonation');
    expect(byRoute.get('GET /api/hook-events')!['x-scopes']).toEqual(['all', 'hook-events']);
    expect(body.components.securitySchemes.managementApi.flows.clientCredentials.tokenUrl).toBe(`${server.issuer}/token`);
  });

  it('is rendered at /api/docs by a viewer served from our own origin, under a policy that allows no other', async () => {
    const page = await fetch(`${server.url}/api/docs/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    const html = await page.text();
    // No inline script, and nothing from another origin.
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script [^>]*src="https?:/);
    for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, found]) => found!).filter((found) => !found.startsWith('/api/docs/'))) {
      const asset = await fetch(new URL(src, `${server.url}/api/docs/`));
      expect([src, asset.status]).toEqual([src, 200]);
    }
    expect(await (await fetch(`${server.url}/api/docs/init.js`)).text()).toContain('../openapi.json');
  });

  it('lists every route of the Management API with the schemas that validate it', async () => {
    const { body } = await server.api('GET', '/api/openapi.json');
    const routes = server.managementApi.router.stack
      // The reference page's own files are not operations of the API.
      .filter((layer) => layer.methods.length > 0 && !String(layer.path).startsWith('/api/docs'))
      .flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`));
    const documented = Object.entries(body.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual([...new Set(routes)].sort());
    for (const route of [
      'POST /api/users',
      'PATCH /api/users/{userId}/is-suspended',
      'PUT /api/organizations/{id}/users',
      'DELETE /api/organization-roles/{id}/scopes/{organizationScopeId}',
      'GET /api/organizations/{id}/users/{userId}/roles',
    ]) {
      expect(documented).toContain(route);
    }
    const createUser = body.paths['/api/users'].post;
    expect(createUser.requestBody.content['application/json'].schema.properties.username).toMatchObject({ type: ['string', 'null'] });
    expect(createUser.responses['200'].content['application/json'].schema.properties).not.toHaveProperty('passwordHash');
    expect(body.paths['/api/status'].get.security).toEqual([]);
  });
});
