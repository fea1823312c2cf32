import * as oauth from 'openid-client';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

import { startTestServer, type TestServer } from '../support/server.js';

/** Client authentication at the token endpoint, and what discovery says of it. */
describe('client authentication methods', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('client-auth');
  });
  afterAll(async () => {
    await server.close();
  });

  const keyPair = async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'app-key-1', alg: 'ES256', use: 'sig' } };
  };

  it('OpenID Connect Discovery §3: token_endpoint_auth_methods_supported lists only methods an application can use (no client_secret_jwt)', async () => {
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    expect(config.serverMetadata().token_endpoint_auth_methods_supported?.sort()).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
      'private_key_jwt',
    ]);
  });

  it('RFC 7523 §2.2: a machine-to-machine application registered with its public key authenticates with private_key_jwt', async () => {
    const { privateKey, jwk } = await keyPair();
    const created = await server.api('POST', '/api/applications', {
      body: { name: 'Keyed job', type: 'MachineToMachine', oidcClientMetadata: { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] } } },
    });
    expect(created.status).toBe(200);
    expect(created.body.oidcClientMetadata).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ kid: 'app-key-1' }] } });
    await server.create(`/api/applications/${created.body.id}/roles`, { roleIds: ['management-api-access'] });

    const config = await oauth.discovery(
      new URL(`http://localhost:${server.port}/oidc`),
      created.body.id,
      undefined,
      oauth.PrivateKeyJwt({ key: privateKey, kid: 'app-key-1' }),
      { execute: [oauth.allowInsecureRequests] },
    );
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
    expect(tokens.scope).toBe('all');
    expect((await server.api('GET', '/api/applications', { token: tokens.access_token })).status).toBe(200);

    // Its secret does not open the token endpoint: only the registered method does.
    const bySecret = await server.discover(created.body.id, created.body.secret);
    await expect(oauth.clientCredentialsGrant(bySecret, { resource: server.identity.managementApiIndicator })).rejects.toMatchObject({ status: 401 });
    // Nor does an assertion signed with another key.
    const other = await keyPair();
    const forged = await oauth.discovery(
      new URL(`http://localhost:${server.port}/oidc`),
      created.body.id,
      undefined,
      oauth.PrivateKeyJwt({ key: other.privateKey, kid: 'app-key-1' }),
      { execute: [oauth.allowInsecureRequests] },
    );
    await expect(oauth.clientCredentialsGrant(forged, { resource: server.identity.managementApiIndicator })).rejects.toMatchObject({ status: 401 });
  });

  it('refuses a client assertion replayed with the same jti (RFC 7523 §3, item 7)', async () => {
    const { privateKey, jwk } = await keyPair();
    const created = await server.create('/api/applications', {
      name: 'Replayed',
      type: 'MachineToMachine',
      oidcClientMetadata: { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] } },
    });
    const tokenEndpoint = `${server.issuer}/token`;
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'app-key-1' })
      .setIssuer(created.id)
      .setSubject(created.id)
      .setAudience(tokenEndpoint)
      .setJti('once-only')
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(privateKey);
    const send = () =>
      fetch(`http://localhost:${server.port}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          resource: server.identity.managementApiIndicator,
          client_id: created.id,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        }),
      });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(401);
  });

  it('refuses private_key_jwt without keys, and keys on a public application, with 400 naming the field', async () => {
    const { jwk } = await keyPair();
    const keyless = await server.api('POST', '/api/applications', {
      body: { name: 'No keys', type: 'MachineToMachine', oidcClientMetadata: { tokenEndpointAuthMethod: 'private_key_jwt' } },
    });
    expect(keyless).toMatchObject({ status: 400, body: { code: 'guard.invalid_input', data: { field: 'body.oidcClientMetadata' } } });
    const publicApp = await server.api('POST', '/api/applications', {
      body: { name: 'SPA with keys', type: 'SPA', oidcClientMetadata: { jwks: { keys: [jwk] } } },
    });
    expect(publicApp).toMatchObject({ status: 400, body: { code: 'guard.invalid_input', data: { field: 'body.oidcClientMetadata' } } });
    // A private or symmetric key is never accepted (nor echoed back).
    const privateJwk = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const leaky = await server.api('POST', '/api/applications', {
      body: { name: 'Leaky', type: 'MachineToMachine', oidcClientMetadata: { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [privateJwk] } } },
    });
    expect(leaky.status).toBe(400);
    const plainHttp = await server.api('POST', '/api/applications', {
      body: {
        name: 'Plain http keys',
        type: 'MachineToMachine',
        oidcClientMetadata: { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://keys.example.com/jwks' },
      },
    });
    expect(plainHttp.status).toBe(400);
  });

  it('authenticates a confidential application with client_secret_post when it is registered for it', async () => {
    const created = await server.create('/api/applications', {
      name: 'Posting job',
      type: 'MachineToMachine',
      oidcClientMetadata: { tokenEndpointAuthMethod: 'client_secret_post' },
    });
    await server.create(`/api/applications/${created.id}/roles`, { roleIds: ['management-api-access'] });
    const config = await oauth.discovery(new URL(`http://localhost:${server.port}/oidc`), created.id, undefined, oauth.ClientSecretPost(created.secret), {
      execute: [oauth.allowInsecureRequests],
    });
    expect((await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator })).scope).toBe('all');
  });
});
