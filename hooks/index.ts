import { watchGauge, type Metrics } from '../lib/metrics.js';
import type { ClientSession, Db } from 'mongodb';

import type { HookSettings } from './settings.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { generateId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { UserDocument } from '../lib/store/models.js';
import { createOutboundPolicy, type OutboundPolicy } from '../lib/outbound-addresses.js';
import { createOutbox, type ExceptionReport, type InteractionReport, type Outbox, type OutboxOptions } from './outbox.js';
import { createHookQueries, type HookQueries } from './queries.js';
import { createSender, type Sender } from './send.js';
import { createDeliveryWorker } from './worker/index.js';
import { createSequencer, type Sequencer } from './sequencer.js';
import { createOptInEvents, loadOptInSubscriptions, type OptInEvents } from './opt-in.js';
import type { CacheRegistry } from '../lib/store/cache.js';

export type { InteractionReport } from './outbox.js';
export { hookEvents, interactionEvents } from './catalog.js';

/** Everything webhooks need, built once over one database: the outbox, the worker, the hooks API's queries. */
export interface Hooks {
  outbox: Outbox;
  /** The opt-in events: recorded while some enabled hook names them, off the requests' path. */
  optIn: OptInEvents;
  queries: HookQueries;
  /** Sends one request under the outbound policy (test deliveries). */
  send: Sender;
  policy: OutboundPolicy;
  keyOverlapMs: number;
  retentionMs: number;
  /** The time the worker reads: what schedules deliveries and key overlaps reads it too. */
  clock: Clock;
  /** Numbers recorded events; the feed reads up to its watermark. */
  sequencer: Sequencer;
  /** Tells this process's worker that events were recorded or deliveries queued. */
  wake(): void;
  /** Starts the delivery worker (unless `deliver` is off). */
  start(): void;
  /** Readiness of this process's delivery worker: `off` when this process does not deliver (`HOOKS_DELIVERY=false`). */
  health(): { worker: 'ok' | 'off' | 'down'; reason?: string };
  reportInteraction(report: InteractionReport, session?: ClientSession, user?: UserDocument): Promise<void>;
  /** Announces an exception event (Identifier.Lockout, Message.RateLimited). */
  reportException(report: ExceptionReport): Promise<void>;
  close(): Promise<void>;
}

const second = 1000;
const hour = 60 * 60 * second;
const day = 24 * 60 * 60 * second;

export function createHooks(
  db: Db,
  queries: Queries,
  settings: HookSettings,
  logger: Logger,
  {
    clock = systemClock,
    metrics,
    findApplication,
    registry,
  }: { clock?: Clock; metrics?: Metrics; findApplication?: OutboxOptions['findApplication']; registry: CacheRegistry },
): Hooks {
  const retentionMs = settings.retentionDays * day;
  const policy = createOutboundPolicy(settings.allowedHosts);
  const send = createSender({ policy, timeoutMs: settings.timeoutMs });
  // This process's worker, which fans out the events this process records (when it delivers at all).
  const owner = generateId();
  const sequencer = createSequencer(db);
  // The outbox is made after the worker (it wakes it); the worker announces through it.
  let outbox: Outbox | undefined;
  const worker = createDeliveryWorker({
    db,
    sequencer,
    announce: async (event, hookId, data) => {
      await outbox
        ?.reportOperational(event, hookId, data)
        .catch((error: unknown) => logger.error(`${event} of webhook ${hookId} could not be recorded`, error));
    },
    send,
    logger,
    ...(metrics && { metrics }),
    retentionMs,
    owner,
    clock,
    retry: { schedule: settings.retrySchedule },
    timeoutMs: settings.timeoutMs,
    pollMs: settings.pollMs,
    concurrency: settings.concurrency,
    concurrencyPerHook: settings.concurrencyPerHook,
    disableAfterMs: settings.disableAfter * second,
  });
  outbox = createOutbox(db, queries, {
    retentionMs,
    optInRetentionMs: settings.optInRetentionHours * hour,
    onQueued: () => worker.wake(),
    ...(settings.deliver && { fanOutBy: owner }),
    ...(findApplication && { findApplication }),
  });
  // Which opt-in events some enabled hook names: cleared by every hook change (`provider/stale-caches.ts`), here and in other processes.
  const subscriptions = registry.create<ReadonlySet<string>>('hookSubscriptions', loadOptInSubscriptions(db));
  const optIn = createOptInEvents(outbox, subscriptions, logger);
  let started = false;
  const hookQueries = createHookQueries(db);
  if (metrics) {
    watchGauge(metrics, { name: 'oidc_identity_webhook_queue_depth', help: 'Webhook deliveries waiting: all pending, and those due now', label: 'state' }, () =>
      hookQueries.queueDepth(),
    );
  }

  return {
    outbox,
    optIn,
    sequencer,
    queries: hookQueries,
    send,
    policy,
    keyOverlapMs: settings.keyOverlap * second,
    retentionMs,
    clock,
    wake: () => worker.wake(),
    start() {
      if (!settings.deliver || started) return;
      started = true;
      worker.start();
    },
    health() {
      if (!settings.deliver) return { worker: 'off' };
      // A loop waits a poll between turns when idle; ten polls (at least 30 s) without one is a stall.
      const { ok, reason } = worker.health(Math.max(10 * settings.pollMs, 30_000));
      return ok ? { worker: 'ok' } : { worker: 'down', ...(reason && { reason }) };
    },
    reportInteraction: (report, session, user) => outbox.reportInteraction(report, session, user),
    reportException: (report) => outbox.reportException(report),
    async close() {
      optIn.stop();
      await optIn.settle();
      await worker.stop();
      send.close();
    },
  };
}
