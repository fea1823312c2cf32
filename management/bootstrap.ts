import type { Db } from 'mongodb';

import { isDuplicateKeyError } from '../lib/errors.js';
import { generateId, generateSecret, sha256 } from '../lib/ids.js';
import { createLinks } from '../lib/store/links.js';
import type { ApplicationDocument, ApplicationSecretDocument, ResourceDocument, RoleDocument, ScopeDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';

/** Fixed ids of what every deployment has, so that concurrent starts converge on one copy. */
export const builtIn = {
  managementResourceId: 'management-api',
  managementScopeId: 'management-api-all',
  impersonationScopeId: 'management-api-impersonation',
  hookEventsScopeId: 'management-api-hook-events',
  managementRoleId: 'management-api-access',
  /** The admin console's application (console/built-in.ts): made at start, so it is not "an application someone made". */
  consoleApplicationId: 'oidc-identity-console',
  /** The console permission (a scope of the Management API resource) and the user role that holds it: kept, or nobody could enter the console. */
  consoleScopeId: 'management-api-console',
  consoleRoleId: 'console-administrator',
} as const;

/** The Management API's scopes: everything, or only issuing subject tokens. */
export const managementScope = 'all';
export const impersonationScope = 'impersonation';
/** Reading the webhook events' pull feed, and nothing else. */
export const hookEventsScope = 'hook-events';

/** An upsert by `_id` that lost a race to another process's insert simply retries once, and then matches. */
export async function upsertRetrying(write: () => Promise<unknown>) {
  try {
    await write();
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    await write();
  }
}

/** A permission of the Management API resource, made once under a fixed id (a later start leaves it as an operator changed it). */
export async function ensureBuiltInScope(db: Db, id: string, name: string, description: string): Promise<void> {
  await upsertRetrying(() =>
    db
      .collection<ScopeDocument>('scopes')
      .updateOne({ _id: id }, { $setOnInsert: { resourceId: builtIn.managementResourceId, name, description, createdAt: Date.now() } }, { upsert: true }),
  );
}

/** A role made once under a fixed id (a later start leaves it as an operator changed it). */
export async function ensureBuiltInRole(db: Db, id: string, role: Pick<RoleDocument, 'name' | 'description' | 'type'>): Promise<void> {
  await upsertRetrying(() =>
    db.collection<RoleDocument>('roles').updateOne({ _id: id }, { $setOnInsert: { ...role, isDefault: false, createdAt: Date.now() } }, { upsert: true }),
  );
}

/**
 * The Management API is itself an API resource (indicator `${baseUrl}/api`, scope `all`), and a
 * machine-to-machine role grants that scope. Runs at every start; a changed base URL moves the indicator.
 */
export async function ensureManagementApi(db: Db, indicator: string): Promise<void> {
  const now = Date.now();
  try {
    await upsertRetrying(() =>
      db.collection<ResourceDocument>('resources').updateOne(
        { _id: builtIn.managementResourceId },
        {
          $set: { indicator, isBuiltIn: true },
          $setOnInsert: { name: 'Management API', isDefault: false, accessTokenTtl: 3600, createdAt: now },
        },
        { upsert: true },
      ),
    );
  } catch (error) {
    if (isDuplicateKeyError(error)) {
      throw new Error(`another API resource already uses the Management API's indicator ${indicator}; change that resource or BASE_URL`);
    }
    throw error;
  }
  await ensureBuiltInScope(db, builtIn.managementScopeId, managementScope, 'Full access to the Management API');
  await ensureBuiltInScope(
    db,
    builtIn.impersonationScopeId,
    impersonationScope,
    'Issue subject tokens for impersonation and revoke impersonations, nothing else',
  );
  await ensureBuiltInScope(db, builtIn.hookEventsScopeId, hookEventsScope, 'Read the webhook events feed, and nothing else');
  await ensureBuiltInRole(db, builtIn.managementRoleId, {
    name: 'Management API access',
    description: 'Machine-to-machine access to the whole Management API',
    type: 'MachineToMachine',
  });
  await upsertRetrying(() => createLinks(db, 'roles_scopes').add(builtIn.managementRoleId, [builtIn.managementScopeId]));
}

export interface BootstrapCredentials {
  clientId: string;
  clientSecret: string;
}

export interface BootstrapResult {
  /** Credentials created by this start, to print once; undefined when nothing new was made. */
  created?: BootstrapCredentials;
  /** The console's first administrator, made by this start (console/built-in.ts): to print once. */
  administrator?: { username: string; password: string; offeredTotp?: boolean };
}

function m2mApplication(id: string, name: string): ApplicationDocument {
  return {
    _id: id,
    name,
    description: 'Created at startup to call the Management API',
    type: 'MachineToMachine',
    oidcClientMetadata: { redirectUris: [], postLogoutRedirectUris: [] },
    customClientMetadata: { allowTokenExchange: false },
    customData: {},
    isThirdParty: false,
    createdAt: Date.now(),
  };
}

/**
 * Makes sure someone can call the Management API. With configured credentials, ensures that
 * application exists with exactly that secret and the Management API role. Without them, on a
 * database with no application at all, creates one and returns its credentials.
 */
export async function bootstrap(db: Db, queries: Queries, configured?: BootstrapCredentials): Promise<BootstrapResult> {
  const applications = db.collection<ApplicationDocument>('applications');
  const secrets = db.collection<ApplicationSecretDocument>('application_secrets');

  if (configured) {
    const { clientId, clientSecret } = configured;
    await upsertRetrying(() =>
      applications.updateOne({ _id: clientId }, { $setOnInsert: (({ _id, ...rest }) => rest)(m2mApplication(clientId, 'Bootstrap')) }, { upsert: true }),
    );
    await upsertRetrying(() =>
      secrets.updateOne(
        { applicationId: clientId, name: 'bootstrap' },
        { $set: { hash: sha256(clientSecret), expiresAt: null }, $setOnInsert: { _id: generateId(), createdAt: Date.now() } },
        { upsert: true },
      ),
    );
    await queries.links.applicationsRoles.add(clientId, [builtIn.managementRoleId]);
    return {};
  }

  // A database whose only application is the console's built-in one has none of its own yet.
  if (await applications.findOne({ _id: { $ne: builtIn.consoleApplicationId } })) return {};
  // Only one of several processes starting on an empty database may create it.
  try {
    await db.collection<{ _id: string; at: Date }>('system').insertOne({ _id: 'bootstrap', at: new Date() });
  } catch (error) {
    if (isDuplicateKeyError(error)) return {};
    throw error;
  }
  const application = m2mApplication(generateId(), 'Bootstrap');
  const clientSecret = generateSecret();
  await queries.applications.insert(application, {
    _id: generateId(),
    applicationId: application._id,
    name: 'bootstrap',
    hash: sha256(clientSecret),
    createdAt: Date.now(),
    expiresAt: null,
  });
  await queries.links.applicationsRoles.add(application._id, [builtIn.managementRoleId]);
  return { created: { clientId: application._id, clientSecret } };
}
