/**
 * The standalone server's settings, read from the environment: the core variables and each
 * feature's own (`hooks/settings.ts`, `experience/settings.ts`), joined here. Every one is
 * documented in docs/configuration.md, which is generated from their schemas (`npm run docs`).
 */
import { resolve } from 'node:path';

import { allowListProblem } from './lib/outbound-addresses.js';
import type { DatabaseTimeouts } from './lib/store/availability.js';
import { ConfigError, coreEnvironment, coreEnvironmentDependencies, readEnvironment, type AccessTokenAlg } from './lib/config.js';
import { proxyListProblem, type ProxyTrust } from './lib/http/client-address.js';
import { experienceEnvironment, experienceEnvironmentDependencies, experienceSettingsFrom, type ExperienceSettings } from './experience/settings.js';
import type { logFormats, logLevels } from './lib/logger.js';
import { hookEnvironment, hookSettingsFrom, type HookSettings } from './hooks/settings.js';
import { domainKey } from './sso/domains.js';
import { scryptCostProblem, type ScryptCost } from './lib/password.js';

export { ConfigError };

export interface Settings {
  port: number;
  /** Public URL of the server; by default `http://localhost:<the port it listens on>`. */
  baseUrl: string | undefined;
  mongodbUri: string | undefined;
  /** Without `mongodbUri`: where the embedded engine's data is kept (absolute), or in memory only. */
  dataDir: string | undefined;
  /** How often, after a write, the embedded engine's data is written to `dataDir`. */
  dataSnapshotMs: number;
  /** Bounds on waiting for the database (`MONGODB_*_TIMEOUT_MS`). */
  databaseTimeouts: DatabaseTimeouts;
  /** The driver's write and read concerns (`MONGODB_WRITE_CONCERN`, `MONGODB_READ_CONCERN`). */
  databaseConcerns: { w: 'majority' | 1; readConcernLevel: 'majority' | 'local' };
  accessTokenAlg: AccessTokenAlg;
  bootstrapClientId: string | undefined;
  bootstrapClientSecret: string | undefined;
  /** `CONSOLE_PATH`: where the admin console is served, or false (`off`). */
  consolePath: string | false;
  /** `CONSOLE_ADMIN_USERNAME`: the console's first administrator's name, made at a start where no one holds the role. */
  consoleAdministrator: string | undefined;
  apiBodyLimit: number;
  cacheRefreshMs: number;
  /** On SIGTERM, how long requests in flight may take to finish before their connections are closed. */
  shutdownGraceMs: number;
  /** `HTTP_KEEP_ALIVE_MS`: how long an idle client connection is kept for its next request (0: until the client closes it). */
  httpKeepAliveMs: number;
  /** Which proxies may say who the client is (`X-Forwarded-*`). */
  trustProxy: ProxyTrust;
  subjectTokenTtl: number;
  /** `PASSWORD_SCRYPT`: scrypt's cost for password hashes. */
  passwordHashing: ScryptCost;
  /** `LOG_LEVEL` and `LOG_FORMAT`: what the standalone server's structured logs hold, and how they are written. */
  log: { level: (typeof logLevels)[number]; format: (typeof logFormats)[number] };
  /** `METRICS_TOKEN`: with it, Prometheus metrics at `/metrics` for a scraper that holds it. */
  metricsToken: string | undefined;
  /** The impersonation audit's ledger (`IMPERSONATION_*`). */
  impersonationAudit: { checkpointMs: number; pollMs: number; settleMs: number };
  managementApiTokenTtl: number;
  customClaimsOnError: 'omit' | 'refuse';
  customClaimsTimeoutMs: number;
  /** Private or loopback hosts and ranges the provider may call (back-channel logout, jwksUri). */
  outboundAllowedHosts: string[];
  /** How long the change log keeps a record, in days. */
  changesRetentionDays: number;
  /** How often what TTL indexes expired is deleted (`SWEEP_INTERVAL_MS`). */
  sweepIntervalMs: number;
  /** Whether workers also wake on a change stream (`CHANGE_STREAMS`). */
  changeStreams: boolean;
  /** The public email domains no SSO connector may claim; unset: the built-in list. */
  ssoPublicEmailDomains: string[] | undefined;
  /** The key that seals MFA secrets; unset: one made once and kept in the database. */
  mfaEncryptionKey: Buffer | undefined;
  hooks: HookSettings;
  experience: ExperienceSettings;
}

/** `PASSWORD_SCRYPT`: `N=...,r=...,p=...` (the pattern already checked), within scrypt's bounds. */
function scryptCostOf(value: string): ScryptCost {
  const cost = Object.fromEntries(value.split(',').map((pair) => [pair.split('=')[0], Number(pair.split('=')[1])])) as unknown as ScryptCost;
  const problem = scryptCostProblem(cost);
  if (problem) throw new ConfigError(`Invalid setting: PASSWORD_SCRYPT: ${problem}`);
  return cost;
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

/** `SSO_PUBLIC_EMAIL_DOMAINS`: domain names, each one a domain (`Bücher.example` is taken in its IDNA form). */
function ssoDomainsOf(value: string): string[] {
  const names = value.split(',').map((entry) => entry.trim());
  const bad = names.find((name) => !domainKey(name));
  if (bad !== undefined) throw new ConfigError(`Invalid setting: SSO_PUBLIC_EMAIL_DOMAINS: \`${bad}\` is not a domain name`);
  return names.map((name) => domainKey(name)!);
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const e = readEnvironment({ ...coreEnvironment, ...hookEnvironment, ...experienceEnvironment }, env, {
    ...coreEnvironmentDependencies,
    ...experienceEnvironmentDependencies,
  }) as Record<keyof typeof coreEnvironment | keyof typeof hookEnvironment | keyof typeof experienceEnvironment, unknown>;
  const outboundAllowedHosts = typeof e.OUTBOUND_ALLOWED_HOSTS === 'string' ? e.OUTBOUND_ALLOWED_HOSTS.split(',').map((entry) => entry.trim()) : [];
  const badOutbound = allowListProblem(outboundAllowedHosts);
  if (badOutbound) throw new ConfigError(`Invalid setting: OUTBOUND_ALLOWED_HOSTS: ${badOutbound}`);
  const hooks = hookSettingsFrom(e);
  return {
    port: e.PORT as number,
    baseUrl: (e.BASE_URL as string | undefined)?.replace(/\/+$/, ''),
    mongodbUri: e.MONGODB_URI as string | undefined,
    // Set and empty (`DATA_DIR=`): in memory only; unset: the default directory.
    dataDir: env.DATA_DIR === '' ? undefined : resolve(e.DATA_DIR as string),
    dataSnapshotMs: e.DATA_SNAPSHOT_MS as number,
    databaseTimeouts: {
      serverSelectionTimeoutMs: e.MONGODB_SERVER_SELECTION_TIMEOUT_MS as number,
      socketTimeoutMs: e.MONGODB_SOCKET_TIMEOUT_MS as number,
    },
    databaseConcerns: {
      w: e.MONGODB_WRITE_CONCERN === '1' ? 1 : 'majority',
      readConcernLevel: e.MONGODB_READ_CONCERN as 'majority' | 'local',
    },
    accessTokenAlg: e.ACCESS_TOKEN_ALG as AccessTokenAlg,
    bootstrapClientId: e.BOOTSTRAP_CLIENT_ID as string | undefined,
    bootstrapClientSecret: e.BOOTSTRAP_CLIENT_SECRET as string | undefined,
    consolePath: e.CONSOLE_PATH === 'off' ? false : (e.CONSOLE_PATH as string),
    consoleAdministrator: e.CONSOLE_ADMIN_USERNAME as string | undefined,
    apiBodyLimit: e.API_BODY_LIMIT as number,
    cacheRefreshMs: e.CACHE_REFRESH_MS as number,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS as number,
    httpKeepAliveMs: e.HTTP_KEEP_ALIVE_MS as number,
    trustProxy: proxyTrustOf(e.TRUST_PROXY as string),
    subjectTokenTtl: e.SUBJECT_TOKEN_TTL as number,
    passwordHashing: scryptCostOf(e.PASSWORD_SCRYPT as string),
    metricsToken: e.METRICS_TOKEN as string | undefined,
    log: { level: e.LOG_LEVEL as (typeof logLevels)[number], format: e.LOG_FORMAT as (typeof logFormats)[number] },
    impersonationAudit: {
      checkpointMs: (e.IMPERSONATION_CHECKPOINT_SECONDS as number) * 1000,
      pollMs: e.IMPERSONATION_LEDGER_POLL_MS as number,
      settleMs: e.IMPERSONATION_LEDGER_SETTLE_MS as number,
    },
    managementApiTokenTtl: e.MANAGEMENT_API_TOKEN_TTL as number,
    customClaimsOnError: e.CUSTOM_CLAIMS_ON_ERROR as 'omit' | 'refuse',
    customClaimsTimeoutMs: e.CUSTOM_CLAIMS_TIMEOUT_MS as number,
    outboundAllowedHosts,
    changesRetentionDays: e.CHANGES_RETENTION_DAYS as number,
    sweepIntervalMs: e.SWEEP_INTERVAL_MS as number,
    changeStreams: e.CHANGE_STREAMS as boolean,
    ssoPublicEmailDomains: typeof e.SSO_PUBLIC_EMAIL_DOMAINS === 'string' ? ssoDomainsOf(e.SSO_PUBLIC_EMAIL_DOMAINS) : undefined,
    mfaEncryptionKey: typeof e.MFA_ENCRYPTION_KEY === 'string' ? Buffer.from(e.MFA_ENCRYPTION_KEY, 'base64url') : undefined,
    hooks,
    experience: experienceSettingsFrom(e),
  };
}
