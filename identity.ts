import type Koa from 'koa';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { createLocalJWKSet, type JWK } from 'jose';
import type { ClientSession } from 'mongodb';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { createManagementApi, managementPrefix, type ManagementApi } from './management/router.js';
import * as tokenExchange from './grants/token-exchange/index.js';
import { jwtIntrospection } from './provider/introspection.js';
import { currentRequest, noteRequest, requestIds } from './lib/request-context.js';
import { watchDatabase } from './lib/metrics.js';
import { tokenResponseConformance } from './grants/token-response.js';
import { createActorIdentifier } from './grants/token-exchange/actor.js';
import { subjectTokenSeal as createSubjectTokenSeal } from './impersonation/subject-token.js';
import { voidingOf } from './impersonation/voiding.js';
import { createImpersonationQueries } from './impersonation/queries.js';
import { impersonationCollections } from './impersonation/collections.js';
import {
  bootstrap,
  ensureManagementApi,
  impersonationScope,
  hookEventsScope,
  managementScope,
  type BootstrapCredentials,
  type BootstrapResult,
} from './management/bootstrap.js';
import { formPostEndpoints } from './provider/form-post-endpoints.js';
import { createClientAddress, noProxy, useClientAddress } from './lib/http/client-address.js';
import { createCustomClaims, createDryRun } from './provider/custom-claims.js';
import { Sandbox } from './provider/sandbox/index.js';
import type { MintedToken } from './provider/token-types.js';
import { installHashedSecretComparison } from './provider/client-secret.js';
import { answerUnavailability } from './provider/unavailable.js';
import { refuseFraming } from './provider/framing.js';
import { watchDatabaseIdentity } from './lib/store/database-identity.js';
import { toClientMetadata } from './provider/clients.js';
import { configureProvider } from './provider/configure.js';
import { createProviderCaches } from './provider/caches.js';
import { createLedger, type Ledger } from './impersonation/ledger.js';
import { cachesStaleAfter } from './provider/stale-caches.js';
import { changeEvents, type ChangeKey } from './hooks/catalog.js';
import { systemClock } from './lib/clock.js';
import { changeRetentionRule, checkOptions } from './lib/config.js';
import { resolveHookSettings } from './hooks/settings.js';
import { defaultBranding, resolveBranding } from './experience/settings.js';
import { createHooks, type Hooks, type InteractionReport } from './hooks/index.js';
import { signInReports } from './hooks/provider-events.js';
import { ensureIndexes } from './lib/store/database.js';
import { experienceCollections } from './experience/collections.js';
import { hookCollections } from './hooks/collections.js';
import { providerCollections, revokeAccount } from './provider/collections.js';
import { accountApi } from './account/index.js';
import { accountCollections } from './account/collections.js';
import { upstreamCollections } from './sso/collections.js';
import { codeMessenger } from './sign-in/messages.js';
import { secretBox } from './lib/mfa/secret-box.js';
import { createConnectorStore } from './social/connectors.js';
import { createUpstream } from './social/upstream.js';
import { createSsoConnectorStore } from './sso/connectors.js';
import { createProviderFetch } from './provider/fetch.js';
import { createOutboundPolicy } from './lib/outbound-addresses.js';
import { relyingPartyOf } from './lib/mfa/webauthn.js';
import type { ErrorLogger } from './lib/http/api-errors.js';
import { createExperience, interactionUrl, logConnector, logSmsConnector, pagesPrefix } from './experience/index.js';
import { createGrantLoader } from './experience/consent.js';
import { signOutPage } from './experience/views/pages.js';
import { createCatalogs } from './i18n/index.js';
import { createHashGate } from './sign-in/hash-gate.js';
import { createSearchGate } from './lib/http/search.js';
import { loadProviderSecrets, publicJwks, type ProviderSecrets } from './provider/keys.js';
import { createKeyRing } from './provider/oidc-keys.js';
import { replaceSigningKeys } from './provider/internals.js';
import { createQueries, type Queries } from './lib/store/queries/index.js';
import { createRecordWriter, createWriter } from './lib/store/unit-of-work.js';
import { defaultChangeRetentionDays, type Change } from './lib/store/changes.js';
import { intentCollections, startIntentResolver } from './lib/store/intents.js';
import { intentStates } from './management/intent-states.js';
import type { IdentityOptions } from './identity-options.js';

export type { IdentityOptions } from './identity-options.js';

export interface Identity {
  readonly queries: Queries;
  readonly managementApiIndicator: string;
  /** The host's provider configuration with ours composed in; the host's own functions keep working. */
  configure(host?: Configuration): Configuration;
  /** Installs into a provider built from `configure`'s result; returns the Management API to mount. */
  install(provider: Provider): ManagementApi;
  /** Ensures a machine-to-machine application can call the Management API (see README, Bootstrap). */
  bootstrap(credentials?: BootstrapCredentials): Promise<BootstrapResult>;
  /**
   * Announces an interaction event (PostRegister, PostSignIn, PostResetPassword) to the hooks
   * subscribed to it: the one entry point for sign-up, sign-in and reset code, ours or a host's.
   * Pass the session of the unit of work that made the change (a sign-up's user) to commit both together.
   */
  reportInteractionEvent(report: InteractionReport, session?: ClientSession): Promise<void>;
  /** Webhooks: the outbox, the delivery worker and the hooks API's queries. */
  readonly hooks: Hooks;
  close(): Promise<void>;
}

/**
 * The embedding API. Opens nothing itself: the host hands in the database, and decides
 * where the provider and the Management API are mounted.
 */
export async function createIdentity(options: IdentityOptions): Promise<Identity> {
  const { database, issuer, baseUrl, logger } = options;
  // Checked before anything is written, with the rules the environment's settings follow.
  const hookSettings = resolveHookSettings(options.hooks);
  const branding = options.experience && resolveBranding(options.experience.branding);
  // The pages' and messages' languages: the built-in catalogs with the host's over them.
  const catalogs = options.experience && createCatalogs(options.experience.catalogs);
  const changesRetentionDays = options.changesRetentionDays ?? defaultChangeRetentionDays;
  checkOptions(changeRetentionRule, changesRetentionDays, 'changesRetentionDays');
  const accessTokenAlg = options.accessTokenAlg ?? 'ES256';
  const managementApiIndicator = `${baseUrl.replace(/\/+$/, '')}${managementPrefix}`;
  const queries = createQueries(database.db);
  const impersonation = createImpersonationQueries(database.db);
  if (!database.transactions) {
    logger.warn(
      `Writing without transactions (${database.noTransactionsReason}): multi-document writes are not atomic. A change that announces a webhook event is stored as intended before it is written, so that one a crash leaves without its event is found and announced within a minute; other change records are written after their change (see the README, Delivery).`,
    );
  }
  // Each part declares the collections it owns; the entities' are ensured when the database is opened.
  await ensureIndexes(database.db, {
    ...providerCollections,
    ...hookCollections,
    ...intentCollections,
    ...accountCollections,
    ...impersonationCollections,
    ...upstreamCollections,
    ...(options.experience && experienceCollections),
  });
  const watch = await watchDatabaseIdentity(database.client, database.db, {
    logger,
    ...(options.onDatabaseLost && { onLost: options.onDatabaseLost }),
  });
  const { metrics } = options;
  const hooks = createHooks(database.db, queries, hookSettings, logger, options.clock, metrics);
  if (metrics) {
    watchDatabase(metrics, database.client);
  }
  const revoke = (userId: string, session?: ClientSession) => revokeAccount(database.db, userId, session);
  /** Voids the subject tokens that committed changes made untrue (`impersonation/voiding.ts`). */
  const voidSubjectTokensAfter = async (changes: Change[]) => {
    await Promise.all(voidingOf(changes).map(({ selection, reason }) => impersonation.voidSubjectTokens(selection, reason)));
  };

  await ensureManagementApi(database.db, managementApiIndicator);
  const secrets: ProviderSecrets = await loadProviderSecrets(database.db);
  // Social connectors: their client secrets sealed like the MFA secrets; upstream calls through the outbound guard.
  const connectors = createConnectorStore(database.db, secretBox(options.mfaEncryptionKey ?? secrets.mfaKey));
  const outboundFetch = createProviderFetch(createOutboundPolicy(options.outboundAllowedHosts ?? []));
  const upstream = createUpstream({ fetch: outboundFetch });
  const ssoConnectors = createSsoConnectorStore(database.db, secretBox(options.mfaEncryptionKey ?? secrets.mfaKey));
  // Subject tokens are sealed under a key derived from the deployment's secret (the MFA key's), shared by every process.
  const subjectTokenSeal = createSubjectTokenSeal(options.mfaEncryptionKey ?? secrets.mfaKey);
  const keyRing = createKeyRing(database.db, { signing: secrets.jwks.keys, cookies: secrets.cookieKeys });

  const {
    registry: caches,
    clients,
    resources,
    defaultResource,
    roles,
    held,
    heldManagementScopes,
    customizer,
    signInSettings,
    impersonationPolicy,
  } = await createProviderCaches(database.db, queries, {
    refreshMs: options.cacheRefreshMs ?? 1000,
    managementApiIndicator,
  });
  const sandbox = new Sandbox({ timeoutMs: options.customClaimsTimeoutMs ?? 1000 });
  // Dry runs get a sandbox of their own: nothing a script under test does can delay a token.
  const dryRuns = new Sandbox({ timeoutMs: options.customClaimsTimeoutMs ?? 1000 });
  const customClaimsFor = createCustomClaims({
    queries,
    customizer,
    sandbox,
    logger,
    roles,
    ...(options.getCustomJwtClaims && { hostFunction: options.getCustomJwtClaims }),
    onError: options.customClaimsOnError ?? 'omit',
    exemptAudiences: new Set([managementApiIndicator]),
    ...(metrics && { metrics }),
  });

  const email = options.experience && (options.experience.email ?? logConnector(logger));
  if (email?.development) logger.warn(`Email: ${email.description}.`);
  else if (email) logger.info(`Email: ${email.description}.`);
  const sms = options.experience && (options.experience.sms ?? logSmsConnector(logger));
  if (sms?.development) logger.warn(`SMS: ${sms.description}.`);
  else if (sms) logger.info(`SMS: ${sms.description}.`);

  let configured: Configuration | undefined;
  /** Whether the provider's keys are ours (and so rotated through the Management API), not a host's own. */
  let keysManaged = true;
  let resourceServerInfo: ReturnType<typeof configureProvider>['getResourceServerInfo'] | undefined;
  // What a grant tells `extraTokenClaims` about a token it mints, through the token itself.
  const minted = new WeakMap<object, MintedToken>();
  let resolver: ReturnType<typeof startIntentResolver> | undefined;
  let ledger: Ledger | undefined;

  return {
    queries,
    managementApiIndicator,
    hooks,
    reportInteractionEvent: (report, session) => hooks.reportInteraction(report, session),

    configure(host: Configuration = {}) {
      if (host.features?.devInteractions?.enabled === true) {
        logger.warn(
          "oidc-provider's development interactions (features.devInteractions) are on: anyone can sign in as any account id with any password. Never in production.",
        );
      }
      keysManaged = !host.jwks && !host.cookies?.keys;
      ({ configuration: configured, getResourceServerInfo: resourceServerInfo } = configureProvider(host, {
        db: database.db,
        queries,
        clients,
        keyRing,
        resources,
        defaultResource: () => defaultResource.get('default'),
        held,
        accessTokenAlg,
        managementApiTokenTtl: options.managementApiTokenTtl ?? 600,
        outboundAllowedHosts: options.outboundAllowedHosts ?? [],
        extraTokenClaims: async (ctx, token) => ({
          ...(await customClaimsFor(ctx, token as Parameters<typeof customClaimsFor>[1], minted.get(token)?.facts)),
          ...minted.get(token)?.claims,
        }),
        ...(options.experience && {
          experience: {
            interactionUrl: (uid: string) => interactionUrl(uid),
            loadExistingGrant: (hostLoader) => createGrantLoader(queries, hostLoader),
            languages: catalogs!.languages(),
            logoutSource: (ctx, form) => {
              ctx.type = 'html';
              // RP-Initiated Logout §2 `ui_locales`, then the browser's Accept-Language.
              ctx.body = signOutPage({ branding: branding!, t: catalogs!.forRequest(ctx.oidc?.params?.ui_locales, ctx.get('accept-language')) }, form);
            },
          },
        }),
      }));
      return configured;
    },

    install(provider: Provider) {
      if (!configured) throw new TypeError('call configure() and build the provider from its result before install()');
      installHashedSecretComparison(provider);
      answerUnavailability(provider);
      provider.use(refuseFraming);
      provider.use(watch.providerMiddleware);
      const clientAddress = createClientAddress(options.trustProxy ?? noProxy);
      /** A request our APIs could not answer: the operator reads why in the log. */
      const logFailure: ErrorLogger = (error, { method, path }) => logger.error(`${method} ${path} failed`, error);
      // Every request gets an id (the caller's X-Request-Id, or a new one), and says what answered it.
      provider.use(requestIds);
      provider.use(async (ctx, next) => {
        try {
          await next();
        } finally {
          noteRequest({ ...(ctx.oidc?.route && { route: `oidc:${ctx.oidc.route}` }), clientId: ctx.oidc?.client?.clientId });
        }
      });
      if (metrics) {
        // Token requests by grant and outcome; the token exchange's own family beside them.
        // The grant label is one of the grant types there are, never what a request made up (labels are kept forever).
        const grants = new Set([
          'authorization_code',
          'refresh_token',
          'client_credentials',
          tokenExchange.grantType,
          'urn:ietf:params:oauth:grant-type:device_code',
          'urn:openid:params:grant-type:ciba',
        ]);
        const grantOf = (ctx: KoaContextWithOIDC) => {
          const given = ctx.oidc?.params?.grant_type;
          return typeof given === 'string' && grants.has(given) ? given : 'other';
        };
        provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
          metrics.tokens.inc({ grant: grantOf(ctx), outcome: 'issued' });
          if (grantOf(ctx) === tokenExchange.grantType) metrics.exchanges.inc({ outcome: 'issued' });
        });
        provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error?: string }) => {
          metrics.tokens.inc({ grant: grantOf(ctx), outcome: error.error ?? 'server_error' });
          if (grantOf(ctx) === tokenExchange.grantType) metrics.exchanges.inc({ outcome: error.error ?? 'server_error' });
        });
      }
      provider.use(useClientAddress(clientAddress));
      provider.use(tokenResponseConformance);
      const routes = { authorization: '/auth', end_session: '/session/end', ...configured.routes };
      provider.use(formPostEndpoints([routes.authorization, routes.end_session]));
      const { keys } = configured.jwks as { keys: Parameters<typeof publicJwks>[0] };
      const hostKeys = createLocalJWKSet(publicJwks(keys));
      // Introspection of our JWT access tokens, and the impersonation kill switch there.
      provider.use(
        jwtIntrospection({
          getKey: (header, token) => (keysManaged ? keyRing.getKey : hostKeys)(header, token),
          issuer: () => provider.issuer,
          revoked: async (id) => (await database.db.collection<{ _id: string }>('impersonation_revocations').countDocuments({ _id: id }, { limit: 1 })) > 0,
        }),
      );
      // Rotation applies to the provider, our token checks and the cookie signers, here at once
      // and in other processes when the ring's generation moves.
      if (keysManaged) {
        keyRing.onChange((jwks) => {
          replaceSigningKeys(provider, jwks);
          // Koa's cookie signer (the provider is a Koa application) reads its keys per request.
          provider.keys = keyRing.cookieKeys;
        });
        caches.watch('oidcKeys', () => {
          keyRing.reload().catch((error: unknown) => logger.error('The rotated keys could not be loaded', error));
        });
      }
      const getKey = keysManaged ? keyRing.getKey : hostKeys;
      const algorithms = [...new Set(keys.map(({ alg }) => alg).filter((alg): alg is string => typeof alg === 'string'))];
      provider.registerGrantType(
        tokenExchange.grantType,
        tokenExchange.buildHandler({
          impersonation,
          resourceServerInfo: async (ctx, indicator, client) => resourceServerInfo!(ctx, indicator, client),
          identifyActor: createActorIdentifier(provider, getKey, queries, impersonation.audit),
          resourceScopes: async (indicator) => (await resources.get(indicator))?.scopes ?? [],
          roles,
          minted,
          policy: async () => (await impersonationPolicy.get('policy'))!,
          subjectTokens: subjectTokenSeal,
        }),
        tokenExchange.parameters,
      );
      // Without transactions, writes a stopped process left without their records are found and recorded.
      if (!database.transactions) {
        const writeFoundRecords = createRecordWriter(database, hooks.outbox, changesRetentionDays);
        resolver = startIntentResolver(database.db, {
          state: intentStates(database.db, queries),
          write: async (found, recorded) => {
            await writeFoundRecords(found, recorded);
            // What a stopped unit of work changed voids subject tokens as its own afterCommit would have.
            await voidSubjectTokensAfter(found);
          },
          logger,
          clock: options.clock ?? systemClock,
        });
      }
      if (options.signInEventsFromProvider ?? true) {
        signInReports(provider, (report) => hooks.reportInteraction(report), logger);
      }
      hooks.start();
      // The impersonation audit's chain, its events and its signed checkpoints (one process at a time).
      ledger = createLedger(database.db, {
        issuer: provider.issuer,
        signingKey: () => (keysManaged ? keyRing.jwks().keys : (keys as JWK[]))[0]!,
        announce: (items) => hooks.outbox.reportImpersonations(items),
        ...options.impersonationAudit,
        logger,
      });
      ledger.start();
      const write = createWriter<ChangeKey>(database, hooks.outbox, {
        retentionDays: changesRetentionDays,
        mustIntend: ({ entity, action }) => Object.hasOwn(changeEvents, `${entity}.${action}`),
        afterCommit: async (changes) => {
          await Promise.all([...cachesStaleAfter(changes).map((name) => caches.changed(name)), voidSubjectTokensAfter(changes)]);
        },
      });
      // One cap on concurrent password hashes for every hash an end user can cause, here and in the Account API.
      const hashing = createHashGate(options.experience?.maxConcurrentHashes);
      const experience =
        options.experience &&
        createExperience({
          db: database.db,
          provider,
          queries,
          write,
          logger,
          email: email!,
          sms: sms!,
          // The loader always answers (the defaults until the first PATCH).
          signInSettings: async () => (await signInSettings.get('default'))!,
          reportException: (report) => hooks.reportException(report),
          reportInteraction: (report) => hooks.reportInteraction(report),
          revokeAccount: revoke,
          branding: branding!,
          catalogs: catalogs!,
          origin: new URL(baseUrl).origin,
          bodyLimit: options.apiBodyLimit ?? 100 * 1024,
          proxy: provider.proxy,
          clientAddress,
          cookieKeys: (configured.cookies?.keys ?? keyRing.cookieKeys) as Koa['keys'],
          mfaKey: options.mfaEncryptionKey ?? secrets.mfaKey,
          connectors,
          upstream,
          ssoConnectors,
          ...(options.experience.limits && { limits: options.experience.limits }),
          hashing,
          databaseReady: () => watch.admit(),
        });
      const managementApi = createManagementApi(
        {
          database,
          queries,
          impersonation,
          hooks,
          write,
          dryRunCustomClaims: createDryRun(dryRuns),
          revokeAccount: revoke,
          subjectTokenTtl: options.subjectTokenTtl ?? 600,
          subjectTokenSeal,
          managementApiIndicator,
          // A placeholder secret: validation needs one for confidential clients, never sees a real one.
          validateApplication: (application) => provider.Client.validate(toClientMetadata(application, [])),
          keyRing: keysManaged ? keyRing : undefined,
          mfaBox: secretBox(options.mfaEncryptionKey ?? secrets.mfaKey),
          productName: (branding ?? defaultBranding).productName,
          connectors,
          upstream,
          ssoConnectors,
          ssoPublicEmailDomains: options.ssoPublicEmailDomains,
          searching: createSearchGate(),
          origin: new URL(baseUrl).origin,
          outboundFetch,
        },
        {
          auth: {
            issuer,
            audience: managementApiIndicator,
            getKey,
            algorithms,
            acceptedScopes: [managementScope, impersonationScope, hookEventsScope],
            heldScopes: heldManagementScopes,
          },
          bodyLimit: options.apiBodyLimit ?? 100 * 1024,
          log: logFailure,
          proxy: provider.proxy,
          clientAddress,
        },
      );
      // The user's own Account API, authorized by the user's token, not the Management API's.
      const account = accountApi({
        db: database.db,
        provider,
        queries,
        write,
        sendCode: options.experience && codeMessenger({ email: email!, sms: sms!, productName: branding!.productName, logger, catalogs }),
        catalogs,
        signInSettings: async () => (await signInSettings.get('default'))!,
        reportException: (report) => hooks.reportException(report),
        ...(options.experience?.limits && { limits: options.experience.limits }),
        hashing,
        mfaBox: secretBox(options.mfaEncryptionKey ?? secrets.mfaKey),
        rp: relyingPartyOf(new URL(baseUrl).origin, (branding ?? defaultBranding).productName),
        connectors,
        upstream,
        bodyLimit: options.apiBodyLimit ?? 100 * 1024,
        log: logFailure,
        proxy: provider.proxy,
        clientAddress,
      });
      // These routes come first: `/api/experience` and `/api/my-account` are not the Management API's, which would ask for its token.
      const parts = [...(experience ? [experience.middleware] : []), account, managementApi.middleware];
      // Our APIs' requests by route and status, when metrics are on (the route as the answering router noted it).
      const counted: Middleware = async (ctx, next) => {
        try {
          await next();
        } finally {
          const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
          metrics!.apiRequests.inc({ method: ctx.method, route: currentRequest()?.route ?? 'unmatched', status: String(status) });
        }
      };
      // Liveness asks no database: only a lost one (the process must restart) fails it. The pages
      // answer an unreachable database with a page of their own (`databaseReady`).
      const watched: Middleware = (ctx, next) => {
        if (ctx.path === `${managementPrefix}/status`) return watch.lostOnlyMiddleware(ctx, next);
        if (ctx.path === pagesPrefix || ctx.path.startsWith(`${pagesPrefix}/`)) return watch.observe(ctx, next);
        return watch.middleware(ctx, next);
      };
      return {
        ...managementApi,
        middleware: compose([whenOurs(requestIds), ...(metrics ? [whenOurs(counted)] : []), whenOurs(watched), ...parts]),
      };
    },

    async bootstrap(credentials) {
      const result = await bootstrap(database.db, queries, credentials);
      await Promise.all([caches.changed('applications'), caches.changed('applicationRoles')]);
      return result;
    },

    async close() {
      watch.stop();
      await resolver?.stop();
      await ledger?.stop();
      caches.stop();
      await Promise.all([sandbox.close(), dryRuns.close(), hooks.close()]);
    },
  };
}

/** Runs `middleware` for our own paths only (the Management and Experience APIs, the sign-in pages), never for the host's. */
function whenOurs(middleware: Middleware): Middleware {
  const ours = [managementPrefix, pagesPrefix];
  return (ctx, next) => (ours.some((prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`)) ? middleware(ctx, next) : next());
}
