import { systemClock } from '../../lib/clock.js';
import { generateId } from '../../lib/ids.js';
import { attempt, createRecorder } from './attempt.js';
import { workerContext, type Budget, type Room, type Taken } from './context.js';
import { fanOut } from './fan-out.js';
import { claim } from './lease.js';
import { orders, releaseParked } from './ordering.js';
import type { DeliveryWorker, WorkerOptions } from './options.js';

/** How soon a worker that found another process numbering looks again. */
const sequencerRetryMs = 25;

/** One of the worker's two loops (new events; due deliveries). */
interface Loop {
  run(): Promise<void>;
  wake(): void;
}

/** What a loop's turn began with: a wake (this process wrote or finished something), or its poll. */
type Turn = { woken: boolean };

/**
 * Delivers due deliveries, at least once, in several processes over one database. A worker takes
 * deliveries with a conditional update that moves their `nextAttemptAt` past the lease: only one
 * worker's update matches, so in normal operation one event reaches a hook once; if the worker
 * dies, the delivery is due again when the lease ends and another worker takes it over.
 *
 * The stages, each in its own file: fan-out (events become deliveries, `fan-out.ts`), the lease
 * (due deliveries are taken fairly across hooks, `lease.ts`), the attempt (one delivery sent, its
 * outcome group-committed, `attempt.ts`); this file is the loop that runs them, one slot per delivery.
 */
export function createDeliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, concurrency, logger, clock = systemClock } = options;
  const context = workerContext(db, {
    send: options.send,
    retry: options.retry,
    clock,
    logger,
    owner: options.owner ?? generateId(),
    pollMs: options.pollMs,
    concurrencyPerHook: options.concurrencyPerHook,
    timeoutMs: options.timeoutMs,
    disableAfterMs: options.disableAfterMs,
    retentionMs: options.retentionMs,
    announce: options.announce,
    ...(options.metrics && { metrics: options.metrics }),
  });
  const record = createRecorder(context);
  const inFlight = new Set<Promise<void>>();
  /** Attempts in flight per hook, until their endpoint has answered. */
  const busy = new Map<string, number>();
  const room: Room = (hookId) => context.concurrencyPerHook - (busy.get(hookId) ?? 0);
  /** Where the next claim starts among the hooks with due deliveries, so that each gets its turn. */
  let turn = 0;
  /** Hooks whose deliveries this worker's fan-out left waiting for room: a slot of theirs freed calls for a claim. */
  const owed = new Set<string>();
  let lastClaim = -Infinity;
  /** Set when a delivery to a hook that orders per entity finished: parked ones may be released. */
  let orderedFinished = false;
  let lastRelease = -Infinity;
  /**
   * Whether each loop's last full look found nothing. A poll after such a look first asks one
   * question (is anything waiting at all?) instead of making every look, so that an idle worker
   * makes one command a poll for each loop (measured: 6.4 commands a second for an idle server,
   * 4 of them the worker's); a wake always makes the full look.
   */
  const idle = { newEvents: false, dueDeliveries: false };
  /** Slots held by a loop between deciding what to take and sending it. */
  let held = 0;
  const budget: Budget = {
    available: () => concurrency - inFlight.size - held,
    hold: (count) => {
      held += count;
    },
    release: (count) => {
      held -= count;
    },
  };

  /**
   * New events first, in a loop of their own: numbered, then fanned out; what their fan-out takes
   * is sent at once, so that a slow look for due deliveries never delays them.
   */
  async function takeNew(loop: Loop, { woken }: Turn): Promise<Taken | undefined> {
    if (!woken && idle.newEvents) {
      const waiting = await context.events.findOne({ $or: [{ sequenceDue: { $type: 'date' } }, { fanOutDue: { $type: 'date' } }] }, { projection: { _id: 1 } });
      if (!waiting) return undefined;
    }
    // Numbered first: an event is fanned out once it has its place in the order.
    const numbering = await options.sequencer.run();
    if (numbering.more) loop.wake();
    // Another process is numbering: look again in a moment, not a poll later (its run may have begun before our events committed).
    else if (numbering.busy) setTimeout(() => loop.wake(), sequencerRetryMs).unref();
    const { taken, more, leftFor } = await fanOut(context, budget, room);
    for (const hookId of leftFor) owed.add(hookId);
    // A full batch may leave more behind it: look again at once.
    if (more) loop.wake();
    idle.newEvents = numbering.numbered === 0 && !numbering.more && !numbering.busy && !taken && !more;
    return taken;
  }

  /**
   * Whatever else is due (retries, other processes' leftovers, what fan-out left waiting for
   * room), looked for once a poll, or at once when a hook this worker left deliveries waiting for
   * has room again: not on every wake, since each look reads every pending delivery's hook, and a
   * hook that hangs leaves many.
   */
  async function takeDue(_loop: Loop, { woken }: Turn): Promise<Taken | undefined> {
    // A hook owed deliveries calls for a look once half its slots are free, not at each one: a
    // look costs the same for one delivery as for several.
    const worthALook = (hookId: string) => room(hookId) >= Math.ceil(context.concurrencyPerHook / 2);
    const polled = clock.now().getTime();
    if (!woken && idle.dueDeliveries && !orderedFinished && ![...owed].some(worthALook)) {
      if (polled - lastClaim < context.pollMs && polled - lastRelease < context.pollMs) return undefined;
      // Nothing due (a retry's time come, another process's lease run out) and nothing parked: both looks would find nothing.
      const waiting = await context.deliveries.findOne(
        { state: 'pending', $or: [{ nextAttemptAt: { $lte: clock.now() } }, { parked: true }] },
        { projection: { _id: 1 } },
      );
      if (!waiting) {
        lastRelease = lastClaim = polled;
        return undefined;
      }
    }
    let released = 0;
    // Per-entity ordering: a finished delivery (here, or in another process by the next poll) lets the next of its entity go.
    if (orderedFinished || clock.now().getTime() - lastRelease >= context.pollMs) {
      orderedFinished = false;
      lastRelease = clock.now().getTime();
      released = await releaseParked(context);
      if (released > 0) lastClaim = -Infinity;
    }
    const now = clock.now().getTime();
    if (now - lastClaim < context.pollMs && ![...owed].some(worthALook)) return undefined;
    lastClaim = now;
    const roomBefore = new Map([...owed].map((hookId) => [hookId, room(hookId)]));
    const free = budget.available();
    const batch = await claim(context, budget, room, turn++);
    // A hook is paid once a claim took fewer of its deliveries than it had room for (none are
    // left due); one that filled its room may have more waiting, and stays owed.
    const claimedOf = new Map<string, number>();
    for (const { hookId } of batch) claimedOf.set(hookId, (claimedOf.get(hookId) ?? 0) + 1);
    for (const [hookId, before] of roomBefore) if (before > 0 && (claimedOf.get(hookId) ?? 0) < Math.min(before, free)) owed.delete(hookId);
    idle.dueDeliveries = batch.length === 0 && released === 0 && owed.size === 0;
    return batch.length > 0 ? { batch } : undefined;
  }

  /**
   * Sends each delivery of what was taken on its own: each holds one of the process's slots
   * until its own outcome is recorded (not until the slowest of its batch is), and one of its
   * hook's slots until its endpoint has answered. The slots the budget held for them pass to the
   * deliveries' own jobs.
   */
  async function send({ batch, hooks: knownHooks, events: knownEvents }: Taken) {
    for (const { hookId } of batch) busy.set(hookId, (busy.get(hookId) ?? 0) + 1);
    try {
      await sendEach(batch, knownHooks, knownEvents);
    } finally {
      budget.release(batch.length);
    }
  }

  async function sendEach(batch: Taken['batch'], knownHooks: Taken['hooks'], knownEvents: Taken['events']) {
    const [hookList, eventList] = await Promise.all([
      knownHooks ?? context.hooks.find({ _id: { $in: [...new Set(batch.map(({ hookId }) => hookId))] } }).toArray(),
      knownEvents ?? context.events.find({ _id: { $in: batch.map(({ eventId }) => eventId) } }).toArray(),
    ]).catch((error: unknown) => {
      // The database is unreachable: the leases run out and the deliveries are taken again.
      logger.error('Webhook deliveries could not be read; they will be retried', error);
      return [undefined, undefined] as const;
    });
    const hookById = new Map(hookList?.map((hook) => [hook._id, hook]));
    const eventById = new Map(eventList?.map((event) => [event._id, event]));
    for (const delivery of batch) {
      let hookSlotHeld = true;
      /** The hook's slot is its endpoint's: it is free as soon as the endpoint has answered (or not), before the outcome is written. */
      const releaseHookSlot = () => {
        if (!hookSlotHeld) return;
        hookSlotHeld = false;
        const left = (busy.get(delivery.hookId) ?? 1) - 1;
        if (left > 0) busy.set(delivery.hookId, left);
        else busy.delete(delivery.hookId);
        wake();
      };
      const hook = hookById.get(delivery.hookId);
      const sent = hookList && eventList ? attempt(context, delivery, hook, eventById.get(delivery.eventId)) : undefined;
      const job = (
        sent
          ? sent.finally(releaseHookSlot).then(async (outcome) => {
              await record(outcome);
              if (orders(hook) && outcome.state !== 'pending') orderedFinished = true;
            })
          : Promise.resolve()
      )
        // A database failure while recording: its lease runs out and it is tried again. Never
        // left unhandled, which would end the process.
        .catch((error: unknown) => logger.error(`Webhook delivery ${delivery._id} could not be recorded; it will be retried`, error))
        .finally(() => {
          releaseHookSlot();
          inFlight.delete(job);
          // A slot is free: whatever waits for it may go now.
          wake();
        });
      inFlight.add(job);
    }
  }

  /** A loop that takes work with `take` while the worker runs, and sleeps until woken (or a poll) when there is none or no slot. */
  function createLoop(take: (loop: Loop, turn: Turn) => Promise<Taken | undefined>, label: string): Loop {
    let woken = false;
    const beat = { at: Date.now(), failing: false };
    heartbeats.push(beat);
    let interrupt: () => void = () => {};
    const pause = () => {
      const { done, cancel } = clock.wait(context.pollMs);
      interrupt = cancel;
      return done;
    };
    const loop: Loop = {
      wake() {
        woken = true;
        interrupt();
      },
      async run() {
        let failures = 0;
        while (running) {
          const turn: Turn = { woken };
          woken = false;
          beat.at = Date.now();
          if (budget.available() <= 0) {
            // A delivery that ends wakes every loop.
            if (!woken) await pause();
            continue;
          }
          let took = false;
          try {
            const work = await take(loop, turn);
            failures = 0;
            beat.failing = false;
            if (work) {
              took = true;
              await send(work);
            }
          } catch (error) {
            // The database is unreachable: say so once per outage, and keep trying.
            beat.failing = true;
            if (failures++ === 0) logger.error(`Webhook delivery (${label}) cannot read the database; retrying`, error);
          }
          if (!took && !woken && running) await pause();
        }
      },
    };
    return loop;
  }

  /** When each loop last began a turn, and whether its last read of the database failed (readiness). */
  const heartbeats: Array<{ at: number; failing: boolean }> = [];
  const loops = [createLoop(takeNew, 'new events'), createLoop(takeDue, 'due deliveries')];
  let running = false;
  let stopped: Promise<unknown> | undefined;
  const wake = () => loops.forEach((loop) => loop.wake());

  return {
    start() {
      if (running) return;
      running = true;
      stopped = Promise.all(loops.map((loop) => loop.run()));
    },
    wake,
    /**
     * Whether the worker runs and keeps turning: each loop began a turn within `staleMs` (a loop
     * waits at most a poll between turns) and its last read of the database did not fail.
     */
    health(staleMs: number): { running: boolean; ok: boolean; reason?: string } {
      if (!running) return { running: false, ok: false, reason: 'the delivery worker is not running' };
      const now = Date.now();
      if (heartbeats.some(({ failing }) => failing)) return { running, ok: false, reason: 'the delivery worker cannot read the database' };
      if (heartbeats.some(({ at }) => now - at > staleMs)) return { running, ok: false, reason: `the delivery worker has not turned for over ${staleMs} ms` };
      return { running, ok: true };
    },
    async stop() {
      running = false;
      wake();
      await stopped;
      await Promise.all(inFlight);
    },
  };
}
