import { MongoClient, type ClientSession, type Db, type IndexDescription, type MongoClientOptions } from 'mongodb';

import { ApiError } from '../errors.js';
import { linkIndexes, linkTables, type LinkTable } from './links.js';

/** Each collection's indexes, as a part of the service declares the collections it owns. */
export type CollectionIndexes = Record<string, IndexDescription[]>;

/** Index shapes every part uses: newest first for lists, and expiry for documents with an end. */
export const newestFirst: IndexDescription = { key: { createdAt: -1, _id: -1 }, name: 'createdAt' };
export const expiring: IndexDescription = { key: { expiresAt: 1 }, name: 'expiresAt_ttl', expireAfterSeconds: 0 };

/**
 * The entities' collections and their indexes. Listing endpoints sort by `createdAt`, so each
 * listed collection indexes it; uniqueness that the API promises is a unique index, so that
 * concurrent requests cannot both pass a check and both insert. Each feature declares its own
 * collections beside its code, and `createIdentity` ensures them all.
 */
export const storeCollections: CollectionIndexes = {
  applications: [
    { key: { createdAt: -1, _id: -1 }, name: 'createdAt' },
    { key: { type: 1 }, name: 'type' },
  ],
  application_secrets: [{ key: { applicationId: 1, name: 1 }, name: 'applicationId_name', unique: true }],
  resources: [
    { key: { indicator: 1 }, name: 'indicator', unique: true },
    { key: { createdAt: -1, _id: -1 }, name: 'createdAt' },
  ],
  scopes: [
    { key: { resourceId: 1, name: 1 }, name: 'resourceId_name', unique: true },
    { key: { resourceId: 1, createdAt: -1, _id: -1 }, name: 'resourceId_createdAt' },
  ],
  roles: [newestFirst, { key: { name: 1 }, name: 'name', unique: true }, { key: { type: 1, createdAt: -1 }, name: 'type' }],
  users: [
    newestFirst,
    { key: { username: 1 }, name: 'username', unique: true, partialFilterExpression: { username: { $type: 'string' } } },
    { key: { emailKey: 1 }, name: 'emailKey', unique: true, partialFilterExpression: { emailKey: { $type: 'string' } } },
    { key: { primaryPhone: 1 }, name: 'primaryPhone', unique: true, partialFilterExpression: { primaryPhone: { $type: 'string' } } },
    // Multikey: each linked upstream account (`<target>:<id>`) belongs to one user. The field is absent, never empty, without any.
    { key: { identityKeys: 1 }, name: 'identityKeys', unique: true, partialFilterExpression: { identityKeys: { $exists: true } } },
  ],
  organizations: [newestFirst],
  organization_roles: [newestFirst, { key: { name: 1 }, name: 'name', unique: true }],
  organization_scopes: [newestFirst, { key: { name: 1 }, name: 'name', unique: true }],
  organization_user_roles: [
    { key: { organizationId: 1, userId: 1, organizationRoleId: 1 }, name: 'membership_role', unique: true },
    { key: { organizationRoleId: 1 }, name: 'organizationRoleId' },
    { key: { userId: 1 }, name: 'userId' },
  ],
  organization_invitations: [
    newestFirst,
    // One pending invitation per invitee and organization (Logto's partial unique index).
    {
      key: { invitee: 1, organizationId: 1 },
      name: 'pending_invitee_organization',
      unique: true,
      partialFilterExpression: { status: { $eq: 'Pending' } },
    },
    { key: { organizationId: 1 }, name: 'organizationId' },
  ],
  personal_access_tokens: [
    { key: { userId: 1, name: 1 }, name: 'userId_name', unique: true },
    { key: { hash: 1 }, name: 'hash', unique: true },
  ],
  one_time_tokens: [newestFirst, { key: { tokenHash: 1 }, name: 'tokenHash', unique: true }, { key: { email: 1 }, name: 'email' }],
  application_user_consent_organizations: [
    { key: { applicationId: 1, userId: 1 }, name: 'applicationId_userId' },
    { key: { userId: 1 }, name: 'userId' },
    { key: { organizationId: 1 }, name: 'organizationId' },
  ],
  organization_application_roles: [
    { key: { organizationId: 1, applicationId: 1, organizationRoleId: 1 }, name: 'membership_role', unique: true },
    { key: { organizationRoleId: 1 }, name: 'organizationRoleId' },
    { key: { applicationId: 1 }, name: 'applicationId' },
  ],
  // The change log: read newest first, whole or by entity; kept for CHANGES_RETENTION_DAYS.
  changes: [{ key: { createdAt: 1, _id: 1 }, name: 'createdAt' }, { key: { entity: 1, id: 1, createdAt: -1 }, name: 'entity_id' }, expiring],
  ...Object.fromEntries((Object.keys(linkTables) as LinkTable[]).map((table) => [table, linkIndexes(table)])),
  system: [],
  configs: [],
  cache_generations: [],
};

export interface Database {
  client: MongoClient;
  db: Db;
  /** Whether writes run in multi-document transactions (a replica set or a sharded cluster). */
  transactions: boolean;
  /** Why they do not, in a sentence, when they do not. */
  noTransactionsReason: string | undefined;
  /**
   * Runs `work` in one transaction when the server has them, so that its writes commit or
   * roll back together; on a standalone server the writes run one after another.
   */
  transaction<T>(work: (session: ClientSession | undefined) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The embedded engine's streaming monitor breaks the connection pool, and polling
 * costs a real server nothing worth mentioning, so we always poll.
 */
function withPollingMonitor(uri: string): string {
  if (/[?&]serverMonitoringMode=/.test(uri)) return uri;
  return `${uri}${uri.includes('?') ? '&' : '?'}serverMonitoringMode=poll`;
}

export interface OpenDatabaseOptions {
  /** Database name; by default the one in the URI's path, else `oidc-identity`. */
  dbName?: string;
  /** Overrides the detection of transactions (tests of the transactional path on the embedded engine). */
  transactions?: boolean;
  /** Passed to the driver (`monitorCommands`, pool sizes, TLS). */
  clientOptions?: MongoClientOptions;
}

function databaseNameIn(uri: string): string | undefined {
  const name = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]+)/.exec(uri)?.[1];
  return name ? decodeURIComponent(name) : undefined;
}

export async function openDatabase(uri: string, { dbName, transactions, clientOptions }: OpenDatabaseOptions = {}): Promise<Database> {
  const client = await MongoClient.connect(withPollingMonitor(uri), clientOptions);
  const db = client.db(dbName ?? databaseNameIn(uri) ?? 'oidc-identity');
  return attachDatabase(client, db, transactions === undefined ? {} : { transactions });
}

/**
 * Whether to write in transactions, and why not. The embedded engine (jongodb) accepts them, but
 * a transaction's commit overwrites whatever other writes its collections received meanwhile
 * (measured: of 200 concurrent single-insert transactions, 59 documents remained; plain writes
 * lose nothing), so on it we write without transactions, as on a standalone server.
 */
async function transactionSupport(db: Db): Promise<string | undefined> {
  const [hello, build] = await Promise.all([db.admin().command({ hello: 1 }), db.admin().command({ buildInfo: 1 })]);
  if (String(build.version).includes('jongodb')) return 'the embedded engine loses writes made beside a transaction, so it is used without them';
  if (typeof hello.setName === 'string' || hello.msg === 'isdbgrid') return undefined;
  return 'the MongoDB server is not a replica set';
}

/** Wraps a connection the host already holds (embedding), so that we share its pool. */
export async function attachDatabase(client: MongoClient, db: Db, override: { transactions?: boolean } = {}): Promise<Database> {
  const detected = await transactionSupport(db);
  const noTransactionsReason = override.transactions === undefined ? detected : override.transactions ? undefined : 'turned off';
  const transactions = noTransactionsReason === undefined;
  await ensureIndexes(db);
  return {
    client,
    db,
    transactions,
    noTransactionsReason,
    async transaction(work) {
      if (!transactions) return work(undefined);
      for (let attempt = 1; ; attempt += 1) {
        const session = client.startSession();
        try {
          return await session.withTransaction(() => work(session));
        } catch (error) {
          if (!isWriteConflict(error)) throw error;
          // Two requests changed the same documents at once and this one lost. The driver retries
          // transient errors itself when the server labels them; not every engine does, so we
          // retry a few times too, then say so instead of failing with a 500.
          if (attempt >= maxTransactionAttempts) {
            throw new ApiError('request.conflict', 'the data changed concurrently; retry the request');
          }
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
        } finally {
          await session.endSession();
        }
      }
    },
    close: () => client.close(),
  };
}

const maxTransactionAttempts = 5;

function isWriteConflict(error: unknown): boolean {
  const candidate = (error ?? {}) as { code?: number; message?: string; hasErrorLabel?: (label: string) => boolean };
  return (
    candidate.code === 112 ||
    (typeof candidate.hasErrorLabel === 'function' && candidate.hasErrorLabel('TransientTransactionError')) ||
    /write conflict/i.test(candidate.message ?? '')
  );
}

/**
 * Creates the indexes of the collections it is handed (by default the entities'). Idempotent:
 * creating an index that exists is a no-op.
 */
export async function ensureIndexes(db: Db, collections: CollectionIndexes = storeCollections): Promise<void> {
  await Promise.all(
    Object.entries(collections)
      .filter(([, indexes]) => indexes.length > 0)
      .map(([name, indexes]) => db.collection(name).createIndexes(indexes)),
  );
}
