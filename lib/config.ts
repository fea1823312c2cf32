import { Ajv, type ErrorObject } from 'ajv';

import { logFormats, logLevels } from './logger.js';
import { createSchemaCache } from './schema-cache.js';
import { defaultBodyLimit } from './http/json-body.js';
import { addWebUrlFormats } from './http/web-origin.js';
import { defaultDatabaseTimeouts } from './store/availability.js';
import { defaultChangeRetentionDays } from './store/changes.js';

/** Signing algorithms we offer for access tokens. ES256 and EdDSA sign several times faster than RS256. */
export const accessTokenAlgs = ['ES256', 'EdDSA', 'RS256'] as const;
export type AccessTokenAlg = (typeof accessTokenAlgs)[number];

/** Environment variables and their JSON Schemas (each part lists its own; the standalone server joins them). */
export type EnvironmentSpec = Record<string, Record<string, unknown>>;

/** A bad setting. Its message is one line naming the setting, fit to print as the only output of a failed start. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ajv = addWebUrlFormats(new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false }));
const strict = addWebUrlFormats(new Ajv({ allErrors: false }));

/** The settings' schemas, compiled once per process (a start builds them anew from its parts). */
const schemas = createSchemaCache();

function describe(error: ErrorObject, prefix: string): string {
  if (error.keyword === 'dependencies') {
    const { property, missingProperty } = error.params as { property: string; missingProperty: string };
    return `${missingProperty} must be set together with ${property}`;
  }
  if (error.keyword === 'additionalProperties') {
    return `${prefix}${error.instancePath.replaceAll('/', '.')}.${(error.params as { additionalProperty: string }).additionalProperty} is not a setting`.replace(
      /^\./,
      '',
    );
  }
  const name = `${prefix}${error.instancePath.replaceAll('/', '.')}`.replace(/^\./, '');
  const allowed = error.keyword === 'enum' ? ` (one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')})` : '';
  return `${name} ${error.message ?? 'is invalid'}${allowed}`;
}

/**
 * Reads the variables `spec` names from `env` (an empty string counts as unset, as in most
 * shells' `FOO= npm start`), converted to their types and defaulted; a bad one is a ConfigError.
 */
export function readEnvironment(spec: EnvironmentSpec, env: NodeJS.ProcessEnv, dependencies: Record<string, string[]> = {}): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(spec)) {
    const value = env[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  const validate = schemas.compiled(ajv, { type: 'object', properties: spec, dependencies })();
  if (!validate(picked)) throw new ConfigError(`Invalid setting: ${describe(validate.errors![0], '')}`);
  return picked;
}

/** Checks an embedding host's options against `schema`, without converting them; a bad one is a ConfigError naming it under `prefix`. */
export function checkOptions(schema: Record<string, unknown>, options: unknown, prefix: string): void {
  const validate = schemas.compiled(strict, schema)();
  if (!validate(options)) throw new ConfigError(`Invalid option: ${describe(validate.errors![0], prefix)}`);
}

/** How long the change log may keep a record, in days: for the environment and an embedding host alike. */
export const changeRetentionRule = { type: 'integer', minimum: 1, maximum: 3650 } as const;

/** The core variables: the server, its database, tokens and proxies. */
export const coreEnvironment = {
  PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3001, description: 'Port to listen on; `0` picks a free one.' },
  BASE_URL: {
    type: 'string',
    pattern: '^https?://[^/?#]+(/[^?#]*)?$',
    description:
      "Unset: `http://localhost:${PORT}`. Public URL of the server. The issuer is `${BASE_URL}/oidc`; the Management API's resource indicator is `${BASE_URL}/api`. Every process of one deployment must share it.",
  },
  MONGODB_URI: {
    type: 'string',
    pattern: '^mongodb(\\+srv)?://',
    description:
      "Unset: embedded in-memory engine. MongoDB connection string. The database is the one in the URI's path, else `oidc-identity`. Multi-document writes (a change with its record and webhook event, deletes with their references) are transactions only on a replica set or sharded cluster; on a standalone `mongod`, and on the embedded engine (whose transaction commits overwrite concurrent writes), they run one after another, and the server says so at startup.",
  },
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: {
    type: 'integer',
    minimum: 100,
    maximum: 120000,
    default: defaultDatabaseTimeouts.serverSelectionTimeoutMs,
    description:
      "How long the driver looks for a database server (and waits to open a connection) before the request answers 503 `database.unavailable`. The driver's own default is 30 s. 100 to 120000.",
  },
  MONGODB_SOCKET_TIMEOUT_MS: {
    type: 'integer',
    minimum: 100,
    maximum: 600000,
    default: defaultDatabaseTimeouts.socketTimeoutMs,
    description:
      "How long an operation sent to the database may go without an answer before its connection is closed and the request answers 503 (a stalled or partitioned server). The driver's own default is to wait forever. Keep it above your slowest legitimate operation. 100 to 600000.",
  },
  DATA_DIR: {
    type: 'string',
    minLength: 1,
    maxLength: 4096,
    default: '.oidc-identity',
    description:
      "Without `MONGODB_URI`: the directory (relative to the working directory) where the embedded engine's data is kept across restarts; printed at start. Set it empty (`DATA_DIR=`), or start with `--in-memory`, to keep everything in memory only. One server per directory. Add it to your `.gitignore`. Ignored with `MONGODB_URI`.",
  },
  DATA_SNAPSHOT_MS: {
    type: 'integer',
    minimum: 200,
    maximum: 600000,
    default: 2000,
    description:
      'Without `MONGODB_URI`, with a `DATA_DIR`: how often, after a write, the data is written to the directory. A crash (SIGKILL, power loss) loses at most the writes of this interval plus the time one snapshot takes; a clean stop (SIGTERM, SIGINT) loses nothing.',
  },
  MONGODB_WRITE_CONCERN: {
    enum: ['majority', '1'],
    default: 'majority',
    description:
      'How many members of a replica set must have a write before it counts (`w`): `majority` (a change, its record and its webhook event survive a failover) or `1` (the primary only: faster, and a failover may roll back what was answered). The embedded engine ignores it.',
  },
  MONGODB_READ_CONCERN: {
    enum: ['majority', 'local'],
    default: 'majority',
    description:
      'What reads see on a replica set: `majority` (only what a failover cannot roll back: the delivery worker never sends an event that may vanish) or `local` (the primary’s latest). The embedded engine ignores it.',
  },
  ACCESS_TOKEN_ALG: {
    enum: accessTokenAlgs,
    default: 'ES256',
    description:
      "Signing algorithm of access tokens for API resources: `ES256`, `EdDSA` (both several times faster to sign than RSA) or `RS256` for clients that need it. It names the family of the first signing key set; a key rotation (`POST /api/configs/oidc/private-keys/rotate {signingKeyAlgorithm}`) may choose another. ID tokens follow the client's `id_token_signed_response_alg` (RS256 by default).",
  },
  BOOTSTRAP_CLIENT_ID: {
    type: 'string',
    pattern: '^[A-Za-z0-9._~-]{1,128}$',
    description:
      'Set both to have startup ensure a machine-to-machine application with exactly these credentials and the Management API role. The secret takes 16 to 256 characters.',
  },
  BOOTSTRAP_CLIENT_SECRET: {
    type: 'string',
    minLength: 16,
    maxLength: 256,
    description:
      'Set both to have startup ensure a machine-to-machine application with exactly these credentials and the Management API role. The secret takes 16 to 256 characters.',
  },
  CONSOLE_PATH: {
    type: 'string',
    pattern: '^((/[a-z0-9-]+)+|off)$',
    default: '/console',
    description: 'Where the admin console is served (docs/console.md); `off` turns it off. Not `/api`, `/interaction` or `/oidc`, which are taken.',
  },
  CONSOLE_ADMIN_USERNAME: {
    type: 'string',
    pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
    description:
      "Unset: none is made. The console's first administrator: on a start where no user holds the Console administrator role, a user of this name is made with a random password and the role, and printed once (unless a user of that name exists already).",
  },
  API_BODY_LIMIT: {
    type: 'integer',
    minimum: 1024,
    maximum: 16777216,
    default: defaultBodyLimit,
    description: 'Largest Management API request body, in bytes; larger ones get 413.',
  },
  CACHE_REFRESH_MS: {
    type: 'integer',
    minimum: 50,
    maximum: 600000,
    default: 1000,
    description:
      "Applications, API resources, roles with their permissions, and applications' roles are cached per process. A change clears the cache of the process that made it at once; other processes notice it within this interval.",
  },
  SHUTDOWN_GRACE_MS: {
    type: 'integer',
    minimum: 0,
    maximum: 600000,
    default: 10000,
    description:
      'On SIGTERM or SIGINT the server stops accepting connections and answers every request it has taken (with `Connection: close`), for up to this long; only then are the connections left closed (and logged as cut off), the webhook worker finishes or releases its deliveries, and the process exits 0. A client whose request was taken so gets its answer and knows whether its write committed. 0 to 600000.',
  },
  HTTP_KEEP_ALIVE_MS: {
    type: 'integer',
    minimum: 0,
    maximum: 3600000,
    default: 5000,
    description:
      "How long a client's idle connection is kept open for its next request (Node's `keepAliveTimeout`, announced as `Keep-Alive: timeout=`). Behind a load balancer or proxy that keeps its connections to the service open, set it above the proxy's idle timeout (an AWS ALB's 60 s: 65000); otherwise the proxy may send a request on a connection the service is closing, and its client gets a 502. 0 keeps an idle connection until the client closes it or the server stops. 0 to 3600000.",
  },
  TRUST_PROXY: {
    type: 'string',
    maxLength: 2048,
    default: 'false',
    description:
      "Which proxies in front of the server may say who the client is: `false` (none: the peer is the client), a number of proxies (`1`, `2`, ...; `true` is `1`), or the proxies' addresses and CIDR ranges (`10.0.0.0/8,2001:db8::1`). The client address is the one the nearest trusted proxy saw: `X-Forwarded-For` is read from the right, past the trusted proxies, never its client-written left end. Lockout, code limits, hash budgets, audit records and webhook `ip`/`userIp` use it. Anything but `false` also trusts `X-Forwarded-Proto` and `-Host`.",
  },
  SUBJECT_TOKEN_TTL: { type: 'integer', minimum: 10, maximum: 3600, default: 600, description: 'Lifetime of a subject token, in seconds (10 to 3600).' },
  PASSWORD_SCRYPT: {
    type: 'string',
    pattern: '^N=\\d{1,8},r=\\d{1,2},p=\\d{1,2}$',
    default: 'N=32768,r=8,p=3',
    description:
      "scrypt's cost for password hashes: `N` (a power of two, 1024 to 1048576), `r` and `p`; the default is one of OWASP's recommended settings (32 MiB per hash). Each hash keeps its parameters: after a change, existing hashes still verify, and each is made again at the new cost at its next password sign-in. Below OWASP's weakest recommendation (N·r·p under 2^13·8·10) the server warns at start: such a cost is for test suites only.",
  },
  LOG_LEVEL: { enum: logLevels, default: 'info', description: 'The least level written: `trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`.' },
  LOG_FORMAT: { enum: logFormats, default: 'json', description: '`json`: one JSON object a line; `pretty`: readable text (pino-pretty), for development.' },
  METRICS_TOKEN: {
    type: 'string',
    minLength: 16,
    maxLength: 256,
    pattern: '^[\\x21-\\x7e]+$',
    description:
      'With it (16 to 256 visible characters), Prometheus metrics at `GET /metrics` for a scraper that sends it as a bearer token (401 otherwise); without it there is no `/metrics` (404) and nothing is counted.',
  },
  IMPERSONATION_CHECKPOINT_SECONDS: {
    type: 'integer',
    minimum: 0,
    maximum: 86400,
    default: 300,
    description: 'The least time between two signed checkpoints of the impersonation audit (0 to 86,400; 0: every ledger run that chains something).',
  },
  IMPERSONATION_LEDGER_POLL_MS: {
    type: 'integer',
    minimum: 50,
    maximum: 600000,
    default: 1000,
    description: 'How often the ledger looks for audit records to chain (50 to 600,000).',
  },
  IMPERSONATION_LEDGER_SETTLE_MS: {
    type: 'integer',
    minimum: 0,
    maximum: 60000,
    default: 2000,
    description: 'How long an audit record waits before it is chained (0 to 60,000).',
  },
  MANAGEMENT_API_TOKEN_TTL: {
    type: 'integer',
    minimum: 30,
    maximum: 86400,
    default: 600,
    description: 'Lifetime of a Management API access token, in seconds (30 to 86400).',
  },
  CUSTOM_CLAIMS_ON_ERROR: {
    enum: ['omit', 'refuse'],
    default: 'omit',
    description:
      'When the custom-claims script throws, times out, or returns too much, and its customizer does not say (`blockIssuanceOnError`): `omit` issues the token without custom claims (and logs why); `refuse` answers `invalid_request` ("its custom JWT claims failed").',
  },
  CUSTOM_CLAIMS_TIMEOUT_MS: {
    type: 'integer',
    minimum: 50,
    maximum: 10000,
    default: 1000,
    description: 'Wall-clock limit of one custom-claims run, awaited work included.',
  },
  CHANGES_RETENTION_DAYS: {
    ...changeRetentionRule,
    default: defaultChangeRetentionDays,
    description: 'How long the change log (`GET /api/changes`) keeps a record, 1 to 3650 days; a TTL index removes older ones.',
  },
  SWEEP_INTERVAL_MS: {
    type: 'integer',
    minimum: 1000,
    maximum: 86400000,
    default: 60000,
    description:
      'How often one process deletes what the TTL indexes have expired (sessions, grants and tokens that ended, codes, counters, webhook history and changes past their retention), 500 documents a command and 20 commands a collection a run. On MongoDB its TTL monitor does the same within a minute; the embedded engine has none, and this is what keeps its history from costing forever.',
  },
  CHANGE_STREAMS: {
    type: 'boolean',
    default: true,
    description:
      'Whether workers wake on a change stream when another process writes what they wait for (new webhook events and deliveries, impersonation audit records, cache changes). Where the database has none (a standalone server, the embedded engine) this is said once at start and the workers poll, as they always also do. `false` opens no stream.',
  },
  MFA_ENCRYPTION_KEY: {
    type: 'string',
    pattern: '^[A-Za-z0-9_-]{43}$',
    description:
      "32 random bytes, base64url (43 characters; `node -e \"console.log(crypto.randomBytes(32).toString('base64url'))\"`): the key that seals MFA secrets (TOTP keys) at rest with AES-256-GCM. Unset: a key made on first start and kept in the `system` collection, beside the signing keys; set one from a secret store so that a copy of the database alone opens no secret. It also seals connectors' client secrets, and subject tokens are sealed under a key derived from it (HKDF, for that purpose only). Changing it makes the TOTP factors, client secrets and live subject tokens sealed under the old one unusable. Embedding: `createIdentity({ mfaEncryptionKey })` (a 32-byte `Buffer`).",
  },
  SSO_PUBLIC_EMAIL_DOMAINS: {
    type: 'string',
    maxLength: 65536,
    pattern: '^\\s*[^\\s,]+(\\s*,\\s*[^\\s,]+)*\\s*$',
    description:
      "Unset: the built-in list (`sso/domains.ts`: gmail.com, outlook.com, yahoo.com, ...). Comma-separated public email domains that no enterprise SSO connector may claim (422 `single_sign_on.forbidden_domains`); replaces the built-in list. Names are compared in IDNA's ASCII form, lower-cased.",
  },
  OUTBOUND_ALLOWED_HOSTS: {
    type: 'string',
    pattern: '^\\s*[A-Za-z0-9.:/_-]+(\\s*,\\s*[A-Za-z0-9.:/_-]+)*\\s*$',
    description:
      "Private, loopback or reserved hosts, addresses and CIDR ranges the provider may still call (back-channel logout, an application's `jwksUri`), comma-separated as `HOOKS_ALLOWED_HOSTS`. Public addresses always may; any other is refused before connecting, whatever a name resolves to.",
  },
} satisfies EnvironmentSpec;

export const coreEnvironmentDependencies = {
  BOOTSTRAP_CLIENT_ID: ['BOOTSTRAP_CLIENT_SECRET'],
  BOOTSTRAP_CLIENT_SECRET: ['BOOTSTRAP_CLIENT_ID'],
};
