import type { Db } from 'mongodb';

import { dataEvents } from '../../hooks/catalog.js';
import type { DeliveryDocument } from '../../hooks/models.js';
import type { TestClock } from './clock.js';
import type { Receiver, Received } from './receiver.js';
import type { TestServer } from './server.js';

/** Settings that let the tests deliver to a receiver on loopback, quickly. */
/** Logto's user fields in webhooks (@logto/schemas `userInfoSelectFields`), sorted. */
export const logtoUserFields = [
  'applicationId',
  'avatar',
  'createdAt',
  'customData',
  'id',
  'identities',
  'isSuspended',
  'lastSignInAt',
  'name',
  'primaryEmail',
  'primaryPhone',
  'profile',
  'updatedAt',
  'username',
];

/**
 * The delivery settings of a test server: receivers on loopback, a quick poll and retry schedule,
 * and an attempt's limit that only a receiver that does not answer reaches (the test's receiver
 * answers within milliseconds, or, on a machine with a load of 8, within seconds; a test about
 * the limit itself sets its own).
 */
export const hookTestEnv = {
  HOOKS_ALLOWED_HOSTS: '127.0.0.1,localhost',
  HOOKS_POLL_MS: '50',
  HOOKS_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1',
  HOOKS_TIMEOUT_MS: '15000',
};

/**
 * Moves the clock to the time of the earliest delivery that waits for its next attempt (none
 * under way), so that a retry schedule runs without its pauses.
 */
export async function fastForward(db: Db, clock: TestClock) {
  const [next] = await db
    .collection<DeliveryDocument>('hook_deliveries')
    .find({ state: 'pending', leaseOwner: null })
    .sort({ nextAttemptAt: 1 })
    .limit(1)
    .toArray();
  const ahead = next ? next.nextAttemptAt.getTime() - clock.now().getTime() : 0;
  if (ahead > 0) clock.advance(ahead);
}

/**
 * Waits until every event has its deliveries made and none of them is pending (each has
 * succeeded, failed or been skipped); with a test clock, moves it to each retry's time.
 */
export async function deliveriesSettled(db: Db, timeoutMs = 30_000, clock?: TestClock) {
  const deadline = Date.now() + timeoutMs;
  // Events first: a worker makes an event's deliveries before it marks the event done.
  const busy = async () =>
    (await db.collection('hook_events').countDocuments({ fanOutDue: { $type: 'date' } })) > 0 ||
    (await db.collection('hook_deliveries').countDocuments({ state: 'pending' })) > 0;
  while (await busy()) {
    if (Date.now() > deadline) throw new Error(`deliveries still pending after ${timeoutMs} ms`);
    if (clock) await fastForward(db, clock);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Creates a hook on every data event, pointed at the receiver, which learns its signing key. */
export async function subscribe(server: TestServer, receiver: Receiver, events: string[] = dataEvents, name = 'test hook') {
  const hook = await server.create('/api/hooks', { name, events, config: { url: receiver.url } });
  receiver.keys.push(hook.signingKey);
  return hook as { id: string; signingKey: string };
}

/** What the receiver got while `action` ran and its deliveries settled. */
export async function eventsDuring(server: TestServer, receiver: Receiver, action: () => Promise<unknown>): Promise<Received[]> {
  // What earlier writes announced arrives first, and is not counted.
  await deliveriesSettled(server.database.db);
  const before = receiver.received.length;
  await action();
  await deliveriesSettled(server.database.db);
  return distinctEvents(receiver.received.slice(before));
}

/**
 * Each event once, at its first arrival: delivery is at least once (a send that timed out on a
 * loaded machine is sent again, under the same `webhook-id`), so a test of which events a change
 * announces counts events by their id, not arrivals.
 */
export function distinctEvents(received: Received[]): Received[] {
  const seen = new Set<string>();
  return received.filter(({ id }) => !seen.has(id) && Boolean(seen.add(id)));
}
