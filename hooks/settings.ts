import { allowListProblem } from '../lib/outbound-addresses.js';
import { ConfigError, checkOptions, type EnvironmentSpec } from '../lib/config.js';

/** Webhook delivery settings (`HOOKS_*`, or `createIdentity({ hooks })`). */
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
  /** Attempts in flight at once in one process, all hooks together. */
  concurrency: number;
  /** Attempts in flight at once for one hook, so that a slow or hanging endpoint holds only these. */
  concurrencyPerHook: number;
  retentionDays: number;
  /** How long the opt-in events (`Token.Issued`, ...) and their deliveries are kept, in hours. */
  optInRetentionHours: number;
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
  concurrencyPerHook: 4,
  retentionDays: 30,
  optInRetentionHours: 24,
};

/** Each number's bounds, once: for the environment and for an embedding host's options alike. */
const bounds = {
  timeoutMs: { type: 'integer', minimum: 100, maximum: 60000 },
  disableAfter: { type: 'integer', minimum: 1, maximum: 31536000 },
  keyOverlap: { type: 'integer', minimum: 0, maximum: 2592000 },
  pollMs: { type: 'integer', minimum: 20, maximum: 60000 },
  concurrency: { type: 'integer', minimum: 1, maximum: 256 },
  concurrencyPerHook: { type: 'integer', minimum: 1, maximum: 256 },
  retentionDays: { type: 'integer', minimum: 1, maximum: 3650 },
  optInRetentionHours: { type: 'integer', minimum: 1, maximum: 87600 },
} as const;
const retryDelay = { type: 'integer', minimum: 0, maximum: 999999 } as const;

/** The `HOOKS_*` variables. */
export const hookEnvironment = {
  HOOKS_ALLOWED_HOSTS: {
    type: 'string',
    pattern: '^\\s*[A-Za-z0-9.:/_-]+(\\s*,\\s*[A-Za-z0-9.:/_-]+)*\\s*$',
    description:
      'Comma-separated host names, IP addresses or CIDR ranges that webhooks may be delivered to although they are loopback, private, link-local or otherwise reserved, e.g. `127.0.0.1,localhost` or `10.0.0.0/8,hooks.internal`. A listed name is allowed whatever it resolves to; a listed address or range allows those addresses for any name.',
  },
  HOOKS_DELIVERY: {
    type: 'boolean',
    default: defaultHookSettings.deliver,
    description: 'Whether this process runs a delivery worker. Any number of processes may; `false` makes a process that only records events.',
  },
  HOOKS_TIMEOUT_MS: {
    ...bounds.timeoutMs,
    default: defaultHookSettings.timeoutMs,
    description: 'Limit of one delivery attempt (connect, send, answer), 100 to 60000.',
  },
  HOOKS_RETRY_SCHEDULE: {
    type: 'string',
    pattern: '^\\d{1,6}(,\\d{1,6}){0,19}$',
    default: defaultRetrySchedule.join(','),
    description:
      'Seconds to wait before each attempt (at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each spread by ±20%; its length is the number of attempts (at most 20).',
  },
  HOOKS_DISABLE_AFTER: {
    ...bounds.disableAfter,
    default: defaultHookSettings.disableAfter,
    description: 'A hook whose attempts have all failed for this many seconds is disabled, with the reason in `disabledReason`.',
  },
  HOOKS_KEY_OVERLAP: {
    ...bounds.keyOverlap,
    default: defaultHookSettings.keyOverlap,
    description: 'After a signing-key rotation, how many seconds the old key keeps signing beside the new one.',
  },
  HOOKS_POLL_MS: {
    ...bounds.pollMs,
    default: defaultHookSettings.pollMs,
    description:
      "How often a worker looks for new events (to make their deliveries) and for due deliveries. A process's own writes wake its worker at once; this bounds the delay for other processes' writes and for retries.",
  },
  HOOKS_CONCURRENCY: {
    ...bounds.concurrency,
    default: defaultHookSettings.concurrency,
    description: 'Deliveries in flight at once per process, all hooks together.',
  },
  HOOKS_CONCURRENCY_PER_HOOK: {
    ...bounds.concurrencyPerHook,
    default: defaultHookSettings.concurrencyPerHook,
    description: 'Deliveries in flight at once per process for one hook, so that a slow or hanging endpoint holds at most this many of the slots (1 to 256).',
  },
  HOOKS_RETENTION_DAYS: {
    ...bounds.retentionDays,
    default: defaultHookSettings.retentionDays,
    description: 'How long events, deliveries and attempts are kept (TTL indexes), and so how far back a replay can reach.',
  },
  HOOKS_OPT_IN_RETENTION_HOURS: {
    ...bounds.optInRetentionHours,
    default: defaultHookSettings.optInRetentionHours,
    description:
      'How long the opt-in, high-volume events (`Token.Issued`, `Token.Failed`, `Token.Revoked`, `Authorization.Failed`, `SignIn.Failed`) and their deliveries are kept, in hours (1 to 87,600).',
  },
} satisfies EnvironmentSpec;

function checkAllowList(allowedHosts: string[], name: string) {
  const problem = allowListProblem(allowedHosts);
  if (problem) throw new ConfigError(`Invalid setting: ${name}: ${problem}`);
}

/** The settings the (validated, defaulted) environment gives. */
export function hookSettingsFrom(e: Record<keyof typeof hookEnvironment, unknown>): HookSettings {
  const allowedHosts = typeof e.HOOKS_ALLOWED_HOSTS === 'string' ? e.HOOKS_ALLOWED_HOSTS.split(',').map((entry) => entry.trim()) : [];
  checkAllowList(allowedHosts, 'HOOKS_ALLOWED_HOSTS');
  return {
    allowedHosts,
    deliver: e.HOOKS_DELIVERY as boolean,
    timeoutMs: e.HOOKS_TIMEOUT_MS as number,
    retrySchedule: String(e.HOOKS_RETRY_SCHEDULE).split(',').map(Number),
    disableAfter: e.HOOKS_DISABLE_AFTER as number,
    keyOverlap: e.HOOKS_KEY_OVERLAP as number,
    pollMs: e.HOOKS_POLL_MS as number,
    concurrency: e.HOOKS_CONCURRENCY as number,
    concurrencyPerHook: e.HOOKS_CONCURRENCY_PER_HOOK as number,
    retentionDays: e.HOOKS_RETENTION_DAYS as number,
    optInRetentionHours: e.HOOKS_OPT_IN_RETENTION_HOURS as number,
  };
}

const optionsSchema = {
  type: 'object',
  properties: {
    allowedHosts: { type: 'array', items: { type: 'string' }, maxItems: 256 },
    deliver: { type: 'boolean' },
    retrySchedule: { type: 'array', items: retryDelay, minItems: 1, maxItems: 20 },
    ...bounds,
  },
  additionalProperties: false,
} as const;

/** An embedding host's `hooks` options, checked with the environment's bounds, over the defaults. */
export function resolveHookSettings(options: Partial<HookSettings> = {}): HookSettings {
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<HookSettings>;
  checkOptions(optionsSchema, given, 'hooks');
  if (given.allowedHosts) checkAllowList(given.allowedHosts, 'hooks.allowedHosts');
  return { ...defaultHookSettings, ...given };
}
