import type { Clock } from '../../lib/clock.js';
import type { JWK } from 'jose';
import { MongoClient } from 'mongodb';
import * as oauth from 'openid-client';

import { loadProviderSecrets } from '../../provider/keys.js';
import { loadSettings, type Settings } from '../../settings.js';
import { consoleLogger, silentLogger } from '../../lib/logger.js';
import { startStandaloneServer, type StandaloneServer } from '../../standalone.js';
import { testMongoUri, testPasswordScrypt, uniqueDbName, uriForDb } from './env.js';

export interface TestServer extends StandaloneServer {
  /** A bootstrap client that holds the Management API's `all` scope. */
  admin: { clientId: string; clientSecret: string };
  /** Discovers the server with openid-client, as an integrator's code would. */
  discover(clientId: string, clientSecret?: string): Promise<oauth.Configuration>;
  /** A Management API token for the admin client, through a real client_credentials grant. */
  adminToken(): Promise<string>;
  /** POSTs to the Management API for test set-up: answers the body, throws on anything but 2xx. */
  create(path: string, body: unknown): Promise<ApiResponse['body']>;
  /** Calls the Management API with JSON in and out. */
  api(method: string, path: string, options?: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test assertions read arbitrary JSON
}

/**
 * Makes a new database's secrets as its first start would (`loadProviderSecrets`), but with the
 * run's signing keys, made once by the global set-up with the service's own generator: an RSA key
 * costs about 240 ms of CPU to make, and the suites start a few hundred servers. The first start's
 * own keys are made where the tests start servers otherwise (the embedding host, the child
 * processes, `provider/key-sets`, rotation), and every issuer is the server's own, so that a token
 * of one server is still not another's.
 */
async function seedSigningKeys(dbName: string): Promise<void> {
  const keys = process.env.TEST_SIGNING_KEYS;
  if (!keys) return;
  const client = await MongoClient.connect(uriForDb(dbName), { serverMonitoringMode: 'poll' });
  try {
    await loadProviderSecrets(client.db(dbName), async () => JSON.parse(keys) as JWK[]);
  } finally {
    await client.close();
  }
}

export async function startTestServer(label: string, env: Record<string, string> = {}, { clock }: { clock?: Clock } = {}): Promise<TestServer> {
  const admin = { clientId: `admin-${label}`.replace(/[^A-Za-z0-9._~-]/g, '-'), clientSecret: 'test-bootstrap-secret-0123456789' };
  const settings: Settings = {
    // Idle connections stay open until the client closes them. The server would close one after
    // 5 s of real time, while fetch's pool (openid-client's too) counts its idle time in ticks of
    // this process's event loop, which a loaded machine makes late: a request sent on a connection
    // the server was closing failed with ECONNRESET (a token request at a load of 10).
    ...loadSettings({ PORT: '0', PASSWORD_SCRYPT: testPasswordScrypt, HTTP_KEEP_ALIVE_MS: '0', ...env }),
    mongodbUri: testMongoUri(),
    bootstrapClientId: admin.clientId,
    bootstrapClientSecret: admin.clientSecret,
  };
  const dbName = uniqueDbName(label);
  await seedSigningKeys(dbName);
  const server = await startStandaloneServer(settings, {
    logger: process.env.TEST_LOG ? consoleLogger : silentLogger,
    dbName,
    ...(clock && { clock }),
  });
  const local = `http://localhost:${server.port}`;

  async function discover(clientId: string, clientSecret?: string) {
    return oauth.discovery(
      new URL(`${local}/oidc`),
      clientId,
      clientSecret,
      clientSecret === undefined ? oauth.None() : oauth.ClientSecretBasic(clientSecret),
      { execute: [oauth.allowInsecureRequests] },
    );
  }

  let cachedToken: string | undefined;
  async function adminToken() {
    if (cachedToken) return cachedToken;
    const config = await discover(admin.clientId, admin.clientSecret);
    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
    cachedToken = tokens.access_token;
    return cachedToken;
  }

  async function api(
    method: string,
    path: string,
    { token, body, raw, headers = {} }: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const bearer = token === undefined ? await adminToken() : token;
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const response = await fetch(`${local}${path}`, {
      method,
      headers: {
        // A connection of its own, as ownConnection in process.ts: the server may be one started
        // with its own HTTP_KEEP_ALIVE_MS.
        connection: 'close',
        ...(bearer !== null && { authorization: `Bearer ${bearer}` }),
        ...(payload !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(payload !== undefined && { body: payload }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  async function create(path: string, body: unknown) {
    const response = await api('POST', path, { body });
    if (response.status >= 300) throw new Error(`set-up POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
    return response.body;
  }

  return Object.assign(server, { admin, discover, adminToken, api, create });
}
