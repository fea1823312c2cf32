import { accountCollections } from '../account/collections.js';
import { consolePathsOf, ensureConsole } from '../console/built-in.js';
import { consoleCollections } from '../console/store.js';
import { experienceCollections } from '../experience/collections.js';
import { logConnector, logSmsConnector } from '../experience/index.js';
import { hookCollections } from '../hooks/collections.js';
import { createHooks } from '../hooks/index.js';
import { impersonationCollections } from '../impersonation/collections.js';
import { createImpersonationQueries } from '../impersonation/queries.js';
import { createAccountLookup } from '../impersonation/accounts.js';
import { subjectTokenSeal } from '../impersonation/subject-token.js';
import { voidingOf } from '../impersonation/voiding.js';
import { watchDatabase } from '../lib/metrics.js';
import { secretBox } from '../lib/mfa/secret-box.js';
import { createOutboundPolicy } from '../lib/outbound-addresses.js';
import { belowRecommended } from '../lib/password.js';
import type { Change } from '../lib/store/changes.js';
import { ensureIndexes, storeCollections } from '../lib/store/database.js';
import { watchDatabaseIdentity } from '../lib/store/database-identity.js';
import { intentCollections } from '../lib/store/intents.js';
import { createQueries } from '../lib/store/queries/index.js';
import { outsideUnit } from '../lib/store/session.js';
import { ensureManagementApi } from '../management/bootstrap.js';
import { createProviderCaches } from '../provider/caches.js';
import { providerCollections, revokeAccount } from '../provider/collections.js';
import type { AccountRevocationCause, SessionRevocationCause } from '../hooks/catalog.js';
import { revocationReports, type EndedOfAccount } from '../hooks/lifecycle-events.js';
import { createSessionStore } from '../provider/sessions.js';
import { createOrganizationAccess } from '../provider/organization-access.js';
import { createCustomClaims } from '../provider/custom-claims.js';
import { createSignInLookup } from '../provider/session-contexts.js';
import { createProviderFetch } from '../provider/fetch.js';
import { familyOfAlg, loadProviderSecrets } from '../provider/keys.js';
import { createKeyRing } from '../provider/oidc-keys.js';
import { Sandbox } from '../provider/sandbox/index.js';
import { createConnectorStore } from '../social/connectors.js';
import { createUpstream } from '../social/upstream.js';
import { upstreamCollections } from '../sso/collections.js';
import { createSsoConnectorStore } from '../sso/connectors.js';
import type { ResolvedOptions } from './options.js';

/**
 * What every face shares, made once when the identity is created: the queries and the
 * collections' indexes, the database watch, the hooks, the secrets and the key ring, the caches,
 * the connectors and the custom claims. Nothing here serves a request yet.
 */
export async function createParts(options: ResolvedOptions) {
  const { database, logger, metrics } = options;
  const { db } = database;
  if (belowRecommended(options.passwordHashing)) {
    const { N, r, p } = options.passwordHashing;
    logger.warn(
      `Password hashes at scrypt N=${N}, r=${r}, p=${p}: below OWASP's recommended cost, fit for a test suite only (PASSWORD_SCRYPT, passwordHashing).`,
    );
  }
  if (!database.transactions) {
    logger.warn(
      `Writing without transactions (${database.noTransactionsReason}): multi-document writes are not atomic. A change that announces a webhook event is stored as intended before it is written, so that one a crash leaves without its event is found and announced within a minute; other change records are written after their change (docs/management-api.md, Writes and their records).`,
    );
  }
  // Each part declares the collections it owns; the entities' are ensured when the database is opened.
  const featureCollections = {
    ...providerCollections,
    ...hookCollections,
    ...intentCollections,
    ...accountCollections,
    ...impersonationCollections,
    ...upstreamCollections,
    ...(options.experience && experienceCollections),
    ...(options.consolePath && consoleCollections),
  };
  await ensureIndexes(db, featureCollections);
  const watch = await watchDatabaseIdentity(database.client, db, { logger, ...(options.onDatabaseLost && { onLost: options.onDatabaseLost }) });
  const queries = createQueries(db);
  const impersonation = createImpersonationQueries(db);
  const caches = await createProviderCaches(db, queries, { refreshMs: options.cacheRefreshMs, managementApiIndicator: options.managementApiIndicator });
  // The events name applications as the provider's cache keeps them, as every sign-in reads them.
  const hooks = createHooks(db, queries, options.hookSettings, logger, {
    ...(options.clock && { clock: options.clock }),
    ...(metrics && { metrics }),
    findApplication: (id) => caches.applications.get(id),
    registry: caches.registry,
  });
  if (metrics) watchDatabase(metrics, database.client);

  await ensureManagementApi(db, options.managementApiIndicator);
  if (options.consolePath) await ensureConsole(db, consolePathsOf(options.origin, options.consolePath));
  const secrets = await loadProviderSecrets(db);
  // The deployment's sealing key: MFA secrets, connectors' client secrets, and (derived from it) subject tokens.
  const sealingKey = options.mfaEncryptionKey ?? secrets.mfaKey;
  const box = secretBox(sealingKey);
  const outboundFetch = createProviderFetch(createOutboundPolicy(options.outboundAllowedHosts));
  const sandbox = new Sandbox({ timeoutMs: options.customClaimsTimeoutMs });
  const signInOf = createSignInLookup(db);
  const customClaimsFor = createCustomClaims({
    queries,
    customizer: caches.customizer,
    sandbox,
    logger,
    roles: caches.roles,
    ...(options.getCustomJwtClaims && { hostFunction: options.getCustomJwtClaims }),
    onError: options.customClaimsOnError,
    exemptAudiences: new Set([options.managementApiIndicator]),
    ...(metrics && { metrics }),
    signInOf: (sessionUid, accountId) => outsideUnit(() => signInOf(sessionUid, accountId)),
  });

  // Who may get a token for an organization (`provider/organization-access.ts`).
  const organizationAccess = createOrganizationAccess({
    organizations: caches.organizations,
    isThirdParty: async (id) => (await caches.applications.get(id))?.isThirdParty === true,
    consented: (applicationId, userId, organizationId) => outsideUnit(() => queries.consentOrganizations.has(applicationId, userId, organizationId)),
    hasSecondFactor: async (userId) => ((await outsideUnit(() => queries.users.findById(userId)))?.mfaVerifications?.length ?? 0) > 0,
  });

  // Who may be impersonated or act: our users, then the host's accounts (`impersonation/accounts.ts`).
  const impersonationAccounts = createAccountLookup((id) => outsideUnit(() => queries.users.findById(id)), options.hostAccounts);

  /** Announces the sessions and grants the service ended, in the caller's unit of work. */
  const announceEnded = (userId: string, ended: EndedOfAccount, cause: SessionRevocationCause) =>
    hooks.outbox.reportLifecycle(revocationReports(userId, ended, cause));

  // The key sets as stored (a rotation may have made one for another family than ACCESS_TOKEN_ALG's).
  const keyRing = createKeyRing(
    db,
    { signing: secrets.jwks.keys, cookies: secrets.cookieKeys },
    {
      family: familyOfAlg(options.accessTokenAlg),
      clock: options.clock,
    },
  );
  await keyRing.reload();

  return {
    db,
    /** Every collection the service declares, with its indexes (the sweeper reads their TTLs). */
    collections: { ...storeCollections, ...featureCollections },
    watch,
    queries,
    impersonation,
    impersonationAccounts,
    hooks,
    secrets,
    sealingKey,
    box,
    keyRing,
    subjectTokenSeal: subjectTokenSeal(sealingKey),
    outboundFetch,
    upstream: createUpstream({ fetch: outboundFetch }),
    connectors: createConnectorStore(db, box),
    ssoConnectors: createSsoConnectorStore(db, box),
    caches,
    organizationAccess,
    sandbox,
    // Dry runs get a sandbox of their own: nothing a script under test does can delay a token.
    dryRuns: new Sandbox({ timeoutMs: options.customClaimsTimeoutMs }),
    customClaimsFor,
    messengers: options.experience && messengersOf(options),
    /** Ends a user's sessions, grants and tokens, announcing each session and grant ended (in the caller's unit of work). */
    revoke: async (userId: string, cause: AccountRevocationCause) => announceEnded(userId, await revokeAccount(db, userId), cause),
    announceEnded,
    /** Users' sessions and grants, shown and ended by the Management and Account APIs. */
    sessions: createSessionStore(db, {
      isFirstParty: async (clientId) => {
        const application = await caches.applications.get(clientId);
        return application !== undefined && !application.isThirdParty;
      },
    }),
    /** Voids the subject tokens that committed changes made untrue (`impersonation/voiding.ts`). */
    voidSubjectTokensAfter: async (changes: Change[]) => {
      await Promise.all(voidingOf(changes).map(({ selection, reason }) => impersonation.voidSubjectTokens(selection, reason)));
    },
  };
}

export type Parts = Awaited<ReturnType<typeof createParts>>;

/** The email and SMS connectors, the log's when none is given, said in the log at start. */
function messengersOf({ experience, logger }: ResolvedOptions) {
  const email = experience?.email ?? logConnector(logger);
  const sms = experience?.sms ?? logSmsConnector(logger);
  for (const [kind, connector] of [
    ['Email', email],
    ['SMS', sms],
  ] as const) {
    if (connector.development) logger.warn(`${kind}: ${connector.description}.`);
    else logger.info(`${kind}: ${connector.description}.`);
  }
  return { email, sms };
}
