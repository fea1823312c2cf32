import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import Koa from 'koa';
import type { MongoClientOptions } from 'mongodb';
import Provider from 'oidc-provider';

import type { BootstrapCredentials } from './management/bootstrap.js';
import type { ExperienceSettings } from './experience/settings.js';
import type { Settings } from './settings.js';
import { httpSmsConnector, smtpConnector, twilioSmsConnector, type ExperienceOptions } from './experience/index.js';
import { driverTimeouts } from './lib/store/availability.js';
import { openDatabase, type Database } from './lib/store/database.js';
import { accessLog } from './lib/http/access-log.js';
import { requestIds } from './lib/request-context.js';
import { createMetrics, metricsEndpoint } from './lib/metrics.js';
import { embeddedStoreNotice, startEmbeddedStore, type EmbeddedStore } from './lib/store/embedded-store.js';
import { createIdentity, type Identity } from './identity.js';
import { consoleLogger, type Logger } from './lib/logger.js';
import type { Clock } from './lib/clock.js';
import { createDrain } from './lib/http/drain.js';
import { mountApp } from './lib/http/mount.js';
import type { ManagementApi } from './management/router.js';
import { frontDoor } from './composition/front-door.js';

export const providerPrefix = '/oidc';

export interface StandaloneServer {
  /** Its public base URL, e.g. `http://localhost:3001`. */
  url: string;
  /** The port it listens on (useful with port 0). */
  port: number;
  issuer: string;
  identity: Identity;
  provider: Provider;
  managementApi: ManagementApi;
  database: Database;
  /**
   * Settles when the server cannot go on (the database it started on was replaced), with why: the
   * caller should close it and exit non-zero, as `npm start` does, so that a supervisor restarts it.
   */
  failed: Promise<Error>;
  /** Credentials of a Management API client created by this start (empty database, no BOOTSTRAP_* settings). */
  createdCredentials?: BootstrapCredentials;
  /** The console's first administrator, made by this start: printed once. */
  createdAdministrator?: { username: string; password: string; offeredTotp?: boolean };
  /** Where the admin console is, when it is on. */
  consoleUrl?: string;
  close(): Promise<void>;
}

export interface StandaloneOptions {
  logger?: Logger;
  /** Database name (tests give each suite its own). */
  dbName?: string;
  /** Passed to the MongoDB driver (the benchmarks count round trips with `monitorCommands`). */
  mongoClientOptions?: MongoClientOptions;
  /** The webhook worker's clock (`IdentityOptions.clock`); the system's by default. */
  clock?: Clock;
}

/** Without SMTP settings, `createIdentity` falls back to the development connector (and says so). */
function experienceOf({ productName, logoUrl, primaryColor, smtpUrl, emailFrom, sms }: ExperienceSettings): ExperienceOptions {
  return {
    branding: { productName, primaryColor, ...(logoUrl && { logoUrl }) },
    ...(smtpUrl && emailFrom && { email: smtpConnector(smtpUrl, emailFrom) }),
    ...(sms.kind === 'http' && { sms: httpSmsConnector(sms) }),
    ...(sms.kind === 'twilio' && { sms: twilioSmsConnector(sms) }),
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * The standalone server: oidc-provider under `/oidc`, the Management API under `/api`, on one
 * port. Without `mongodbUri` it starts the embedded in-memory engine and stops it on close.
 */
export async function startStandaloneServer(
  settings: Settings,
  { logger = consoleLogger, dbName, mongoClientOptions, clock }: StandaloneOptions = {},
): Promise<StandaloneServer> {
  let embedded: EmbeddedStore | undefined;
  let uri = settings.mongodbUri;
  if (!uri) {
    embedded = await startEmbeddedStore({ dataDir: settings.dataDir, snapshotMs: settings.dataSnapshotMs, logger });
    uri = embedded.uri;
    logger.warn(embeddedStoreNotice(settings.dataDir, settings.dataSnapshotMs));
  }

  // Listen first, so that port 0 (any free port) is known before the issuer is.
  let handler: ReturnType<Koa['callback']> = async (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const drain = createDrain();
  const server = createServer((req, res) => {
    drain.track(res);
    return handler(req, res);
  });
  server.keepAliveTimeout = settings.httpKeepAliveMs;
  let database: Database | undefined;
  let fail: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => {
    fail = resolve;
  });
  void embedded?.died.then((reason) => {
    logger.error(`DATABASE LOST: ${reason}.`);
    fail(new Error(reason));
  });
  try {
    const port = await listen(server, settings.port);
    const baseUrl = settings.baseUrl ?? `http://localhost:${port}`;
    const issuer = `${baseUrl}${providerPrefix}`;

    // Metrics only with their token: the driver then times every command (command monitoring).
    const metrics = settings.metricsToken ? createMetrics() : undefined;
    database = await openDatabase(uri, {
      ...(dbName !== undefined && { dbName }),
      // A data directory's snapshots follow the write commands (command monitoring), as metrics time them.
      clientOptions: {
        ...driverTimeouts(settings.databaseTimeouts),
        ...settings.databaseConcerns,
        ...((metrics || embedded?.dataDir) && { monitorCommands: true }),
        ...mongoClientOptions,
      },
    });
    // What the data directory kept, back before anything is set up (indexes are created as declared, not restored).
    await embedded?.open(database);
    const identity = await createIdentity({
      database,
      issuer,
      baseUrl,
      logger,
      accessTokenAlg: settings.accessTokenAlg,
      apiBodyLimit: settings.apiBodyLimit,
      cacheRefreshMs: settings.cacheRefreshMs,
      subjectTokenTtl: settings.subjectTokenTtl,
      passwordHashing: settings.passwordHashing,
      impersonationAudit: settings.impersonationAudit,
      managementApiTokenTtl: settings.managementApiTokenTtl,
      trustProxy: settings.trustProxy,
      customClaimsOnError: settings.customClaimsOnError,
      customClaimsTimeoutMs: settings.customClaimsTimeoutMs,
      outboundAllowedHosts: settings.outboundAllowedHosts,
      changesRetentionDays: settings.changesRetentionDays,
      sweepIntervalMs: settings.sweepIntervalMs,
      changeStreams: settings.changeStreams,
      ...(settings.ssoPublicEmailDomains && { ssoPublicEmailDomains: settings.ssoPublicEmailDomains }),
      ...(settings.mfaEncryptionKey && { mfaEncryptionKey: settings.mfaEncryptionKey }),
      hooks: settings.hooks,
      experience: experienceOf(settings.experience),
      console: settings.consolePath === false ? false : { path: settings.consolePath },
      ...(clock && { clock }),
      ...(metrics && { metrics }),
      onDatabaseLost: (reason) => fail(new Error(reason)),
    });
    // `configure` turns oidc-provider's development login off; our sign-in pages replace it.
    const provider = new Provider(issuer, identity.configure());
    // Behind trusted proxies, X-Forwarded-Proto and -Host say how the client reached us.
    const behindProxy = !('hops' in settings.trustProxy && settings.trustProxy.hops === 0);
    provider.proxy = behindProxy;
    const managementApi = identity.install(provider);

    const app = new Koa();
    app.proxy = behindProxy;
    // One id per request, carried through its writes to their webhook deliveries; one access-log line per request.
    app.use(requestIds);
    app.use(accessLog(logger));
    if (metrics) app.use(metricsEndpoint(metrics, settings.metricsToken!));
    app.use(frontDoor({ baseUrl, issuer, consoleUrl: settings.consolePath === false ? undefined : `${baseUrl}${settings.consolePath}` }));
    app.use(managementApi.middleware);
    app.use(mountApp(providerPrefix, provider, { strip: true }));
    handler = app.callback();

    const { created, administrator } = await identity.bootstrap(
      settings.bootstrapClientId && settings.bootstrapClientSecret
        ? { clientId: settings.bootstrapClientId, clientSecret: settings.bootstrapClientSecret }
        : undefined,
      settings.consoleAdministrator ? { consoleAdministrator: settings.consoleAdministrator } : {},
    );
    const openDb = database;
    return {
      url: baseUrl,
      port,
      issuer,
      identity,
      provider,
      managementApi,
      database: openDb,
      failed,
      ...(created && { createdCredentials: created }),
      ...(administrator && { createdAdministrator: administrator }),
      ...(settings.consolePath !== false && { consoleUrl: `${baseUrl}${settings.consolePath}` }),
      async close() {
        // Requests in flight finish first (up to SHUTDOWN_GRACE_MS); then the webhook worker
        // finishes or releases its deliveries, and the database closes.
        const cutOff = await drain.drain(server, settings.shutdownGraceMs);
        if (cutOff > 0) logger.warn(`${cutOff} requests were still unanswered after ${settings.shutdownGraceMs} ms; their connections were closed`);
        try {
          await identity.close();
          await embedded?.finish();
        } finally {
          // The engine stops and the data directory's lock is released whatever the last snapshot did.
          await openDb.close();
          await embedded?.stop();
        }
      },
    };
  } catch (error) {
    server.close();
    await database?.close();
    await embedded?.stop();
    throw error;
  }
}
