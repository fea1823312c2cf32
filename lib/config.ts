import { Ajv, type ErrorObject } from 'ajv';

import { logFormats, logLevels } from './logger.js';
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
  const validate = ajv.compile({ type: 'object', properties: spec, dependencies });
  if (!validate(picked)) throw new ConfigError(`Invalid setting: ${describe(validate.errors![0], '')}`);
  return picked;
}

/** Checks an embedding host's options against `schema`, without converting them; a bad one is a ConfigError naming it under `prefix`. */
export function checkOptions(schema: Record<string, unknown>, options: unknown, prefix: string): void {
  const validate = strict.compile(schema);
  if (!validate(options)) throw new ConfigError(`Invalid option: ${describe(validate.errors![0], prefix)}`);
}

/** How long the change log may keep a record, in days: for the environment and an embedding host alike. */
export const changeRetentionRule = { type: 'integer', minimum: 1, maximum: 3650 } as const;

/** The core variables: the server, its database, tokens and proxies. */
export const coreEnvironment = {
  PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3001 },
  BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+(/[^?#]*)?$' },
  MONGODB_URI: { type: 'string', pattern: '^mongodb(\\+srv)?://' },
  // How long to look for a database server before answering 503 (also the bound on opening a connection).
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 120000, default: defaultDatabaseTimeouts.serverSelectionTimeoutMs },
  // How long an operation sent to the database may go without an answer before it fails with 503.
  MONGODB_SOCKET_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 600000, default: defaultDatabaseTimeouts.socketTimeoutMs },
  ACCESS_TOKEN_ALG: { enum: accessTokenAlgs, default: 'ES256' },
  BOOTSTRAP_CLIENT_ID: { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' },
  BOOTSTRAP_CLIENT_SECRET: { type: 'string', minLength: 16, maxLength: 256 },
  API_BODY_LIMIT: { type: 'integer', minimum: 1024, maximum: 16777216, default: defaultBodyLimit },
  CACHE_REFRESH_MS: { type: 'integer', minimum: 50, maximum: 600000, default: 1000 },
  // How long a stopping server lets the requests it holds finish before it closes their connections.
  SHUTDOWN_GRACE_MS: { type: 'integer', minimum: 0, maximum: 600000, default: 10000 },
  // false, true (one proxy), a number of proxies, or the proxies' addresses and CIDR ranges.
  TRUST_PROXY: { type: 'string', maxLength: 2048, default: 'false' },
  SUBJECT_TOKEN_TTL: { type: 'integer', minimum: 10, maximum: 3600, default: 600 },
  // Structured logs: the least level written, and JSON (one object a line) or pretty text for people.
  LOG_LEVEL: { enum: logLevels, default: 'info' },
  LOG_FORMAT: { enum: logFormats, default: 'json' },
  // Prometheus metrics at /metrics, for a scraper holding this bearer token; off when unset.
  METRICS_TOKEN: { type: 'string', minLength: 16, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' },
  // The impersonation audit's ledger: the least time between two signed checkpoints, how often it looks for records, how long a record settles first.
  IMPERSONATION_CHECKPOINT_SECONDS: { type: 'integer', minimum: 0, maximum: 86400, default: 300 },
  IMPERSONATION_LEDGER_POLL_MS: { type: 'integer', minimum: 50, maximum: 600000, default: 1000 },
  IMPERSONATION_LEDGER_SETTLE_MS: { type: 'integer', minimum: 0, maximum: 60000, default: 2000 },
  MANAGEMENT_API_TOKEN_TTL: { type: 'integer', minimum: 30, maximum: 86400, default: 600 },
  CUSTOM_CLAIMS_ON_ERROR: { enum: ['omit', 'refuse'], default: 'omit' },
  CUSTOM_CLAIMS_TIMEOUT_MS: { type: 'integer', minimum: 50, maximum: 10000, default: 1000 },
  CHANGES_RETENTION_DAYS: { ...changeRetentionRule, default: defaultChangeRetentionDays },
  // 32 random bytes, base64url (43 characters): seals MFA secrets at rest.
  MFA_ENCRYPTION_KEY: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
  // Public email domains no enterprise SSO connector may claim, comma-separated (replaces the built-in list).
  SSO_PUBLIC_EMAIL_DOMAINS: { type: 'string', maxLength: 65536, pattern: '^\\s*[^\\s,]+(\\s*,\\s*[^\\s,]+)*\\s*$' },
  // Host names, IP addresses or CIDR ranges, comma-separated.
  OUTBOUND_ALLOWED_HOSTS: { type: 'string', pattern: '^\\s*[A-Za-z0-9.:/_-]+(\\s*,\\s*[A-Za-z0-9.:/_-]+)*\\s*$' },
} satisfies EnvironmentSpec;

export const coreEnvironmentDependencies = {
  BOOTSTRAP_CLIENT_ID: ['BOOTSTRAP_CLIENT_SECRET'],
  BOOTSTRAP_CLIENT_SECRET: ['BOOTSTRAP_CLIENT_ID'],
};
