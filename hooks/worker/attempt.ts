import type { AnyBulkWriteOperation } from 'mongodb';

import { generateId } from '../../lib/ids.js';
import { createBatch } from '../../lib/store/batch.js';
import { webhookRequest } from '../message.js';
import { hookWants } from '../filters.js';
import { shownUrl, type AttemptDocument, type DeliveryDocument, type DeliveryState, type HookDocument, type HookEventDocument } from '../models.js';
import { nextRetryDelay } from '../schedule.js';
import type { SendResult } from '../send.js';
import { fromNow, type Leased, type WorkerContext } from './context.js';

/** A delivery whose event this worker cannot read yet is looked at again for this long before it is skipped. */
const unseenEventGraceMs = 60_000;

/** What became of one delivery: its new state, and the attempt made, if one was. */
export interface Outcome {
  delivery: Leased;
  state: DeliveryState;
  set: Partial<DeliveryDocument>;
  attempt?: AttemptDocument;
}

/** Clears a hook's failing streak on a success; disables it on 410 Gone or once it has failed for `disableAfterMs`. */
async function keepHealth({ hooks, disableAfterMs, logger, announce }: WorkerContext, hook: HookDocument, result: SendResult, now: Date) {
  if (result.ok) {
    if (hook.failingSince) await hooks.updateOne({ _id: hook._id }, { $set: { failingSince: null, warnedAt: null } });
    return;
  }
  const about = { id: hook._id, name: hook.name, url: shownUrl(hook.config.url) };
  const gone = result.statusCode === 410;
  const failingFor = hook.failingSince ? now.getTime() - hook.failingSince.getTime() : 0;
  if (gone || failingFor > disableAfterMs) {
    const reason = gone
      ? `the endpoint answered 410 Gone on ${now.toISOString()}`
      : `every attempt failed from ${hook.failingSince!.toISOString()} to ${now.toISOString()}`;
    const { modifiedCount } = await hooks.updateOne({ _id: hook._id, enabled: true }, { $set: { enabled: false, disabledReason: reason, disabledAt: now } });
    if (modifiedCount === 1) {
      logger.warn(`Webhook ${hook._id} (${hook.name}) disabled: ${reason}`);
      await announce('Hook.Disabled', hook._id, { ...about, disabledReason: reason });
    }
  } else if (hook.failingSince && failingFor > disableAfterMs / 2 && !hook.warnedAt) {
    // Half way to being disabled: announced once per run of failures, so that someone can act first.
    const { modifiedCount } = await hooks.updateOne({ _id: hook._id, failingSince: hook.failingSince, warnedAt: { $in: [null] } }, { $set: { warnedAt: now } });
    const disablesAt = new Date(hook.failingSince.getTime() + disableAfterMs).toISOString();
    if (modifiedCount === 1) await announce('Hook.Disabling', hook._id, { ...about, failingSince: hook.failingSince.toISOString(), disablesAt });
  } else if (!hook.failingSince) {
    await hooks.updateOne({ _id: hook._id, failingSince: null }, { $set: { failingSince: now } });
  }
}

/** Why a delivery is not sent, if it is not: the hook as it is now decides, on a retry or a redelivery alike. */
function skipReason(delivery: DeliveryDocument, hook: HookDocument | undefined, event: HookEventDocument | undefined): string | undefined {
  if (!hook) return 'the hook was deleted';
  if (!hook.enabled) return 'the hook is disabled';
  if (!hook.events.includes(delivery.event)) return 'the hook no longer subscribes to this event';
  if (!event) return 'the event has expired';
  if (!hookWants(hook, event)) return 'the hook’s source or application filters exclude this event';
  return undefined;
}

/** Sends one delivery (unless it is to be skipped or looked at again) and answers what became of it; records nothing of it. */
export async function attempt(
  context: WorkerContext,
  delivery: Leased,
  hook: HookDocument | undefined,
  event: HookEventDocument | undefined,
): Promise<Outcome> {
  const { clock, send, retry, owner, retentionMs, pollMs } = context;
  if (!event && clock.now().getTime() - delivery.createdAt.getTime() < unseenEventGraceMs) {
    // The event is written before its delivery (in the same transaction, or just before it), so it
    // exists; a read outside the transaction can still miss it while a commit spreads across
    // shards. Look again shortly instead of skipping a delivery that is due.
    return { delivery, state: 'pending', set: { nextAttemptAt: fromNow(context, pollMs) } };
  }
  const skip = skipReason(delivery, hook, event);
  if (skip || !hook || !event) {
    context.metrics?.deliveries.inc({ outcome: 'skipped' });
    return { delivery, state: 'skipped', set: { lastError: skip ?? null } };
  }

  if (hook.config.maxPerSecond) {
    // Over the hook's rate: held back to a later second, not sent, not counted as an attempt.
    const later = await context.rate.take(hook._id, hook.config.maxPerSecond, clock.now());
    if (later) {
      context.metrics?.deliveries.inc({ outcome: 'held_back' });
      return { delivery, state: 'pending', set: { nextAttemptAt: later } };
    }
  }
  const startedAt = clock.now();
  const result = await send(webhookRequest(hook, event._id, event.payload, startedAt));
  const now = clock.now();
  const record: AttemptDocument = {
    _id: generateId(),
    deliveryId: delivery._id,
    hookId: hook._id,
    eventId: event._id,
    event: delivery.event,
    startedAt,
    durationMs: result.durationMs,
    ok: result.ok,
    statusCode: result.statusCode,
    response: result.response,
    error: result.error,
    worker: owner,
    expiresAt: new Date(now.getTime() + retentionMs),
  };
  await keepHealth(context, hook, result, now);
  const made = delivery.attempts + 1;
  // Each attempt, under the id of the request whose write announced the event.
  const logged = {
    hookId: hook._id,
    deliveryId: delivery._id,
    eventId: event._id,
    event: event.event,
    attempt: made,
    status: result.statusCode,
    durationMs: result.durationMs,
    ...(event.requestId && { requestId: event.requestId }),
  };
  const outcome = { attempts: made, lastAttemptAt: startedAt, lastStatus: result.statusCode, lastError: result.error };
  if (result.ok) {
    context.logger.debug?.('webhook delivered', logged);
    context.metrics?.deliveries.inc({ outcome: 'succeeded' });
    context.metrics?.deliveryLatency.observe((now.getTime() - event.createdAt.getTime()) / 1000);
    return { delivery, state: 'succeeded', set: outcome, attempt: record };
  }
  const delay = result.statusCode === 410 ? undefined : nextRetryDelay(retry, made, result.retryAfterMs);
  context.metrics?.deliveries.inc({ outcome: delay === undefined ? 'given_up' : 'failed' });
  if (delay === undefined) context.logger.warn('webhook delivery given up', { ...logged, error: result.error });
  else context.logger.debug?.('webhook attempt failed', { ...logged, error: result.error });
  // Given up: announced to the other hooks (not for an exhausted notice itself, so that two failing hooks do not feed each other).
  if (delay === undefined && event.event !== 'Hook.DeliveryExhausted') {
    await context.announce('Hook.DeliveryExhausted', hook._id, {
      hook: { id: hook._id, name: hook.name, url: shownUrl(hook.config.url) },
      delivery: { id: delivery._id, eventId: event._id, event: event.event, attempts: made, lastStatus: result.statusCode, lastError: result.error },
    });
  }
  return delay === undefined
    ? { delivery, state: 'failed', set: outcome, attempt: record }
    : { delivery, state: 'pending', set: { ...outcome, nextAttemptAt: new Date(now.getTime() + delay) }, attempt: record };
}

/**
 * Records outcomes as they come, each delivery's as soon as it settles, but group-committed:
 * outcomes that arrive while a recording is on its way go together in the next, as one insert
 * of their attempts and one bulk update of their deliveries (each conditional on the lease still
 * being this worker's). Under load many deliveries share two writes; alone, one pays two.
 */
export function createRecorder(context: WorkerContext): (outcome: Outcome) => Promise<void> {
  const { attempts, deliveries, clock } = context;
  return createBatch<Outcome, void>(async (outcomes) => {
    const made = outcomes.flatMap(({ attempt: record }) => (record ? [record] : []));
    // The attempts first: a delivery shown settled always has its attempt to show.
    if (made.length > 0) await attempts.insertMany(made, { ordered: false });
    const updatedAt = clock.now();
    const updates: AnyBulkWriteOperation<DeliveryDocument>[] = outcomes.map(({ delivery, state, set }) => ({
      updateOne: { filter: { _id: delivery._id, leaseOwner: delivery.leaseOwner }, update: { $set: { ...set, state, leaseOwner: null, updatedAt } } },
    }));
    await deliveries.bulkWrite(updates, { ordered: false });
    return outcomes.map(() => undefined);
  });
}
