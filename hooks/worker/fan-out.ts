import { generateId } from '../../lib/ids.js';
import { insertEach, throwingFailures } from '../../lib/store/insert-each.js';
import type { DeliveryDocument } from '../models.js';
import { hookWants } from '../filters.js';
import { orders, parkBehindEarlier } from './ordering.js';
import { fromNow, newLease, type Budget, type Room, type Taken, type WorkerContext } from './context.js';

/** Events fanned out at once. */
export const fanOutBatch = 500;
/** How far two processes' clocks may disagree when a hook's creation and an event's are compared. */
const clockSkewMs = 5000;

/**
 * Makes the deliveries of recorded events: one per enabled hook subscribed to the event, then
 * marks the events done. The worker of the process that recorded an event takes it at once,
 * any other after two polls; two at once do no harm either: the unique (hookId, eventId)
 * index keeps one delivery per pair, and a worker that dies between the two writes leaves the
 * events due, to be fanned out again to the same result.
 *
 * A hook gets the events recorded after it was created. Two clocks compare here (the hook's
 * process and the event's), so the rule allows them `clockSkewMs` of disagreement, erring
 * towards sending: a hook created a moment after an event may get it too, but an event is
 * never lost to a hook that existed when it was recorded; and a hook created later, while no
 * worker ran, does not get the backlog (a replay does that, on request).
 *
 * Answers what this worker took to send now (up to the `budget`'s free slots, which it holds for
 * them, and no more of one hook than its `room`), the hooks whose deliveries it left waiting, and whether a full batch may have left
 * more events behind it.
 */
export async function fanOut(context: WorkerContext, budget: Budget, room: Room): Promise<{ taken?: Taken; more: boolean; leftFor: Set<string> }> {
  const { events, hooks, deliveries, owner, clock } = context;
  /** How long the recording process's worker has to fan out its events before any other may. */
  const handOverMs = 2 * context.pollMs;
  const due = await events
    .find({
      fanOutDue: { $type: 'date' },
      // Numbered first (`sequencer.ts`), so that every delivery carries the event's place in the order.
      sequenceDue: { $exists: false },
      $or: [{ fanOutBy: owner }, { fanOutDue: { $lte: fromNow(context, -handOverMs) } }],
    })
    .sort({ fanOutDue: 1 })
    // All of a batch's events at once, whatever the free slots: fanning out a few at a time when
    // slots are short multiplies the reads and writes per event just when the database is busiest
    // (measured: a healthy hook beside another at 50 events/s went from 28 ms to 28 s at p50).
    .limit(fanOutBatch)
    .toArray();
  // In the one order, so that an entity's deliveries are made (and, per entity, released) in it.
  due.sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
  if (due.length === 0) return { more: false, leftFor: new Set() };
  const subscribed = await hooks.find({ enabled: true, events: { $in: [...new Set(due.map(({ event }) => event))] } }).toArray();
  const now = clock.now();
  // As many as this worker has room for are made already taken by it (under a lease, as
  // `claim` would take them), so that they go out now without being looked for again.
  const lease = newLease(context);
  const made: DeliveryDocument[] = due.flatMap((event) =>
    subscribed
      .filter((hook) => hookWants(hook, event) && hook.createdAt <= event.createdAt.getTime() + clockSkewMs)
      .map((hook) => ({
        _id: generateId(),
        hookId: hook._id,
        eventId: event._id,
        event: event.event,
        ...(event.entityKey && { entityKey: event.entityKey }),
        ...(event.sequence !== undefined && { sequence: event.sequence }),
        state: 'pending' as const,
        attempts: 0,
        // Due since the event was recorded, so that the oldest go first and latency counts from the commit.
        nextAttemptAt: event.createdAt,
        leaseOwner: null,
        lastAttemptAt: null,
        lastStatus: null,
        lastError: null,
        createdAt: event.createdAt,
        updatedAt: now,
        expiresAt: event.expiresAt,
      })),
  );
  // Per-entity ordering: what must wait behind an earlier delivery of its entity is parked, not taken.
  await parkBehindEarlier(context, made, new Set(subscribed.filter(orders).map(({ _id }) => _id)));
  const takenOf = new Map<string, number>();
  /** Hooks whose deliveries wait because the hook is at its limit (not because this worker is). */
  const leftFor = new Set<string>();
  let left = Math.max(budget.available(), 0);
  const held = left;
  for (const delivery of made) {
    const already = takenOf.get(delivery.hookId) ?? 0;
    if (left <= 0) break;
    if (delivery.parked) continue;
    if (already >= room(delivery.hookId)) {
      leftFor.add(delivery.hookId);
      continue;
    }
    Object.assign(delivery, { leaseOwner: lease, nextAttemptAt: fromNow(context, context.leaseMs) });
    takenOf.set(delivery.hookId, already + 1);
    left -= 1;
  }
  // Held now, before the writes below, so that the other loop cannot promise the same slots.
  const holding = held - left;
  budget.hold(holding);
  let outcomes: ReturnType<typeof throwingFailures>;
  try {
    outcomes = made.length > 0 ? throwingFailures(await insertEach(deliveries, made)) : [];
    await events.updateMany({ _id: { $in: due.map(({ _id }) => _id) } }, { $unset: { fanOutDue: '' } });
  } catch (error) {
    budget.release(holding);
    throw error;
  }
  // Only those this worker stored are its own: another worker's copy of the same pair won, and its slot is given back.
  const mine = made.filter((delivery, index) => delivery.leaseOwner === lease && outcomes[index] === 'inserted') as Taken['batch'];
  budget.release(holding - mine.length);
  return { more: due.length === fanOutBatch, leftFor, ...(mine.length > 0 && { taken: { batch: mine, hooks: subscribed, events: due } }) };
}
