import { fromNow, newLease, type Budget, type Leased, type Room, type WorkerContext } from './context.js';

/**
 * Takes as many due deliveries as the `budget` has free slots (holding them) under a fresh lease token, fairly across hooks: each hook
 * with due deliveries and room for more gets an equal share (the hooks taken in turn from
 * `start`, so that when there are more hooks than slots each gets its turn), and a hook at its
 * limit gets none, so that a slow or hanging endpoint's backlog never fills the slots the others
 * need. Then one update over the chosen (each document's update re-checks that it is still due,
 * so of two workers racing for one delivery only one matches), and a read of those that carry
 * the token.
 */
export async function claim(context: WorkerContext, budget: Budget, room: Room, start = 0): Promise<Leased[]> {
  const { deliveries, clock } = context;
  const now = clock.now();
  const due = { state: 'pending' as const, nextAttemptAt: { $lte: now } };
  const waiting = (await deliveries.distinct('hookId', due)).filter((hookId) => room(hookId) > 0);
  if (waiting.length === 0 || budget.available() <= 0) return [];
  const turn = start % waiting.length;
  const hooks = [...waiting.slice(turn), ...waiting.slice(0, turn)];
  const share = Math.max(1, Math.ceil(budget.available() / hooks.length));
  const found = await Promise.all(
    hooks.map((hookId) =>
      deliveries
        .find({ ...due, hookId }, { projection: { _id: 1 } })
        .sort({ nextAttemptAt: 1 })
        .limit(Math.max(1, Math.min(share, room(hookId))))
        .toArray(),
    ),
  );
  // The slots as they are now, after the reads: the other loop may have taken some meanwhile.
  const ids = found
    .flat()
    .map(({ _id }) => _id)
    .slice(0, Math.max(budget.available(), 0));
  if (ids.length === 0) return [];
  budget.hold(ids.length);
  let leased: Leased[];
  try {
    const lease = newLease(context);
    await deliveries.updateMany({ _id: { $in: ids }, ...due }, { $set: { nextAttemptAt: fromNow(context, context.leaseMs), leaseOwner: lease } });
    leased = (await deliveries.find({ _id: { $in: ids }, leaseOwner: lease }).toArray()) as Leased[];
  } catch (error) {
    budget.release(ids.length);
    throw error;
  }
  // What another worker took first is not ours: its slots are given back.
  budget.release(ids.length - leased.length);
  return leased;
}
