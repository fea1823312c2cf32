import type { CollectionIndexes } from './lib/store/database.js';
import type { ClientSession } from 'mongodb';
import type { Configuration } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { createApis } from './composition/apis.js';
import { startBackground, type BackgroundService } from './composition/background.js';
import { configureWith, type Configured } from './composition/configure.js';
import { registerOrganizationTokens, registerTokenExchange } from './composition/exchange.js';
import { installProvider } from './composition/install-provider.js';
import { resolveOptions } from './composition/options.js';
import { createParts } from './composition/parts.js';
import type { Hooks, InteractionReport } from './hooks/index.js';
import type { Queries } from './lib/store/queries/index.js';
import { ensureFirstAdministrator } from './console/built-in.js';
import { createPasswords } from './lib/password.js';
import { bootstrap, type BootstrapCredentials, type BootstrapResult } from './management/bootstrap.js';
import type { ManagementApi } from './management/router.js';
import type { MintedToken } from './provider/token-types.js';
import type { IdentityOptions } from './identity-options.js';

export type { IdentityOptions } from './identity-options.js';

export interface Identity {
  readonly queries: Queries;
  readonly managementApiIndicator: string;
  /** The host's provider configuration with ours composed in; the host's own functions keep working. */
  configure(host?: Configuration): Configuration;
  /** Installs into a provider built from `configure`'s result; returns the Management API to mount. */
  install(provider: Provider): ManagementApi;
  /** Ensures a machine-to-machine application can call the Management API (docs/operations.md, The first start). */
  /**
   * Makes sure someone can manage the service: the Management API's first application (or the
   * configured one), and with the console on and `consoleAdministrator` named, the console's
   * first administrator of that name when no user holds the console role.
   */
  bootstrap(credentials?: BootstrapCredentials, options?: { consoleAdministrator?: string }): Promise<BootstrapResult>;
  /**
   * Announces an interaction event (PostRegister, PostSignIn, PostResetPassword) to the hooks
   * subscribed to it: the one entry point for sign-up, sign-in and reset code, ours or a host's.
   * Pass the session of the unit of work that made the change (a sign-up's user) to commit both together.
   */
  reportInteractionEvent(report: InteractionReport, session?: ClientSession): Promise<void>;
  /** Webhooks: the outbox, the delivery worker and the hooks API's queries. */
  readonly hooks: Hooks;
  /** Every collection the service uses, with the indexes it ensures (for operators: sharding, backups). */
  readonly collections: CollectionIndexes;
  close(): Promise<void>;
}

/**
 * The embedding API. Opens nothing itself: the host hands in the database, and decides where the
 * provider and the Management API are mounted. Wiring only: the options resolved once
 * (`composition/options.ts`), the shared parts (`parts.ts`), the provider's configuration
 * (`configure.ts`) and installation (`install-provider.ts`), the token exchange (`exchange.ts`),
 * the background services (`background.ts`) and the APIs (`apis.ts`).
 */
export async function createIdentity(given: IdentityOptions): Promise<Identity> {
  const options = resolveOptions(given);
  const parts = await createParts(options);
  const { queries, hooks, caches } = parts;
  // What a grant tells `extraTokenClaims` about a token it mints, through the token itself.
  const minted = new WeakMap<object, MintedToken>();
  let configured: Configured | undefined;
  let background: BackgroundService | undefined;

  return {
    queries,
    managementApiIndicator: options.managementApiIndicator,
    hooks,
    collections: parts.collections,
    reportInteractionEvent: (report, session) => hooks.reportInteraction(report, session),

    configure(host: Configuration = {}) {
      configured = configureWith(host, options, parts, minted);
      return configured.configuration;
    },

    install(provider: Provider) {
      if (!configured) throw new TypeError('call configure() and build the provider from its result before install()');
      const installed = installProvider(provider, options, parts, configured);
      registerTokenExchange(provider, parts, configured, installed, minted);
      registerOrganizationTokens(provider, parts, configured);
      background = startBackground(provider, options, parts, installed);
      return createApis(provider, options, parts, configured, installed);
    },

    async bootstrap(credentials, { consoleAdministrator } = {}) {
      const result: BootstrapResult = await bootstrap(parts.db, queries, credentials);
      if (options.consolePath && consoleAdministrator) {
        const administrator = await ensureFirstAdministrator(parts.db, {
          username: consoleAdministrator,
          hashPassword: createPasswords(options.passwordHashing).hash,
        });
        if (administrator) result.administrator = administrator;
        // Its start may have offered a second factor: every process reads the sign-in settings again.
        if (administrator?.offeredTotp) await caches.registry.changed('signInExperience');
      }
      await Promise.all([caches.registry.changed('applications'), caches.registry.changed('applicationRoles')]);
      return result;
    },

    async close() {
      parts.watch.stop();
      parts.keyRing.stop();
      await background?.stop();
      caches.registry.stop();
      await Promise.all([parts.sandbox.close(), parts.dryRuns.close(), hooks.close()]);
    },
  };
}
