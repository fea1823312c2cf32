import type Provider from 'oidc-provider';

import { lifecycleReports } from '../hooks/lifecycle-events.js';
import { tokenReports } from '../hooks/token-events.js';
import { signInReports } from '../hooks/provider-events.js';
import { userOfAccount } from '../provider/accounts.js';
import { createLedger } from '../impersonation/ledger.js';
import { intentStates } from '../management/intent-states.js';
import { startIntentResolver } from '../lib/store/intents.js';
import { startSweeper, sweepTargets } from '../lib/store/sweeper.js';
import { startChangeFeed } from '../lib/store/change-feed.js';
import { hookCollections } from '../hooks/models.js';
import { createRecordWriter } from '../lib/store/unit-of-work.js';
import type { Installed } from './install-provider.js';
import type { ResolvedOptions } from './options.js';
import type { Parts } from './parts.js';

/** A service that runs beside the requests, in every process. */
export interface BackgroundService {
  stop(): Promise<void>;
}

/**
 * What runs beside the requests: the finder of writes a stopped process left unrecorded (without
 * transactions), sign-in events from the provider, the webhook worker, and the impersonation
 * audit's ledger (its chain, events and signed checkpoints, one process at a time), and the sweeper
 * that deletes what the TTL indexes expired (one process at a time; on every engine, since the
 * embedded one never runs TTL indexes). Where the database has change streams, the webhook worker,
 * the ledger and the caches also wake on them (`lib/store/change-feed.ts`). The finder of
 * unfinished writes does not: it looks for intents old enough to be abandoned, a matter of time,
 * and runs only where there are no transactions (and so no change streams either).
 */
export function startBackground(provider: Provider, options: ResolvedOptions, parts: Parts, { signingKey }: Installed): BackgroundService {
  const { database, logger } = options;
  const { hooks } = parts;
  const resolver = database.transactions ? undefined : startResolver(options, parts);
  // The event names the user as the provider's account lookup read it in the same request.
  if (options.signInEventsFromProvider) {
    signInReports(provider, (report, ctx) => hooks.reportInteraction(report, undefined, userOfAccount(ctx.oidc.account)), logger);
  }
  // Sign-outs, grants made and revoked, replays caught, back-channel logouts that failed.
  lifecycleReports(provider, (items) => hooks.outbox.reportLifecycle(items), logger);
  // The opt-in token and authorization events, while some hook names them.
  tokenReports(provider, hooks.optIn);
  hooks.start();
  const ledger = createLedger(database.db, {
    issuer: provider.issuer,
    signingKey,
    announce: (items) => hooks.outbox.reportImpersonations(items),
    ...options.impersonationAudit,
    logger,
  });
  ledger.start();
  const feed =
    options.changeStreams &&
    startChangeFeed(
      database.db,
      {
        // Another process's events and deliveries: this one's worker looks now, not at its next poll.
        [hookCollections.events]: { on: ['insert'], wake: () => hooks.wake() },
        [hookCollections.deliveries]: { on: ['insert'], wake: () => hooks.wake() },
        impersonations: { on: ['insert'], wake: () => ledger.wake() },
        // Another process changed what a cache holds: its generation is read now.
        cache_generations: { on: ['insert', 'update'], wake: () => void parts.caches.registry.poll().catch(() => parts.caches.registry.clearAll()) },
      },
      { logger },
    );
  const sweeper = startSweeper(database.db, sweepTargets(parts.collections), { logger, clock: options.clock, everyMs: options.sweepIntervalMs });
  return {
    async stop() {
      if (feed) await feed.stop();
      await resolver?.stop();
      await ledger.stop();
      await sweeper.stop();
    },
  };
}

/** Writes a stopped process left without their records are found, recorded, and announced. */
function startResolver({ database, changesRetentionDays, logger, clock }: ResolvedOptions, parts: Parts) {
  const writeFoundRecords = createRecordWriter(database, parts.hooks.outbox, changesRetentionDays);
  return startIntentResolver(database.db, {
    state: intentStates(database.db, parts.queries),
    write: async (found, recorded) => {
      await writeFoundRecords(found, recorded);
      // What a stopped unit of work changed voids subject tokens as its own afterCommit would have.
      await parts.voidSubjectTokensAfter(found);
    },
    logger,
    clock,
  });
}
