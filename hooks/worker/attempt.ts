import { generateId } from '../../lib/ids.js';
import { webhookRequest } from '../message.js';
import type { AttemptDocument, DeliveryDocument, HookDocument, HookEventDocument } from '../models.js';
import { nextRetryDelay } from '../schedule.js';
import type { SendResult } from '../send.js';
import { fromNow, type Taken, type WorkerContext } from './context.js';
import { settle } from './lease.js';

/** A delivery whose event this worker cannot read yet is looked at again for this long before it is skipped. */
const unseenEventGraceMs = 60_000;

/** Clears a hook's failing streak on a success; disables it on 410 Gone or once it has failed for `disableAfterMs`. */
async function keepHealth({ hooks, disableAfterMs, logger }: WorkerContext, hook: HookDocument, result: SendResult, now: Date) {
  if (result.ok) {
    if (hook.failingSince) await hooks.updateOne({ _id: hook._id }, { $set: { failingSince: null } });
    return;
  }
  const gone = result.statusCode === 410;
  const failingFor = hook.failingSince ? now.getTime() - hook.failingSince.getTime() : 0;
  if (gone || failingFor > disableAfterMs) {
    const reason = gone
      ? `the endpoint answered 410 Gone on ${now.toISOString()}`
      : `every attempt failed from ${hook.failingSince!.toISOString()} to ${now.toISOString()}`;
    const { modifiedCount } = await hooks.updateOne({ _id: hook._id, enabled: true }, { $set: { enabled: false, disabledReason: reason } });
    if (modifiedCount === 1) logger.warn(`Webhook ${hook._id} (${hook.name}) disabled: ${reason}`);
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
  return undefined;
}

/** Sends one delivery; answers its attempt record, having settled it unless it succeeded. */
async function attempt(
  context: WorkerContext,
  delivery: DeliveryDocument,
  hook: HookDocument | undefined,
  event: HookEventDocument | undefined,
): Promise<AttemptDocument | undefined> {
  const { clock, send, retry, owner, retentionMs, pollMs } = context;
  if (!event && clock.now().getTime() - delivery.createdAt.getTime() < unseenEventGraceMs) {
    // The event is written before its delivery (in the same transaction, or just before it), so it
    // exists; a read outside the transaction can still miss it while a commit spreads across
    // shards. Look again shortly instead of skipping a delivery that is due.
    await settle(context, delivery, 'pending', { nextAttemptAt: fromNow(context, pollMs) });
    return undefined;
  }
  const skip = skipReason(delivery, hook, event);
  if (skip || !hook || !event) {
    await settle(context, delivery, 'skipped', { lastError: skip ?? null });
    return undefined;
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
  if (!result.ok) {
    const made = delivery.attempts + 1;
    const outcome = { attempts: made, lastAttemptAt: startedAt, lastStatus: result.statusCode, lastError: result.error };
    const delay = result.statusCode === 410 ? undefined : nextRetryDelay(retry, made, result.retryAfterMs);
    if (delay === undefined) await settle(context, delivery, 'failed', outcome);
    else await settle(context, delivery, 'pending', { ...outcome, nextAttemptAt: new Date(now.getTime() + delay) });
  }
  await keepHealth(context, hook, result, now);
  return record;
}

/**
 * Sends a batch at once and records it: the attempts in one insert, and the deliveries that
 * succeeded with one update per status code (failures were settled one by one, each with its
 * own next attempt), so that the usual case costs two writes per batch, not two per delivery.
 */
export async function deliverBatch(context: WorkerContext, { batch, hooks: knownHooks, events: knownEvents }: Taken) {
  const { hooks, events, attempts, deliveries, clock, logger } = context;
  const [hookList, eventList] = await Promise.all([
    knownHooks ?? hooks.find({ _id: { $in: [...new Set(batch.map(({ hookId }) => hookId))] } }).toArray(),
    knownEvents ?? events.find({ _id: { $in: batch.map(({ eventId }) => eventId) } }).toArray(),
  ]);
  const hookById = new Map(hookList.map((hook) => [hook._id, hook]));
  const eventById = new Map(eventList.map((event) => [event._id, event]));
  const records = await Promise.all(
    batch.map((delivery) =>
      attempt(context, delivery, hookById.get(delivery.hookId), eventById.get(delivery.eventId)).catch((error: unknown) => {
        // Its lease runs out and a worker tries again.
        logger.error(`Webhook delivery ${delivery._id} could not be recorded`, error);
        return undefined;
      }),
    ),
  );
  const made = records.filter((record): record is AttemptDocument => record !== undefined);
  if (made.length > 0) await attempts.insertMany(made);
  const succeeded = new Map<number, string[]>();
  for (const { ok, statusCode, deliveryId } of made) {
    if (ok && statusCode !== null) succeeded.set(statusCode, [...(succeeded.get(statusCode) ?? []), deliveryId]);
  }
  const now = clock.now();
  const lease = batch[0].leaseOwner;
  await Promise.all(
    [...succeeded].map(([lastStatus, ids]) =>
      deliveries.updateMany(
        { _id: { $in: ids }, leaseOwner: lease },
        { $set: { state: 'succeeded', lastStatus, lastError: null, lastAttemptAt: now, leaseOwner: null, updatedAt: now }, $inc: { attempts: 1 } },
      ),
    ),
  );
}
