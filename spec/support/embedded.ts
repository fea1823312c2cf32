import type { AddressInfo } from 'node:net';

import Koa from 'koa';
import Provider, { type Configuration } from 'oidc-provider';

import { createIdentity, type Identity } from '../../identity.js';
import type { IdentityOptions } from '../../identity-options.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import { silentLogger } from '../../lib/logger.js';
import { mountApp } from '../../lib/http/mount.js';
import { testMongoUri, testPasswordHashing, uniqueDbName } from './env.js';
import { lastingServer } from './http-server.js';

/** oidc-identity embedded as a host embeds it: its middleware before the host's own provider, on a server of the test's. */
export interface EmbeddedHost {
  base: string;
  identity: Identity;
  database: Database;
  /** A Management API token of the bootstrap client (`all`). */
  token: string;
  /** JSON in and out of the Management API. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- assertions read arbitrary JSON
  close(): Promise<void>;
}

export async function startEmbeddedHost(
  label: string,
  options: Omit<IdentityOptions, 'database' | 'issuer' | 'baseUrl' | 'logger'> = {},
  providerConfiguration: Configuration = {},
): Promise<EmbeddedHost> {
  const admin = { clientId: `${label}-admin`, clientSecret: `${label}-admin-secret-0123456789` };
  const server = lastingServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const database = await openDatabase(testMongoUri(), { dbName: uniqueDbName(label) });
  const identity = await createIdentity({
    database,
    issuer: `${base}/oidc`,
    baseUrl: base,
    logger: silentLogger,
    passwordHashing: testPasswordHashing,
    ...options,
  });
  const provider = new Provider(`${base}/oidc`, identity.configure(providerConfiguration));
  const app = new Koa();
  app.use(identity.install(provider).middleware);
  app.use(mountApp('/oidc', provider, { strip: true }));
  server.on('request', app.callback());
  await identity.bootstrap(admin);
  const tokens = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${admin.clientId}:${admin.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: identity.managementApiIndicator, scope: 'all' }),
  });
  const { access_token: token } = (await tokens.json()) as { access_token: string };
  return {
    base,
    identity,
    database,
    token,
    async api(method, path, body) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: response.status === 204 ? undefined : await response.json() };
    },
    async close() {
      await identity.close();
      await new Promise((resolve) => server.close(resolve));
      await database.close();
    },
  };
}
