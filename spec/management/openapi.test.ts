import { Validator } from '@seriousme/openapi-schema-validator';

import { startTestServer, type TestServer } from '../support/server.js';

describe('the OpenAPI document', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('openapi');
  });
  afterAll(async () => {
    await server.close();
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

  it("is also at Logto's path, and needs a token like every route but the health check", async () => {
    expect((await server.api('GET', '/api/swagger.json')).body).toEqual((await server.api('GET', '/api/openapi.json')).body);
    expect((await server.api('GET', '/api/openapi.json', { token: null })).status).toBe(401);
  });

  it('lists every route of the Management API with the schemas that validate it', async () => {
    const { body } = await server.api('GET', '/api/openapi.json');
    const routes = server.managementApi.router.stack
      .filter((layer) => layer.methods.length > 0)
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
