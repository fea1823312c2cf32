import * as oauth from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { startEmbeddedExample } from '../../examples/embedded.js';
import { startStandaloneExample } from '../../examples/standalone.js';
import { loadSettings } from '../../lib/config.js';
import { silentLogger } from '../../lib/logger.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

const discover = (issuer: string, clientId: string, secret: string) =>
  oauth.discovery(new URL(issuer), clientId, secret, oauth.ClientSecretBasic(secret), { execute: [oauth.allowInsecureRequests] });

describe('examples/embedded: an existing oidc-provider deployment adopting the package', () => {
  const bootstrap = { clientId: 'embedded-admin', clientSecret: 'embedded-admin-secret-0123456789' };
  let example: Awaited<ReturnType<typeof startEmbeddedExample>>;
  beforeAll(async () => {
    example = await startEmbeddedExample({ mongodbUri: testMongoUri(), dbName: uniqueDbName('embedded'), bootstrap, logger: silentLogger });
  });
  afterAll(async () => { await example.close(); });

  it('keeps the host\'s static client, resource server and token claims working', async () => {
    const config = await discover(example.issuer, 'host-service', 'host-service-secret');
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'reports:read', resource: 'https://reports.acme.test' });
    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${example.issuer}/jwks`)), {
      issuer: example.issuer, audience: 'https://reports.acme.test',
    });
    expect(payload).toMatchObject({ scope: 'reports:read', tenant: 'acme', client_id: 'host-service' });
  });

  it('keeps the host\'s own routes', async () => {
    expect(await (await fetch(`${example.baseUrl}/hello`)).json()).toEqual({ hello: 'from the host' });
  });

  it('adds the Management API, reachable with the bootstrap client', async () => {
    const config = await discover(example.issuer, bootstrap.clientId, bootstrap.clientSecret);
    const { access_token } = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: example.managementApiIndicator });
    const response = await fetch(`${example.baseUrl}/api/resources`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Array<{ indicator: string }>)[0]).toMatchObject({ indicator: example.managementApiIndicator });
  });
});

describe('examples/standalone', () => {
  it('starts the standalone server from code and serves discovery', async () => {
    const server = await startStandaloneExample({ ...loadSettings({ PORT: '0' }), mongodbUri: testMongoUri() }, {
      logger: silentLogger, dbName: uniqueDbName('standalone'),
    });
    try {
      const discovery = (await (await fetch(`http://localhost:${server.port}/oidc/.well-known/openid-configuration`)).json()) as { issuer: string };
      expect(discovery.issuer).toBe(server.issuer);
      expect(server.createdCredentials?.clientId).toEqual(expect.any(String));
    } finally {
      await server.close();
    }
  });
});
