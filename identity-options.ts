import type { Metrics } from './lib/metrics.js';
import type { AccessTokenAlg } from './lib/config.js';
import type { Clock } from './lib/clock.js';
import type { ProxyTrust } from './lib/http/client-address.js';
import type { Logger } from './lib/logger.js';
import type { Database } from './lib/store/database.js';
import type { ExperienceOptions } from './experience/index.js';
import type { HookSettings } from './hooks/settings.js';
import type { CustomClaimsFailurePolicy, GetCustomJwtClaims } from './provider/custom-claims.js';
import type { HostAccounts } from './impersonation/accounts.js';
import type { ScryptCost } from './lib/password.js';

/** What `createIdentity` is given: the database and the public addresses, and the settings of each part. */
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
  /**
   * scrypt's cost for password hashes (default `{N: 32768, r: 8, p: 3}`, OWASP's). Hashes made at
   * another cost still verify, and are made again at this one at their next password sign-in. Below
   * OWASP's weakest recommendation a warning is logged: such a cost is for test suites only.
   */
  passwordHashing?: ScryptCost;
  /** Prometheus metrics (`createMetrics()`): counted when given; serve `metrics.registry` yourself (`metricsEndpoint`). */
  metrics?: Metrics;
  /**
   * The impersonation audit's ledger: `checkpointMs` (default 5 minutes) the least time between two
   * signed checkpoints, `pollMs` (1 s) how often it looks for new records, `settleMs` (2 s) how long
   * a record waits before it is chained.
   */
  impersonationAudit?: { checkpointMs?: number; pollMs?: number; settleMs?: number };
  /**
   * An embedding host's own accounts (those of its `findAccount`), for impersonation: `find(id)`
   * answers the host's account of that id (`{suspended?, protected?}`) or undefined. With it, the
   * host's accounts may be impersonated and may act (`actorId`, actor tokens, `act`), checked at
   * every issuance and exchange; without it, only our users can. Our users come first.
   */
  hostAccounts?: HostAccounts;
  /** Lifetime of a Management API access token, in seconds (default 600). */
  managementApiTokenTtl?: number;
  /**
   * Which proxies may say who the client is (`X-Forwarded-For`): none by default. Limits, audit
   * records and webhooks use the address the nearest trusted proxy saw.
   */
  trustProxy?: ProxyTrust;
  /** How often other processes' changes to cached data are looked for, in milliseconds. */
  cacheRefreshMs?: number;
  /** Webhook delivery; each setting defaults as its `HOOKS_*` counterpart does (docs/configuration.md). */
  hooks?: Partial<HookSettings>;
  /**
   * The time the webhook worker reads (due deliveries, leases, retry delays, disabling) and an
   * application secret's expiry is judged by: the system clock by default. A test may give one it
   * moves forward instead of waiting.
   */
  clock?: Clock;
  /**
   * Called once if the database this process started on is replaced (an engine that restarted
   * empty, another deployment's data): our routes answer 503 from then on, and the standalone
   * server exits 1 so that its supervisor restarts it. By default only logged.
   */
  onDatabaseLost?(reason: string): void;
  /**
   * Private, loopback or reserved hosts and ranges the provider may still call (back-channel
   * logout, an application's `jwksUri`); public addresses always may. As `OUTBOUND_ALLOWED_HOSTS`.
   */
  outboundAllowedHosts?: string[];
  /**
   * The public email domains no enterprise SSO connector may claim, replacing the built-in list
   * (`sso/domains.ts`). As `SSO_PUBLIC_EMAIL_DOMAINS`.
   */
  ssoPublicEmailDomains?: string[];
  /** How long the change log (`GET /api/changes`) keeps a record, in days (1 to 3650, default 90). As `CHANGES_RETENTION_DAYS`. */
  changesRetentionDays?: number;
  /** How often what the TTL indexes expired is deleted, in milliseconds (default 60000). As `SWEEP_INTERVAL_MS`. */
  sweepIntervalMs?: number;
  /**
   * Whether the workers also wake on a change stream of the database (default true): webhook
   * deliveries, the impersonation ledger and the caches learn of another process's writes at once
   * instead of at their next poll. Without change streams they poll, as they always also do. As `CHANGE_STREAMS`.
   */
  changeStreams?: boolean;
  /**
   * The 32-byte key that seals MFA secrets (TOTP keys) at rest. Unset: a key made on first start
   * and kept in the database's `system` collection; set one (from a secret store) so that a copy
   * of the database alone opens no secret.
   */
  mfaEncryptionKey?: Buffer;
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
  /**
   * The admin console (docs/console.md): where it is mounted, `/console` unless given; `false`
   * turns it off. It needs the sign-in experience, and is off without it.
   */
  console?: { path?: string } | false;
  logger: Logger;
}
