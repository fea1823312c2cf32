import type { DeliveryDocument, HookDocument } from '../models.js';
import type { WorkerContext } from './context.js';

/** A parked delivery is due at no time until it is released. */
export const parkedUntil = new Date(8_640_000_000_000_000);

export const orders = (hook: Pick<HookDocument, 'config'> | undefined) => hook?.config.ordering === 'per-entity';
const keyOf = ({ hookId, entityKey }: Pick<DeliveryDocument, 'hookId' | 'entityKey'>) => `${hookId}\n${entityKey}`;

/**
 * Per-entity ordering, at fan-out: of the new deliveries to hooks that order per entity, each one
 * whose entity has an unfinished delivery to that hook (pending, in flight or waiting for a retry),
 * or an earlier one in this batch, is parked instead of due.
 */
export async function parkBehindEarlier(context: WorkerContext, made: DeliveryDocument[], ordered: Set<string>): Promise<void> {
  const candidates = made.filter(({ hookId, entityKey }) => entityKey && ordered.has(hookId));
  if (candidates.length === 0) return;
  const unfinished = await context.deliveries
    .find({
      state: 'pending',
      hookId: { $in: [...new Set(candidates.map(({ hookId }) => hookId))] },
      entityKey: { $in: [...new Set(candidates.map(({ entityKey }) => entityKey!))] },
    })
    .toArray();
  const busy = new Set(unfinished.map(keyOf));
  // In sequence order, so that the first of an entity goes and the later ones wait behind it.
  for (const delivery of [...candidates].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0))) {
    const key = keyOf(delivery);
    if (busy.has(key)) Object.assign(delivery, { parked: true, nextAttemptAt: parkedUntil });
    busy.add(key);
  }
}

/**
 * Releases, for each (hook, entity) with parked deliveries and none unfinished, the parked one with
 * the lowest sequence: it becomes due now. Run when an ordered hook's delivery finished, and once a
 * poll (another process's delivery may have finished, or this process died between the two).
 * Answers how many it released.
 */
export async function releaseParked(context: WorkerContext): Promise<number> {
  const { deliveries, clock } = context;
  const parked = await deliveries.find({ parked: true, state: 'pending' }).sort({ sequence: 1 }).limit(1000).toArray();
  if (parked.length === 0) return 0;
  const first = new Map<string, DeliveryDocument>();
  for (const delivery of parked) if (!first.has(keyOf(delivery))) first.set(keyOf(delivery), delivery);
  const unfinished = await deliveries
    .find({
      state: 'pending',
      parked: { $ne: true },
      hookId: { $in: [...new Set(parked.map(({ hookId }) => hookId))] },
      entityKey: { $in: [...new Set(parked.map(({ entityKey }) => entityKey!))] },
    })
    .toArray();
  const busy = new Set(unfinished.map(keyOf));
  const ready = [...first.values()].filter((delivery) => !busy.has(keyOf(delivery))).map(({ _id }) => _id);
  if (ready.length === 0) return 0;
  const { modifiedCount } = await deliveries.updateMany({ _id: { $in: ready }, parked: true }, { $set: { parked: false, nextAttemptAt: clock.now() } });
  return modifiedCount;
}
