/**
 * An existing oidc-provider deployment adopting oidc-identity without rewriting its setup.
 * The host keeps its own static client, its own resource server, its own token claims and
 * its own routes; oidc-identity adds its applications, API resources and Management API.
 *
 *   npm run build && MONGODB_URI=mongodb://... node dist/examples/embedded.js
 */
// #region imports
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

import Koa from 'koa';
import Provider, { type Configuration } from 'oidc-provider';

import { createHostDirectory, hostLoginPath, hostLoginRoute, type HostDirectory } from './host-accounts.js';
// In your code: from 'oidc-identity'.
import { consoleLogger, createIdentity, mountApp, openDatabase, startEmbeddedMongo, type Database, type Identity, type Logger } from '../index.js';
// #endregion imports

// #region host
/** The host's people: Bob works in support, Carol is a customer, Dana left, Erin runs the host. */
export const examplePeople = {
  bob: { name: 'Bob (support)', password: 'bob-example-password' },
  carol: { name: 'Carol', password: 'carol-example-password' },
  dana: { name: 'Dana', password: 'dana-example-password', suspended: true },
  erin: { name: 'Erin (administrator)', password: 'erin-example-password', admin: true },
};

/** The host's configuration, as it was before oidc-identity: its client, its accounts and login page, its API. */
export function hostConfiguration(directory: HostDirectory): Configuration {
  return {
    clients: [
      {
        client_id: 'host-service',
        client_secret: 'host-service-secret',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    findAccount: directory.findAccount,
    interactions: { url: (_ctx, interaction) => hostLoginPath(interaction.uid) },
    extraTokenClaims: async () => ({ tenant: 'acme' }),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        // The host's own API, which it keeps describing itself.
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== 'https://reports.acme.test') throw new Error(`unexpected resource ${indicator}`);
          return { scope: 'reports:read', audience: indicator, accessTokenFormat: 'jwt', accessTokenTTL: 300 };
        },
      },
    },
  };
}
// #endregion host

export interface EmbeddedExampleOptions {
  mongodbUri: string;
  dbName?: string;
  port?: number;
  bootstrap: { clientId: string; clientSecret: string };
  logger?: Logger;
}

// #region embed
/**
 * What every host does, whatever its framework: oidc-identity over the host's configuration (a),
 * installed into the provider built from it (b), and its first Management API client.
 */
export async function embedIdentity({
  database,
  issuer,
  baseUrl,
  logger,
  bootstrap,
}: {
  database: Database;
  issuer: string;
  baseUrl: string;
  logger: Logger;
  bootstrap: { clientId: string; clientSecret: string };
}) {
  const directory = createHostDirectory(examplePeople);
  const identity = await createIdentity({
    database,
    issuer,
    baseUrl,
    logger,
    // The host's own people may be impersonated and may act (Bob for Carol), as ours may.
    hostAccounts: directory.hostAccounts,
    // The host's own custom claims, as a function: trusted code, so it runs as it is.
    getCustomJwtClaims: ({ context }) => {
      const grant = context.grant as { type?: string; subjectTokenContext?: Record<string, unknown> } | undefined;
      // A token exchange of a subject token is an impersonation; one of a user's own token is not, and has no context.
      return grant?.subjectTokenContext ? { impersonation_context: grant.subjectTokenContext } : {};
    },
  });
  const provider = new Provider(issuer, identity.configure(hostConfiguration(directory)));
  const installed = identity.install(provider);
  await identity.bootstrap(bootstrap);
  return { identity, provider, installed, directory };
}
// #endregion embed

// #region mount
export async function startEmbeddedExample({ mongodbUri, dbName, port = 0, bootstrap, logger = consoleLogger }: EmbeddedExampleOptions) {
  const app = new Koa();
  // Koa composes its middleware when callback() is called, so the server asks for it once all is mounted.
  let handle: ReturnType<Koa['callback']> | undefined;
  const server = createServer((req, res) => {
    if (handle) void handle(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  const baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const issuer = `${baseUrl}/oidc`;

  const database = await openDatabase(mongodbUri, dbName === undefined ? {} : { dbName });
  const { identity, provider, installed: managementApi, directory } = await embedIdentity({ database, issuer, baseUrl, logger, bootstrap });

  // The host's own routes stay where they were: its login page, and the rest.
  app.use(hostLoginRoute(provider, directory));
  app.use(async (ctx, next) => {
    if (ctx.path !== '/hello') return next();
    ctx.body = { hello: 'from the host' };
  });
  app.use(managementApi.middleware);
  app.use(mountApp('/oidc', provider, { strip: true }));
  handle = app.callback();

  return { ...runningHost({ server, baseUrl, issuer, identity, database }), directory };
}
// #endregion mount

/** A started host, as every example answers it: where it is, and how to stop it (server, identity, database, in that order). */
export function runningHost({
  server,
  baseUrl,
  issuer,
  identity,
  database,
}: {
  server: Server;
  baseUrl: string;
  issuer: string;
  identity: Identity;
  database: Database;
}) {
  return {
    baseUrl,
    issuer,
    managementApiIndicator: identity.managementApiIndicator,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await identity.close();
      await database.close();
    },
  };
}

/** Runs a host example from the command line: the embedded engine unless MONGODB_URI is set, stopped by SIGTERM or SIGINT. */
export async function runFromCommandLine(start: (options: EmbeddedExampleOptions) => Promise<ReturnType<typeof runningHost>>, label: string) {
  const embedded = process.env.MONGODB_URI ? undefined : await startEmbeddedMongo();
  const example = await start({
    mongodbUri: process.env.MONGODB_URI ?? embedded!.uri,
    port: Number(process.env.PORT ?? 3002),
    bootstrap: { clientId: 'embedded-admin', clientSecret: 'embedded-admin-secret-change-me' },
  });
  consoleLogger.info(`${label} with oidc-identity on ${example.baseUrl} (issuer ${example.issuer})`);
  const stop = () => {
    void example
      .close()
      .then(() => embedded?.stop())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runFromCommandLine(startEmbeddedExample, 'Koa host');
