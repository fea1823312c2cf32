import { Ajv, type ErrorObject } from 'ajv';

import { proxyListProblem, type ProxyTrust } from './http/client-address.js';
import { allowListProblem } from './outbound-addresses.js';

/** Signing algorithms we offer for access tokens. ES256 and EdDSA sign several times faster than RS256. */
export const accessTokenAlgs = ['ES256', 'EdDSA', 'RS256'] as const;
export type AccessTokenAlg = (typeof accessTokenAlgs)[number];

/** The standalone server's settings, read from the environment. Every one is documented in the README. */
export interface Settings {
  port: number;
  /** Public URL of the server; by default `http://localhost:<the port it listens on>`. */
  baseUrl: string | undefined;
  mongodbUri: string | undefined;
  accessTokenAlg: AccessTokenAlg;
  bootstrapClientId: string | undefined;
  bootstrapClientSecret: string | undefined;
  apiBodyLimit: number;
  cacheRefreshMs: number;
  /** Which proxies may say who the client is (`X-Forwarded-*`). */
  trustProxy: ProxyTrust;
  subjectTokenTtl: number;
  managementApiTokenTtl: number;
  customClaimsOnError: 'omit' | 'refuse';
  customClaimsTimeoutMs: number;
  /** Private or loopback hosts and ranges the provider may call (back-channel logout, jwksUri). */
  outboundAllowedHosts: string[];
  hooks: HookSettings;
  experience: ExperienceSettings;
}

/** The sign-in pages' look and the mail they send (`BRAND_*`, `SMTP_URL`, `EMAIL_FROM`). */
export interface ExperienceSettings {
  productName: string;
  logoUrl: string | undefined;
  primaryColor: string;
  /** Without it, codes are written to the log (the development connector). */
  smtpUrl: string | undefined;
  emailFrom: string | undefined;
}

/** Webhook delivery settings (`HOOKS_*`). */
export interface HookSettings {
  /** Hosts and address ranges that may be delivered to although private or loopback. */
  allowedHosts: string[];
  /** Whether this process runs a delivery worker. */
  deliver: boolean;
  timeoutMs: number;
  /** Seconds to wait before each attempt; its length is the number of attempts. */
  retrySchedule: number[];
  /** An endpoint failing without a success for this long is disabled, in seconds. */
  disableAfter: number;
  /** How long a rotated-out signing key keeps signing, in seconds. */
  keyOverlap: number;
  pollMs: number;
  concurrency: number;
  retentionDays: number;
}

interface Environment {
  PORT: number;
  BASE_URL?: string;
  MONGODB_URI?: string;
  ACCESS_TOKEN_ALG: AccessTokenAlg;
  BOOTSTRAP_CLIENT_ID?: string;
  BOOTSTRAP_CLIENT_SECRET?: string;
  API_BODY_LIMIT: number;
  CACHE_REFRESH_MS: number;
  TRUST_PROXY: string;
  SUBJECT_TOKEN_TTL: number;
  MANAGEMENT_API_TOKEN_TTL: number;
  CUSTOM_CLAIMS_ON_ERROR: 'omit' | 'refuse';
  CUSTOM_CLAIMS_TIMEOUT_MS: number;
  HOOKS_ALLOWED_HOSTS?: string;
  OUTBOUND_ALLOWED_HOSTS?: string;
  HOOKS_DELIVERY: boolean;
  HOOKS_TIMEOUT_MS: number;
  HOOKS_RETRY_SCHEDULE: string;
  HOOKS_DISABLE_AFTER: number;
  HOOKS_KEY_OVERLAP: number;
  HOOKS_POLL_MS: number;
  HOOKS_CONCURRENCY: number;
  HOOKS_RETENTION_DAYS: number;
  BRAND_NAME: string;
  BRAND_LOGO_URL?: string;
  BRAND_COLOR: string;
  SMTP_URL?: string;
  EMAIL_FROM?: string;
}

/** At once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts over about 28 hours. */
export const defaultRetrySchedule = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];

/** What an embedding host gets for the settings it does not give; the same as the standalone server's defaults. */
export const defaultHookSettings: HookSettings = {
  allowedHosts: [],
  deliver: true,
  timeoutMs: 10_000,
  retrySchedule: defaultRetrySchedule,
  disableAfter: 5 * 24 * 60 * 60,
  keyOverlap: 24 * 60 * 60,
  pollMs: 1000,
  concurrency: 16,
  retentionDays: 30,
};

const environmentSchema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3001 },
    BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+(/[^?#]*)?$' },
    MONGODB_URI: { type: 'string', pattern: '^mongodb(\\+srv)?://' },
    ACCESS_TOKEN_ALG: { enum: accessTokenAlgs, default: 'ES256' },
    BOOTSTRAP_CLIENT_ID: { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' },
    BOOTSTRAP_CLIENT_SECRET: { type: 'string', minLength: 16, maxLength: 256 },
    API_BODY_LIMIT: { type: 'integer', minimum: 1024, maximum: 16777216, default: 102400 },
    CACHE_REFRESH_MS: { type: 'integer', minimum: 50, maximum: 600000, default: 1000 },
    // false, true (one proxy), a number of proxies, or the proxies' addresses and CIDR ranges.
    TRUST_PROXY: { type: 'string', maxLength: 2048, default: 'false' },
    SUBJECT_TOKEN_TTL: { type: 'integer', minimum: 10, maximum: 3600, default: 600 },
    MANAGEMENT_API_TOKEN_TTL: { type: 'integer', minimum: 30, maximum: 86400, default: 600 },
    CUSTOM_CLAIMS_ON_ERROR: { enum: ['omit', 'refuse'], default: 'omit' },
    CUSTOM_CLAIMS_TIMEOUT_MS: { type: 'integer', minimum: 50, maximum: 10000, default: 1000 },
    // Host names, IP addresses or CIDR ranges, comma-separated.
    HOOKS_ALLOWED_HOSTS: { type: 'string', pattern: '^\\s*[A-Za-z0-9.:/_-]+(\\s*,\\s*[A-Za-z0-9.:/_-]+)*\\s*$' },
    OUTBOUND_ALLOWED_HOSTS: { type: 'string', pattern: '^\\s*[A-Za-z0-9.:/_-]+(\\s*,\\s*[A-Za-z0-9.:/_-]+)*\\s*$' },
    HOOKS_DELIVERY: { type: 'boolean', default: defaultHookSettings.deliver },
    HOOKS_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 60000, default: defaultHookSettings.timeoutMs },
    HOOKS_RETRY_SCHEDULE: { type: 'string', pattern: '^\\d{1,6}(,\\d{1,6}){0,19}$', default: defaultRetrySchedule.join(',') },
    HOOKS_DISABLE_AFTER: { type: 'integer', minimum: 1, maximum: 31536000, default: defaultHookSettings.disableAfter },
    HOOKS_KEY_OVERLAP: { type: 'integer', minimum: 0, maximum: 2592000, default: defaultHookSettings.keyOverlap },
    HOOKS_POLL_MS: { type: 'integer', minimum: 20, maximum: 60000, default: defaultHookSettings.pollMs },
    HOOKS_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 256, default: defaultHookSettings.concurrency },
    HOOKS_RETENTION_DAYS: { type: 'integer', minimum: 1, maximum: 3650, default: defaultHookSettings.retentionDays },
    BRAND_NAME: { type: 'string', minLength: 1, maxLength: 80, default: 'oidc-identity' },
    BRAND_LOGO_URL: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$' },
    BRAND_COLOR: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$', default: '#3451b2' },
    SMTP_URL: { type: 'string', pattern: '^smtps?://' },
    EMAIL_FROM: { type: 'string', minLength: 3, maxLength: 320, pattern: '@' },
  },
  dependencies: {
    BOOTSTRAP_CLIENT_ID: ['BOOTSTRAP_CLIENT_SECRET'],
    BOOTSTRAP_CLIENT_SECRET: ['BOOTSTRAP_CLIENT_ID'],
    SMTP_URL: ['EMAIL_FROM'],
  },
} as const;

const validateEnvironment = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false })
  .compile<Environment>(environmentSchema);

/** A bad setting. Its message is one line naming the setting, fit to print as the only output of a failed start. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'dependencies') {
    const { property, missingProperty } = error.params as { property: string; missingProperty: string };
    return `${missingProperty} must be set together with ${property}`;
  }
  const name = error.instancePath.slice(1);
  const allowed = error.keyword === 'enum' ? ` (one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')})` : '';
  return `${name} ${error.message ?? 'is invalid'}${allowed}`;
}

/** `TRUST_PROXY`: `false`, `true` (one proxy), how many proxies, or which addresses. */
function proxyTrustOf(value: string): ProxyTrust {
  const trimmed = value.trim();
  if (trimmed === 'false') return { hops: 0 };
  if (trimmed === 'true') return { hops: 1 };
  if (/^\d+$/.test(trimmed)) {
    if (Number(trimmed) > 10) throw new ConfigError('Invalid setting: TRUST_PROXY counts at most 10 proxies');
    return { hops: Number(trimmed) };
  }
  const proxies = trimmed.split(',').map((entry) => entry.trim());
  const problem = proxyListProblem(proxies);
  if (problem) throw new ConfigError(`Invalid setting: TRUST_PROXY: ${problem}`);
  return { proxies };
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  // Only our own keys, and empty strings count as unset, as in most shells' `FOO= npm start`.
  const picked: Record<string, string> = {};
  for (const key of Object.keys(environmentSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  if (!validateEnvironment(picked)) {
    throw new ConfigError(`Invalid setting: ${describe(validateEnvironment.errors![0]!)}`);
  }
  const e = picked as unknown as Environment;
  const allowedHosts = e.HOOKS_ALLOWED_HOSTS?.split(',').map((entry) => entry.trim()) ?? [];
  const badEntry = allowListProblem(allowedHosts);
  if (badEntry) throw new ConfigError(`Invalid setting: HOOKS_ALLOWED_HOSTS: ${badEntry}`);
  const outboundAllowedHosts = e.OUTBOUND_ALLOWED_HOSTS?.split(',').map((entry) => entry.trim()) ?? [];
  const badOutbound = allowListProblem(outboundAllowedHosts);
  if (badOutbound) throw new ConfigError(`Invalid setting: OUTBOUND_ALLOWED_HOSTS: ${badOutbound}`);
  const trustProxy = proxyTrustOf(e.TRUST_PROXY);
  return {
    port: e.PORT,
    baseUrl: e.BASE_URL?.replace(/\/+$/, ''),
    mongodbUri: e.MONGODB_URI,
    accessTokenAlg: e.ACCESS_TOKEN_ALG,
    bootstrapClientId: e.BOOTSTRAP_CLIENT_ID,
    bootstrapClientSecret: e.BOOTSTRAP_CLIENT_SECRET,
    apiBodyLimit: e.API_BODY_LIMIT,
    cacheRefreshMs: e.CACHE_REFRESH_MS,
    trustProxy,
    subjectTokenTtl: e.SUBJECT_TOKEN_TTL,
    managementApiTokenTtl: e.MANAGEMENT_API_TOKEN_TTL,
    customClaimsOnError: e.CUSTOM_CLAIMS_ON_ERROR,
    customClaimsTimeoutMs: e.CUSTOM_CLAIMS_TIMEOUT_MS,
    outboundAllowedHosts,
    hooks: {
      allowedHosts,
      deliver: e.HOOKS_DELIVERY,
      timeoutMs: e.HOOKS_TIMEOUT_MS,
      retrySchedule: e.HOOKS_RETRY_SCHEDULE.split(',').map(Number),
      disableAfter: e.HOOKS_DISABLE_AFTER,
      keyOverlap: e.HOOKS_KEY_OVERLAP,
      pollMs: e.HOOKS_POLL_MS,
      concurrency: e.HOOKS_CONCURRENCY,
      retentionDays: e.HOOKS_RETENTION_DAYS,
    },
    experience: {
      productName: e.BRAND_NAME,
      logoUrl: e.BRAND_LOGO_URL,
      primaryColor: e.BRAND_COLOR,
      smtpUrl: e.SMTP_URL,
      emailFrom: e.EMAIL_FROM,
    },
  };
}
