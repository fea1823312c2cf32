import { generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import * as oauth from 'openid-client';

import { startTestServer, type TestServer } from '../support/server.js';

/** Signs a token with the server's own ES256 key, so that only the claim under test is wrong. */
async function forge(server: TestServer, claims: Record<string, unknown>, { typ = 'at+jwt', expiresIn = '5m' } = {}) {
  const stored = await server.database.db.collection<{ _id: string; keys: JWK[] }>('system').findOne({ _id: 'signing' });
  const jwk = stored!.keys.find(({ alg }) => alg === 'ES256')!;
  return new SignJWT({ scope: 'all', client_id: server.admin.clientId, iss: server.issuer, aud: server.identity.managementApiIndicator, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: jwk.kid!, typ })
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(await importJWK(jwk, 'ES256'));
}

describe('Management API authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('auth');
  });
  afterAll(async () => {
    await server.close();
  });

  const call = (token: string | null, headers: Record<string, string> = {}) => server.api('GET', '/api/applications', { token, headers });

  it('asks every route but the health check, the hooks’ public keys and the API reference for a token, whatever its method', async () => {
    // The public routes, and what they answer here: the health check, and a JWKS of a hook that does not exist.
    const publicRoutes: Record<string, number> = {
      '/api/status': 204,
      '/api/status/ready': 200,
      '/api/hooks/some-id/jwks': 404,
      // The API reference: the document holds no data, and the page renders it.
      '/api/openapi.json': 200,
      '/api/swagger.json': 200,
      '/api/docs': 302,
      '/api/docs/': 200,
      '/api/docs/init.js': 200,
      '/api/docs/swagger-ui.css': 200,
      '/api/docs/swagger-ui-bundle.js': 200,
    };
    const routes = server.managementApi.router.stack.flatMap((layer) =>
      layer.methods.filter((method) => method !== 'HEAD').map((method) => ({ method, path: String(layer.path).replace(/:[A-Za-z]+/g, 'some-id') })),
    );
    expect(routes.length).toBeGreaterThan(60);
    for (const { method, path } of routes) {
      // The reference page and its files are not JSON: asked for as a browser would, without following redirects.
      const { status } = path.startsWith('/api/docs')
        ? await fetch(`${server.url}${path}`, { method, redirect: 'manual' })
        : await server.api(method, path, { token: null });
      expect([method, path, status]).toEqual([method, path, publicRoutes[path] ?? 401]);
    }
  });

  it("answers each request's id in X-Request-Id and Logto's Logto-Core-Request-Id alike (Logto integration-tests health-check.test.ts)", async () => {
    const status = await fetch(`${server.url}/api/status`);
    expect(status.status).toBe(204);
    expect(status.headers.get('logto-core-request-id')).toMatch(/^[A-Za-z0-9_-]{8,}$/);
    expect(status.headers.get('logto-core-request-id')).toBe(status.headers.get('x-request-id'));
    const refused = await fetch(`${server.url}/api/users`, { headers: { 'x-request-id': 'caller-given-1' } });
    expect([refused.status, refused.headers.get('logto-core-request-id')]).toEqual([401, 'caller-given-1']);
  });

  it('answers 401 without an Authorization header, and writes nothing on POST', async () => {
    const before = await server.database.db.collection('applications').countDocuments();
    const { status, body, headers } = await server.api('POST', '/api/applications', { token: null, body: { name: 'x', type: 'SPA' } });
    expect(status).toBe(401);
    expect(body).toEqual({ code: 'auth.authorization_header_missing', message: 'the Authorization header is missing' });
    expect(headers.get('www-authenticate')).toBe('Bearer');
    expect(await server.database.db.collection('applications').countDocuments()).toBe(before);
  });

  it('answers 401 to a header that is not a Bearer token', async () => {
    const { status, body } = await call(null, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(status).toBe(401);
    expect(body.code).toBe('auth.invalid_token');
  });

  it('answers 401 to a malformed token', async () => {
    const { status, body } = await call('not.a.jwt');
    expect(status).toBe(401);
    expect(body).toEqual({ code: 'auth.invalid_token', message: 'the access token is malformed' });
  });

  it('answers 401 to an expired token', async () => {
    const { status, body } = await call(await forge(server, {}, { expiresIn: '-1m' }));
    expect(status).toBe(401);
    expect(body).toEqual({ code: 'auth.invalid_token', message: 'the access token has expired' });
  });

  it('answers 401 to a token for another audience', async () => {
    const { status, body } = await call(await forge(server, { aud: 'https://other.example.com' }));
    expect(status).toBe(401);
    expect(body.message).toBe("the access token's `aud` claim is not accepted here");
  });

  it('answers 401 to a token from another issuer', async () => {
    const { status, body } = await call(await forge(server, { iss: 'https://evil.example.com/oidc' }));
    expect(status).toBe(401);
    expect(body.message).toBe("the access token's `iss` claim is not accepted here");
  });

  it("answers 401 to a token signed by a key that is not the provider's", async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ scope: 'all' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
      .setIssuer(server.issuer)
      .setAudience(server.identity.managementApiIndicator)
      .setExpirationTime('5m')
      .sign(privateKey);
    const { status, body } = await call(token);
    expect(status).toBe(401);
    expect(body.code).toBe('auth.invalid_token');
  });

  it('answers 401 to a JWT that is not an access token (no at+jwt type)', async () => {
    const { status, body } = await call(await forge(server, {}, { typ: 'JWT' }));
    expect(status).toBe(401);
    expect(body.code).toBe('auth.invalid_token');
  });

  it('answers 403 to a valid token without the `all` scope', async () => {
    const created = await server.api('POST', '/api/applications', { body: { name: 'scopeless', type: 'MachineToMachine' } });
    const config = await server.discover(created.body.id, created.body.secret);
    const { access_token } = await oauth.clientCredentialsGrant(config, { resource: server.identity.managementApiIndicator });
    const { status, body, headers } = await call(access_token);
    expect(status).toBe(403);
    expect(body).toEqual({ code: 'auth.forbidden', message: 'the access token lacks the required scope (all or impersonation or hook-events)' });
    expect(headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope"');
  });

  it('admits a valid token with the `all` scope', async () => {
    expect((await call(await server.adminToken())).status).toBe(200);
  });

  it('asks for a token before telling whether a route exists', async () => {
    expect((await server.api('GET', '/api/no-such-route', { token: null })).status).toBe(401);
    const { status, body } = await server.api('GET', '/api/no-such-route');
    expect(status).toBe(404);
    expect(body).toEqual({ code: 'route.not_found', message: 'GET /api/no-such-route matches no route' });
  });

  it('answers 405 with Allow to a known path with another method', async () => {
    const { status, body, headers } = await server.api('PUT', '/api/applications');
    expect(status).toBe(405);
    expect(body.code).toBe('route.method_not_allowed');
    expect(headers.get('allow')).toContain('POST');
  });

  it('leaves the health check open, and it tells nothing', async () => {
    const { status, body } = await server.api('GET', '/api/status', { token: null });
    expect(status).toBe(204);
    expect(body).toBeUndefined();
  });
});
