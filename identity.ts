import type Koa from 'koa';
import { createLocalJWKSet } from 'jose';
import type { ClientSession } from 'mongodb';
import type { AdapterPayload, Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { createManagementApi, managementPrefix, type ManagementApi } from './management/router.js';
import { createFindAccount, standardClaims } from './provider/accounts.js';
import * as tokenExchange from './grants/token-exchange/index.js';
import { tokenResponseConformance } from './grants/token-response.js';
import { createActorIdentifier } from './grants/token-exchange/actor.js';
import { composeAdapters } from './provider/adapter.js';
import { bootstrap, ensureManagementApi, impersonationScope, managementScope, type BootstrapCredentials, type BootstrapResult } from './management/bootstrap.js';
import { CacheRegistry } from './lib/store/cache.js';
import { formPostEndpoints } from './provider/form-post-endpoints.js';
import { createClientAddress, noProxy, useClientAddress, type ProxyTrust } from './lib/http/client-address.js';
import {
  createCustomClaims, createDryRun, type CustomClaimsFailurePolicy, type GetCustomJwtClaims,
} from './provider/custom-claims.js';
import { Sandbox } from './provider/sandbox/index.js';
import type { MintedToken } from './provider/token-types.js';
import { createRoleLookup, loadRoleFacts } from './provider/role-facts.js';
import { installHashedSecretComparison } from './provider/client-secret.js';
import { toClientMetadata } from './provider/clients.js';
import { customizerCollection, type JwtCustomizer } from './lib/store/queries/jwt-customizer.js';
import { clientPolicies, extraClientMetadata } from './provider/client-policies.js';
import { createOutboundPolicy } from './lib/outbound-addresses.js';
import { createProviderFetch } from './provider/fetch.js';
import { defaultHookSettings, type AccessTokenAlg, type HookSettings } from './lib/config.js';
import { createHooks, type Hooks, type InteractionReport } from './hooks/index.js';
import { signInReports } from './hooks/provider-events.js';
import { ensureIndexes, type Database } from './lib/store/database.js';
import { experienceCollections } from './experience/collections.js';
import { hookCollections } from './hooks/collections.js';
import { providerCollections, revokeAccount } from './provider/collections.js';
import { createExperience, defaultBranding, interactionUrl, logConnector, type ExperienceOptions } from './experience/index.js';
import { createGrantLoader } from './experience/consent.js';
import { signOutPage } from './experience/views.js';
import { loadProviderSecrets, publicJwks, type ProviderSecrets } from './provider/keys.js';
import { createKeyRing } from './provider/oidc-keys.js';
import { replaceSigningKeys } from './provider/internals.js';
import type { Logger } from './lib/logger.js';
import { createQueries, type Queries } from './lib/store/queries/index.js';
import { createWriter } from './lib/store/unit-of-work.js';
import { createGetResourceServerInfo, createHeldPermissions, loadApplicationRoleIds, loadResource, loadUserRoleIds, permissionNames } from './provider/resource-servers.js';

const defaultAccessTokenTtl = 3600;

export interface IdentityOptions {
  database: Database;
  /** The provider's issuer, e.g. `https://id.example.com/oidc`. */
  issuer: string;
  /** Public base URL of the server; the Management API's indicator is `${baseUrl}/api`. */
  baseUrl: string;
  accessTokenAlg?: AccessTokenAlg;
  /** Largest Management API request body, in bytes. */
  apiBodyLimit?: number;
  /** An embedding host's own claims function (trusted, run as it is); otherwise the stored script runs in the sandbox. */
  getCustomJwtClaims?: GetCustomJwtClaims;
  /** When the customizer throws or times out: `omit` its claims (default) or `refuse` the token. */
  customClaimsOnError?: CustomClaimsFailurePolicy;
  /** Wall-clock limit of one customizer run, in milliseconds (default 1000). */
  customClaimsTimeoutMs?: number;
  /** Lifetime of a subject token, in seconds (default 600). */
  subjectTokenTtl?: number;
  /** Lifetime of a Management API access token, in seconds (default 600). */
  managementApiTokenTtl?: number;
  /**
   * Which proxies may say who the client is (`X-Forwarded-For`): none by default. Limits, audit
   * records and webhooks use the address the nearest trusted proxy saw.
   */
  trustProxy?: ProxyTrust;
  /** How often other processes' changes to cached data are looked for, in milliseconds. */
  cacheRefreshMs?: number;
  /** Webhook delivery; each setting defaults as its `HOOKS_*` counterpart does (see README). */
  hooks?: Partial<HookSettings>;
  /**
   * Private, loopback or reserved hosts and ranges the provider may still call (back-channel
   * logout, an application's `jwksUri`); public addresses always may. As `OUTBOUND_ALLOWED_HOSTS`.
   */
  outboundAllowedHosts?: string[];
  /**
   * Announce PostSignIn when the provider finishes an interaction with a login (its
   * `interaction.ended` event). On by default; a host whose own sign-in code calls
   * `reportInteractionEvent` turns it off so that a sign-in is not announced twice.
   */
  signInEventsFromProvider?: boolean;
  /**
   * The sign-in experience: pages under `/interaction`, the JSON API under `/api/experience`,
   * and oidc-provider's `interactions.url` pointed at them. Off unless given (a host may have its own).
   */
  experience?: ExperienceOptions;
  logger: Logger;
}

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
  const accessTokenAlg = options.accessTokenAlg ?? 'ES256';
  const managementApiIndicator = `${baseUrl.replace(/\/+$/, '')}${managementPrefix}`;
  const queries = createQueries(database.db);
  if (!database.transactions) {
    logger.warn(`Writing without transactions (${database.noTransactionsReason}): multi-document writes are not atomic, and webhook events are written right after the change they announce, so a crash between the two can lose an event.`);
  }
  // Each part declares the collections it owns; the entities' are ensured when the database is opened.
  await ensureIndexes(database.db, { ...providerCollections, ...hookCollections, ...(options.experience && experienceCollections) });
  const hooks = createHooks(database.db, queries, { ...defaultHookSettings, ...options.hooks }, logger);
  const revoke = (userId: string, session?: ClientSession) => revokeAccount(database.db, userId, session);

  await ensureManagementApi(database.db, managementApiIndicator);
  const secrets: ProviderSecrets = await loadProviderSecrets(database.db);
  const keyRing = createKeyRing(database.db, { signing: secrets.jwks.keys, cookies: secrets.cookieKeys });

  const caches = new CacheRegistry(database.db, options.cacheRefreshMs ?? 1000);
  const clients = caches.create<AdapterPayload>('applications', async (id) => {
    const application = await queries.applications.findById(id);
    if (!application) return undefined;
    return toClientMetadata(application, await queries.applications.secrets.listFor(id)) as AdapterPayload;
  });
  const resources = caches.create('resources', loadResource(queries));
  // An application's roles, and each role's permissions: a change to either clears only its cache.
  const applicationRoleIds = caches.create('applicationRoles', loadApplicationRoleIds(queries));
  const userRoleIds = caches.create('userRoles', loadUserRoleIds(queries));
  const roles = createRoleLookup(caches.create('roles', loadRoleFacts(queries)));
  const held = createHeldPermissions({ applicationRoleIds, userRoleIds, roles });
  /** The Management API scopes an application holds now, or undefined once it is deleted. */
  const heldManagementScopes = async (clientId: string) => {
    if (!(await clients.get(clientId))) return undefined;
    const managementApi = await resources.get(managementApiIndicator);
    return new Set(managementApi ? permissionNames(managementApi.scopes, await held.ofApplication(clientId)) : []);
  };
  await caches.start();

  const sandbox = new Sandbox({ timeoutMs: options.customClaimsTimeoutMs ?? 1000 });
  // Dry runs get a sandbox of their own: nothing a script under test does can delay a token.
  const dryRuns = new Sandbox({ timeoutMs: options.customClaimsTimeoutMs ?? 1000 });
  const customizer = caches.create<JwtCustomizer>('configs',
    async (id) => (await customizerCollection(database.db).findOne({ _id: id as JwtCustomizer['_id'] })) ?? undefined,
    { keepMisses: true });
  const customClaimsFor = createCustomClaims({
    queries, customizer, sandbox, logger, roles,
    ...(options.getCustomJwtClaims && { hostFunction: options.getCustomJwtClaims }),
    onError: options.customClaimsOnError ?? 'omit',
    exemptAudiences: new Set([managementApiIndicator]),
  });

  const email = options.experience && (options.experience.email ?? logConnector(logger));
  const branding = options.experience && { ...defaultBranding, ...options.experience.branding };
  if (email?.development) logger.warn(`Email: ${email.description}.`);
  else if (email) logger.info(`Email: ${email.description}.`);

  let configured: Configuration | undefined;
  /** Whether the provider's keys are ours (and so rotated through the Management API), not a host's own. */
  let keysManaged = true;
  let resourceServerInfo: ReturnType<typeof createGetResourceServerInfo> | undefined;
  // What a grant tells `extraTokenClaims` about a token it mints, through the token itself.
  const minted = new WeakMap<object, MintedToken>();

  return {
    queries,
    managementApiIndicator,
    hooks,
    reportInteractionEvent: (report, session) => hooks.reportInteraction(report, session),

    configure(host: Configuration = {}) {
      const adapter = composeAdapters(database.db, (id) => clients.get(id), host.adapter);
      const features = host.features ?? {};
      const hostExtraClaims = host.extraTokenClaims;
      const hostResourceIndicators = features.resourceIndicators;
      keysManaged = !host.jwks && !host.cookies?.keys;
      if (features.devInteractions?.enabled === true) {
        logger.warn('oidc-provider\'s development interactions (features.devInteractions) are on: anyone can sign in as any account id with any password. Never in production.');
      }
      configured = {
        ...host,
        adapter,
        // Our keys, from the ring that rotation changes; a host's own keys are the host's to rotate.
        jwks: host.jwks ?? keyRing.jwks(),
        // Discovery says only what works: `client_secret_jwt` needs the secret itself, which we
        // do not keep (only its hash).
        clientAuthMethods: host.clientAuthMethods ?? ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
        findAccount: createFindAccount(queries, host.findAccount),
        // The host's claims, then the customizer's, then ours (such as `act`), which nothing overrides.
        extraTokenClaims: async (ctx, token) => ({
          ...(await hostExtraClaims?.(ctx, token)),
          ...(await customClaimsFor(ctx, token as Parameters<typeof customClaimsFor>[1], minted.get(token)?.facts)),
          ...minted.get(token)?.claims,
        }),
        ...(options.experience && {
          interactions: { ...host.interactions, url: host.interactions?.url ?? ((_ctx, interaction) => interactionUrl(interaction.uid)) },
          loadExistingGrant: createGrantLoader(queries, host.loadExistingGrant),
        }),
        // The standard scopes release the standard claims; a host's own mapping wins scope by scope.
        claims: { ...standardClaims, ...host.claims },
        cookies: { ...host.cookies, keys: host.cookies?.keys ?? keyRing.cookieKeys },
        // Tokens for our resources live as long as the resource says (`accessTokenTtl`); ID and
        // refresh tokens as the application's `customClientMetadata` says.
        ttl: {
          AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultAccessTokenTtl,
          ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultAccessTokenTtl,
          IdToken: (_ctx, _token, client) => clientPolicies.idTokenTtl(client),
          RefreshToken: (ctx, token, client) => clientPolicies.refreshTokenTtl(ctx, token, client),
          ...host.ttl,
        },
        extraClientMetadata: extraClientMetadata(host.extraClientMetadata),
        rotateRefreshToken: host.rotateRefreshToken ?? clientPolicies.rotateRefreshToken,
        issueRefreshToken: host.issueRefreshToken ?? clientPolicies.issueRefreshToken,
        clientBasedCORS: host.clientBasedCORS ?? clientPolicies.clientBasedCORS,
        // What the provider fetches goes through the outbound policy webhooks use.
        fetch: host.fetch ?? createProviderFetch(createOutboundPolicy(options.outboundAllowedHosts)),
        features: {
          ...features,
          ...(options.experience && {
            rpInitiatedLogout: {
              ...features.rpInitiatedLogout,
              logoutSource: features.rpInitiatedLogout?.logoutSource ?? ((ctx, form) => { ctx.type = 'html'; ctx.body = signOutPage(branding!, form); }),
            },
          }),
          // oidc-provider's development login signs in any account id with any password: off
          // unless the host turned it on itself (and then it is said at startup).
          devInteractions: { ...features.devInteractions, enabled: features.devInteractions?.enabled === true },
          clientCredentials: { ...features.clientCredentials, enabled: true },
          // OpenID Connect Back-Channel Logout 1.0, for applications with a `backchannelLogoutUri`.
          backchannelLogout: { ...features.backchannelLogout, enabled: features.backchannelLogout?.enabled ?? true },
          resourceIndicators: {
            ...hostResourceIndicators,
            enabled: true,
            getResourceServerInfo: resourceServerInfo = createGetResourceServerInfo({
              resources,
              held,
              accessTokenAlg,
              managementApiTokenTtl: options.managementApiTokenTtl ?? 600,
              ...(hostResourceIndicators?.getResourceServerInfo && { fallback: hostResourceIndicators.getResourceServerInfo }),
            }),
          },
        },
      };
      return configured;
    },

    install(provider: Provider) {
      if (!configured) throw new TypeError('call configure() and build the provider from its result before install()');
      installHashedSecretComparison(provider);
      const clientAddress = createClientAddress(options.trustProxy ?? noProxy);
      provider.use(useClientAddress(clientAddress));
      provider.use(tokenResponseConformance);
      const routes = { authorization: '/auth', end_session: '/session/end', ...configured.routes };
      provider.use(formPostEndpoints([routes.authorization, routes.end_session]));
      const { keys } = configured.jwks as { keys: Parameters<typeof publicJwks>[0] };
      // Rotation applies to the provider, our token checks and the cookie signers, here at once
      // and in other processes when the ring's generation moves.
      if (keysManaged) {
        keyRing.onChange((jwks) => {
          replaceSigningKeys(provider, jwks);
          // Koa's cookie signer (the provider is a Koa application) reads its keys per request.
          provider.keys = keyRing.cookieKeys;
        });
        caches.watch('oidcKeys', () => { keyRing.reload().catch((error: unknown) => logger.error('The rotated keys could not be loaded', error)); });
      }
      const getKey = keysManaged ? keyRing.getKey : createLocalJWKSet(publicJwks(keys));
      const algorithms = [...new Set(keys.map(({ alg }) => alg).filter((alg): alg is string => typeof alg === 'string'))];
      provider.registerGrantType(tokenExchange.grantType, tokenExchange.buildHandler({
        queries,
        resourceServerInfo: async (ctx, indicator, client) => resourceServerInfo!(ctx, indicator, client),
        identifyActor: createActorIdentifier(provider, getKey, queries),
        resourceScopes: async (indicator) => (await resources.get(indicator))?.scopes ?? [],
        roles,
        minted,
      }), tokenExchange.parameters);
      if (options.signInEventsFromProvider ?? true) {
        signInReports(provider, (report) => hooks.reportInteraction(report), logger);
      }
      hooks.start();
      const write = createWriter(database, hooks.outbox);
      const experience = options.experience && createExperience({
        db: database.db, provider, queries, write, logger, email: email!, revokeAccount: revoke,
        branding: branding!,
        origin: new URL(baseUrl).origin,
        bodyLimit: options.apiBodyLimit ?? 100 * 1024,
        proxy: provider.proxy,
        clientAddress,
        cookieKeys: (configured.cookies?.keys ?? keyRing.cookieKeys) as Koa['keys'],
        ...(options.experience.limits && { limits: options.experience.limits }),
        ...(options.experience.maxConcurrentHashes && { maxConcurrentHashes: options.experience.maxConcurrentHashes }),
      });
      const managementApi = createManagementApi({
        database,
        queries,
        hooks,
        write,
        dryRunCustomClaims: createDryRun(dryRuns),
        revokeAccount: revoke,
        subjectTokenTtl: options.subjectTokenTtl ?? 600,
        caches,
        managementApiIndicator,
        // A placeholder secret: validation needs one for confidential clients, never sees a real one.
        validateApplication: (application) => provider.Client.validate(toClientMetadata(application, [])),
        keyRing: keysManaged ? keyRing : undefined,
      }, {
        auth: { issuer, audience: managementApiIndicator, getKey, algorithms, acceptedScopes: [managementScope, impersonationScope], heldScopes: heldManagementScopes },
        bodyLimit: options.apiBodyLimit ?? 100 * 1024,
        log: (error, { method, path }) => logger.error(`${method} ${path} failed`, error),
        proxy: provider.proxy,
        clientAddress,
      });
      // The experience's routes come first: `/api/experience` is not the Management API's, which would ask for a token.
      if (!experience) return managementApi;
      return { ...managementApi, middleware: (ctx, next) => experience.middleware(ctx, () => managementApi.middleware(ctx, next)) };
    },

    async bootstrap(credentials) {
      const result = await bootstrap(database.db, queries, credentials);
      await Promise.all([caches.changed('applications'), caches.changed('applicationRoles')]);
      return result;
    },

    async close() {
      caches.stop();
      await Promise.all([sandbox.close(), dryRuns.close(), hooks.close()]);
    },
  };
}
