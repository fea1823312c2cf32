import * as oauth from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';

import { startTestServer, type TestServer } from '../support/server.js';

describe('client_credentials through a real OAuth client', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('cc');
  });
  afterAll(async () => {
    await server.close();
  });

  it('serves discovery under /oidc with the issuer it was given', async () => {
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(server.issuer);
    expect(metadata.token_endpoint).toBe(`${server.issuer}/token`);
    expect(metadata.grant_types_supported).toContain('client_credentials');
  });

  it('issues an ES256 JWT for the Management API that verifies against the published JWKS', async () => {
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('all');
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!.replace(server.url, `http://localhost:${server.port}`)));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: server.issuer,
      audience: server.identity.managementApiIndicator,
      typ: 'at+jwt',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ client_id: server.admin.clientId, sub: server.admin.clientId, scope: 'all' });
  });

  it('grants no scope the application does not hold through its roles', async () => {
    const created = await server.api('POST', '/api/applications', { body: { name: 'no roles', type: 'MachineToMachine' } });
    expect(created.status).toBe(200);
    const config = await server.discover(created.body.id, created.body.secret);
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
    // RFC 6749 §5.1: an issued scope that differs from the request's is said, empty included.
    expect(tokens.scope).toBe('');
  });

  it('refuses a wrong client secret with invalid_client', async () => {
    const config = await server.discover(server.admin.clientId, 'not-the-secret-at-all');
    await expect(oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator })).rejects.toMatchObject({
      status: 401,
      cause: [{ parameters: { error: 'invalid_client' } }],
    });
  });

  // Logto answers a client_credentials request without `resource` with invalid_target (RFC 8707 §2).
  it('refuses a request without a resource with invalid_target (RFC 8707 §2), as Logto', async () => {
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    await expect(oauth.clientCredentialsGrant(config, { scope: 'all' })).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it('refuses an unknown resource with invalid_target', async () => {
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    await expect(oauth.clientCredentialsGrant(config, { scope: 'all', resource: 'https://unknown.example.com' })).rejects.toMatchObject({
      error: 'invalid_target',
    });
  });
});

describe('ACCESS_TOKEN_ALG=RS256', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('rs256', { ACCESS_TOKEN_ALG: 'RS256' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('signs access tokens with RS256, and the Management API accepts them', async () => {
    const token = await server.adminToken();
    expect(decodeProtectedHeader(token).alg).toBe('RS256');
    expect((await server.api('GET', '/api/applications', { token })).status).toBe(200);
  });
});
