import type { DeliveryDocument, DeliveryState } from '../models.js';
import { fromNow, newLease, type Leased, type WorkerContext } from './context.js';

/**
 * Takes up to `limit` due deliveries under a fresh lease token: one update over the candidates
 * (each document's update re-checks that it is still due, so of two workers racing for one
 * delivery only one matches), then a read of those that carry the token.
 */
export async function claim(context: WorkerContext, limit: number): Promise<Leased[]> {
  const { deliveries, clock } = context;
  const now = clock.now();
  const due = await deliveries
    .find({ state: 'pending', nextAttemptAt: { $lte: now } })
    .sort({ nextAttemptAt: 1 })
    .limit(limit)
    .toArray();
  if (due.length === 0) return [];
  const lease = newLease(context);
  const ids = due.map(({ _id }) => _id);
  await deliveries.updateMany(
    { _id: { $in: ids }, state: 'pending', nextAttemptAt: { $lte: now } },
    { $set: { nextAttemptAt: fromNow(context, context.leaseMs), leaseOwner: lease } },
  );
  return (await deliveries.find({ _id: { $in: ids }, leaseOwner: lease }).toArray()) as Leased[];
}

/** Writes a delivery's outcome, if its lease is still this worker's. */
export async function settle({ deliveries, clock }: WorkerContext, delivery: DeliveryDocument, state: DeliveryState, set: Partial<DeliveryDocument>) {
  await deliveries.updateOne({ _id: delivery._id, leaseOwner: delivery.leaseOwner }, { $set: { ...set, state, leaseOwner: null, updatedAt: clock.now() } });
}
