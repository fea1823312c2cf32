import type Koa from 'koa';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type Provider from 'oidc-provider';

import { accountApi } from '../account/index.js';
import { consoleBuiltIn, consolePathsOf } from '../console/built-in.js';
import { consoleAuthentication, createDispatcher } from '../console/dispatch.js';
import { createConsole } from '../console/index.js';
import { createExperience, pagesPrefix } from '../experience/index.js';
import { loadOfferedConnectors, type OfferedConnectors } from '../experience/offered-connectors.js';
import { changeEvents, type ChangeKey } from '../hooks/catalog.js';
import type { ErrorLogger } from '../lib/http/api-errors.js';
import { createSearchGate } from '../lib/http/search.js';
import { relyingPartyOf } from '../lib/mfa/webauthn.js';
import { currentRequest, requestIds } from '../lib/request-context.js';
import { createWriter } from '../lib/store/unit-of-work.js';
import { hookEventsScope, impersonationScope, managementScope } from '../management/bootstrap.js';
import type { ManagementDeps } from '../management/deps.js';
import { createManagementApi, managementPrefix, managementRoutesBehind, type ManagementApi } from '../management/router.js';
import { toClientMetadata } from '../provider/clients.js';
import { createDryRun } from '../provider/custom-claims.js';
import { cachesStaleAfter } from '../provider/stale-caches.js';
import { createPasswords } from '../lib/password.js';
import { createHashGate } from '../sign-in/hash-gate.js';
import { codeMessenger, invitationMessenger } from '../sign-in/messages.js';
import { createCounters, defaultLimits } from '../sign-in/counters.js';
import type { Configured } from './configure.js';
import type { Installed } from './install-provider.js';
import type { ResolvedOptions } from './options.js';
import type { Parts } from './parts.js';

/**
 * Our APIs and pages, on one middleware: the sign-in experience (when on), the Account API and the
 * Management API, behind request ids, metrics and the database watch. They share one writer (whose
 * commits mark caches stale and void subject tokens) and one cap on concurrent password hashes.
 */
export function createApis(
  provider: Provider,
  options: ResolvedOptions,
  parts: Parts,
  { configuration, keysManaged }: Configured,
  installed: Installed,
): ManagementApi & { prefixes: string[] } {
  const { database, logger, metrics, experience: experienceOptions } = options;
  const { queries, hooks, caches, watch } = parts;
  /** A request our APIs could not answer: the operator reads why in the log. */
  const log: ErrorLogger = (error, { method, path }) => logger.error(`${method} ${path} failed`, error);
  const http = { bodyLimit: options.bodyLimit, log, proxy: provider.proxy, clientAddress: installed.clientAddress };
  const write = createWriter<ChangeKey>(database, hooks.outbox, {
    retentionDays: options.changesRetentionDays,
    mustIntend: ({ entity, action }) => Object.hasOwn(changeEvents, `${entity}.${action}`),
    afterCommit: async (changes) => {
      await Promise.all([...cachesStaleAfter(changes).map((name) => caches.registry.changed(name)), parts.voidSubjectTokensAfter(changes)]);
    },
  });
  // The loader always answers (the defaults until the first PATCH).
  const signInSettings = async () => (await caches.signInSettings.get('default'))!;
  // What the sign-in page offers (one entry), read again after a connector's change.
  const offered = caches.registry.create<OfferedConnectors>('connectors', () => loadOfferedConnectors(parts.connectors, parts.ssoConnectors));
  // One cap on concurrent password hashes for every hash an end user can cause, here and in the Account API.
  const hashing = createHashGate(experienceOptions?.maxConcurrentHashes);
  const passwords = createPasswords(options.passwordHashing);
  const limits = experienceOptions?.limits && { limits: experienceOptions.limits };
  const { messengers } = parts;
  const { branding, catalogs } = options;

  const experience =
    experienceOptions &&
    messengers &&
    branding &&
    catalogs &&
    createExperience({
      ...http,
      db: database.db,
      provider,
      queries,
      write,
      logger,
      ...messengers,
      signInSettings,
      reportException: (report) => hooks.reportException(report),
      reportInteraction: (report) => hooks.reportInteraction(report),
      reportSignInFailure: (fields) => hooks.optIn.record('SignIn.Failed', () => ({ source: 'experience', fields: { ...fields } })),
      revokeAccount: parts.revoke,
      branding,
      catalogs,
      origin: options.origin,
      cookieKeys: (configuration.cookies?.keys ?? parts.keyRing.cookieKeys) as Koa['keys'],
      mfaKey: parts.sealingKey,
      connectors: parts.connectors,
      upstream: parts.upstream,
      ssoConnectors: parts.ssoConnectors,
      offeredConnectors: async () => (await offered.get('offered'))!,
      findApplication: (id) => caches.applications.get(id),
      organizationAccess: parts.organizationAccess,
      // The console's sign-in takes a second factor, whatever the MFA policy.
      ...(options.consolePath && { mfaRequiredBy: (applicationId: string) => applicationId === consoleBuiltIn.applicationId }),
      ...limits,
      hashing,
      passwords,
      databaseReady: () => watch.admit(),
    });
  const managementDeps: ManagementDeps = {
    database,
    queries,
    impersonation: parts.impersonation,
    impersonationAccounts: parts.impersonationAccounts,
    hooks,
    write,
    dryRunCustomClaims: createDryRun(parts.dryRuns),
    revokeAccount: parts.revoke,
    sessions: parts.sessions,
    announceEnded: parts.announceEnded,
    passwords,
    subjectTokenTtl: options.subjectTokenTtl,
    subjectTokenSeal: parts.subjectTokenSeal,
    impersonationPolicy: async () => (await caches.impersonationPolicy.get('policy'))!,
    managementApiIndicator: options.managementApiIndicator,
    // A placeholder secret: validation needs one for confidential clients, never sees a real one.
    validateApplication: (application) => provider.Client.validate(toClientMetadata(application, [])),
    keyRing: keysManaged ? parts.keyRing : undefined,
    mfaBox: parts.box,
    productName: options.productName,
    connectors: parts.connectors,
    upstream: parts.upstream,
    ssoConnectors: parts.ssoConnectors,
    ssoPublicEmailDomains: options.ssoPublicEmailDomains,
    searching: createSearchGate(),
    origin: options.origin,
    outboundFetch: parts.outboundFetch,
    sendInvitation:
      messengers &&
      invitationMessenger({
        email: messengers.email,
        productName: options.productName,
        counters: createCounters(database.db, { limits: { ...defaultLimits, ...experienceOptions?.limits } }),
      }),
  };
  const managementApi = createManagementApi(managementDeps, {
    ...http,
    auth: {
      issuer: options.issuer,
      audience: options.managementApiIndicator,
      getKey: installed.getKey,
      algorithms: installed.algorithms,
      acceptedScopes: [managementScope, impersonationScope, hookEventsScope],
      heldScopes: caches.heldManagementScopes,
    },
  });
  // The user's own Account API, authorized by the user's token, not the Management API's.
  const account = accountApi({
    ...http,
    db: database.db,
    provider,
    queries,
    write,
    sendCode: messengers && codeMessenger({ ...messengers, productName: options.productName, logger, catalogs }),
    catalogs,
    signInSettings,
    reportException: (report) => hooks.reportException(report),
    ...limits,
    hashing,
    passwords,
    mfaBox: parts.box,
    rp: relyingPartyOf(options.origin, options.productName),
    connectors: parts.connectors,
    upstream: parts.upstream,
    sessions: parts.sessions,
    announceEnded: parts.announceEnded,
  });
  // The admin console: its pages call the Management API's own handlers, in process, for the administrator.
  const adminConsole =
    options.consolePath && branding && catalogs
      ? createConsole({
          db: database.db,
          provider,
          queries,
          clock: options.clock,
          logger,
          issuer: options.issuer,
          publicKeys: installed.publicKeys,
          origin: options.origin,
          paths: consolePathsOf(options.origin, options.consolePath),
          branding,
          catalogs,
          dispatch: createDispatcher(managementRoutesBehind(managementDeps, consoleAuthentication, http)),
        })
      : undefined;
  // These routes come first: `/api/experience` and `/api/my-account` are not the Management API's, which would ask for its token.
  const faces = [...(experience ? [experience.middleware] : []), ...(adminConsole ? [adminConsole] : []), account, managementApi.middleware];
  // Liveness asks no database: only a lost one (the process must restart) fails it. The pages
  // answer an unreachable database with a page of their own (`databaseReady`).
  const watched: Middleware = (ctx, next) => {
    if (ctx.path === `${managementPrefix}/status`) return watch.lostOnlyMiddleware(ctx, next);
    // Pages (the sign-in pages, the console) say an outage with a page of their own.
    const page = [pagesPrefix, ...(options.consolePath ? [options.consolePath] : [])].some(
      (prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`),
    );
    if (page) return watch.observe(ctx, next);
    return watch.middleware(ctx, next);
  };
  const counted: Middleware[] = metrics
    ? [
        // Our APIs' requests by route and status (the route as the answering router noted it).
        async (ctx, next) => {
          try {
            await next();
          } finally {
            const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
            metrics.apiRequests.inc({ method: ctx.method, route: currentRequest()?.route ?? 'unmatched', status: String(status) });
          }
        },
      ]
    : [];
  const ours = [managementPrefix, pagesPrefix, ...(options.consolePath ? [options.consolePath] : [])];
  return { ...managementApi, prefixes: ours, middleware: compose([...[requestIds, ...counted, watched].map((each) => whenOurs(ours, each)), ...faces]) };
}

/** Runs `middleware` for our own paths only (the Management and Experience APIs, the sign-in pages, the console), never for the host's. */
function whenOurs(ours: string[], middleware: Middleware): Middleware {
  return (ctx, next) => (ours.some((prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`)) ? middleware(ctx, next) : next());
}
