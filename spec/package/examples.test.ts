import * as oauth from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { startEmbeddedExample } from '../../examples/embedded.js';
import { startExpressExample } from '../../examples/express-host.js';
import { startNodeHttpExample } from '../../examples/node-http-host.js';
import { startStandaloneExample } from '../../examples/standalone.js';
import { loadSettings } from '../../settings.js';
import { silentLogger } from '../../lib/logger.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

const discover = (issuer: string, clientId: string, secret: string) =>
  oauth.discovery(new URL(issuer), clientId, secret, oauth.ClientSecretBasic(secret), { execute: [oauth.allowInsecureRequests] });

// The same host (its static client, resource server, token claims and own route) in three frameworks.
describe.each([
  ['examples/embedded (Koa)', startEmbeddedExample],
  ['examples/express-host (Express)', startExpressExample],
  ['examples/node-http-host (node:http)', startNodeHttpExample],
])('%s: an existing oidc-provider deployment adopting the package', (_name, start) => {
  const bootstrap = { clientId: 'embedded-admin', clientSecret: 'embedded-admin-secret-0123456789' };
  let example: Awaited<ReturnType<typeof startExpressExample>>;
  beforeAll(async () => {
    example = await start({ mongodbUri: testMongoUri(), dbName: uniqueDbName('embedded'), bootstrap, logger: silentLogger });
  });
  afterAll(async () => {
    await example.close();
  });

  it("keeps the host's static client, resource server and token claims working", async () => {
    const config = await discover(example.issuer, 'host-service', 'host-service-secret');
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'reports:read', resource: 'https://reports.acme.test' });
    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${example.issuer}/jwks`)), {
      issuer: example.issuer,
      audience: 'https://reports.acme.test',
    });
    expect(payload).toMatchObject({ scope: 'reports:read', tenant: 'acme', client_id: 'host-service' });
  });

  it("keeps the host's own routes", async () => {
    expect(await (await fetch(`${example.baseUrl}/hello`)).json()).toEqual({ hello: 'from the host' });
  });

  it('adds the Management API, reachable with the bootstrap client', async () => {
    const config = await discover(example.issuer, bootstrap.clientId, bootstrap.clientSecret);
    const { access_token } = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: example.managementApiIndicator });
    const response = await fetch(`${example.baseUrl}/api/resources`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Array<{ indicator: string }>)[0]).toMatchObject({ indicator: example.managementApiIndicator });
  });

  it("merges the host's own getCustomJwtClaims function's claims into an exchanged token", async () => {
    const admin = await discover(example.issuer, bootstrap.clientId, bootstrap.clientSecret);
    const { access_token: token } = await oauth.clientCredentialsGrant(admin, { scope: 'all', resource: example.managementApiIndicator });
    const call = async (path: string, body: unknown) =>
      (
        await fetch(`${example.baseUrl}/api${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json() as Promise<Record<string, string>>;
    const resource = await call('/resources', { name: 'API', indicator: 'https://api.embedded.test' });
    const user = await call('/users', { username: 'embedded_user' });
    const app = await call('/applications', { name: 'console', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    const { subjectToken } = await call('/subject-tokens', { userId: user.id, context: { ticketId: 'E-1' } });
    const config = await oauth.discovery(new URL(example.issuer), app.id!, undefined, oauth.None(), { execute: [oauth.allowInsecureRequests] });
    const response = await oauth.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
      subject_token: subjectToken!,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: resource.indicator!,
    });
    const { payload } = await jwtVerify(response.access_token, createRemoteJWKSet(new URL(`${example.issuer}/jwks`)), {
      issuer: example.issuer,
      audience: resource.indicator!,
    });
    expect(payload).toMatchObject({ sub: user.id, impersonation_context: { ticketId: 'E-1' }, tenant: 'acme' });
  });
});

describe('examples/standalone', () => {
  it('starts the standalone server from code and serves discovery', async () => {
    const server = await startStandaloneExample(
      { ...loadSettings({ PORT: '0' }), mongodbUri: testMongoUri() },
      {
        logger: silentLogger,
        dbName: uniqueDbName('standalone'),
      },
    );
    try {
      const discovery = (await (await fetch(`http://localhost:${server.port}/oidc/.well-known/openid-configuration`)).json()) as { issuer: string };
      expect(discovery.issuer).toBe(server.issuer);
      expect(server.createdCredentials?.clientId).toEqual(expect.any(String));
    } finally {
      await server.close();
    }
  });
});
