import { defaultBranding, resolveBranding } from '../experience/settings.js';
import { resolveHookSettings } from '../hooks/settings.js';
import { createCatalogs } from '../i18n/index.js';
import { systemClock } from '../lib/clock.js';
import { changeRetentionRule, checkOptions, ConfigError } from '../lib/config.js';
import { defaultScryptCost, scryptCostProblem } from '../lib/password.js';
import { noProxy } from '../lib/http/client-address.js';
import { defaultBodyLimit } from '../lib/http/json-body.js';
import { defaultChangeRetentionDays } from '../lib/store/changes.js';
import { managementPrefix } from '../management/router.js';
import type { IdentityOptions } from '../identity-options.js';

/** Paths of our own and the provider's a console may not take. */
const takenPaths = ['/api', '/interaction', '/interaction-assets', '/oidc'];

/** The console's path, checked: `/console` unless given, one or more lower-case segments, none of ours. */
function consolePathOf(path = '/console'): string {
  const taken = takenPaths.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  if (!/^(\/[a-z0-9-]+)+$/.test(path) || taken)
    throw new ConfigError(`Invalid option: console.path must be a path like /console, not one of ${takenPaths.join(', ')}`);
  return path;
}

/**
 * The options with every default applied, once: the parts read these, never `IdentityOptions`
 * with a fallback of their own. Checked before anything is written, with the rules the
 * environment's settings follow.
 */
export function resolveOptions(options: IdentityOptions) {
  const { experience } = options;
  const changesRetentionDays = options.changesRetentionDays ?? defaultChangeRetentionDays;
  checkOptions(changeRetentionRule, changesRetentionDays, 'changesRetentionDays');
  const branding = experience && resolveBranding(experience.branding);
  const passwordHashing = options.passwordHashing ?? defaultScryptCost;
  const costProblem = scryptCostProblem(passwordHashing);
  if (costProblem) throw new ConfigError(`Invalid option: passwordHashing: ${costProblem}`);
  return {
    ...options,
    hookSettings: resolveHookSettings(options.hooks),
    branding,
    productName: (branding ?? defaultBranding).productName,
    // The pages' and messages' languages: the built-in catalogs with the host's over them.
    catalogs: experience && createCatalogs(experience.catalogs),
    changesRetentionDays,
    passwordHashing,
    sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
    // The console signs administrators in through the sign-in pages: without them, none.
    consolePath: experience && options.console !== false ? consolePathOf(options.console?.path) : undefined,
    changeStreams: options.changeStreams ?? true,
    accessTokenAlg: options.accessTokenAlg ?? 'ES256',
    managementApiIndicator: `${options.baseUrl.replace(/\/+$/, '')}${managementPrefix}`,
    origin: new URL(options.baseUrl).origin,
    bodyLimit: options.apiBodyLimit ?? defaultBodyLimit,
    cacheRefreshMs: options.cacheRefreshMs ?? 1000,
    customClaimsTimeoutMs: options.customClaimsTimeoutMs ?? 1000,
    customClaimsOnError: options.customClaimsOnError ?? 'omit',
    managementApiTokenTtl: options.managementApiTokenTtl ?? 600,
    subjectTokenTtl: options.subjectTokenTtl ?? 600,
    outboundAllowedHosts: options.outboundAllowedHosts ?? [],
    trustProxy: options.trustProxy ?? noProxy,
    clock: options.clock ?? systemClock,
    signInEventsFromProvider: options.signInEventsFromProvider ?? true,
  } as const;
}

export type ResolvedOptions = ReturnType<typeof resolveOptions>;
