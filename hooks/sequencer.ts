import type { AnyBulkWriteOperation, Db } from 'mongodb';

import { ApiError, isDuplicateKeyError } from '../lib/errors.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import { adaptiveBatch } from '../lib/store/adaptive-batch.js';
import { hookCollections, type HookEventDocument } from './models.js';

/** Events numbered in one run. */
export const sequenceBatch = 500;
/** How long a gap just above the watermark may last before it counts as damage: a run still writing (the owner lock's lease) fills it by then. */
const gapGraceMs = 30_000;

/** The highest sequence below which every event is numbered: the feed shows events up to it. */
interface SequenceState {
  _id: 'state';
  watermark: number;
}

/** The last version given to one entity's events (kept past the events' retention, so that versions never restart). */
interface EntityVersion {
  _id: string;
  version: number;
}

export const sequenceCollections = { state: 'hook_sequence', versions: 'hook_entity_versions' } as const;

/**
 * Numbers recorded events after they commit: one `sequence` for all of them (1, 2, 3, ... with no
 * gap), and a `version` per entity (`User:u1` 1, 2, ...). The write path records an event as one
 * insert with `sequenceDue`; numbering comes later, here, so that no write waits on a global lock.
 *
 * One numbering run at a time across processes (an owner lock; a process that finds it taken
 * leaves the run to its holder). A run takes the oldest unnumbered events, gives them the next
 * numbers in one ordered bulk write, then moves the watermark past them. Versions of one entity
 * always increase; a run that dies after counting them but before numbering leaves one unused. A run that dies midway
 * left a contiguous prefix numbered above the watermark (the bulk write is ordered); the next run
 * counts it as done and goes on after it. The feed shows only what is at or below the watermark,
 * so a reader never sees a number before every smaller one exists. An event that commits late
 * (its transaction was slow) is numbered when it is seen: its sequence is higher than every event
 * already visible, never lower.
 *
 * Two runs may still overlap (a lease that ran out; a write the driver gave up on that the
 * database still applies): sequences are unique (an index), a version counter only moves forward
 * (a run that finds one moved stops before numbering), and a write whose event was numbered since
 * it was read stops the ordered write instead of being skipped, so the loser of an overlap stops at
 * its first clash and never leaves a gap behind numbers it gave.
 *
 * A worker asks every poll; with nothing to number one read answers, without the lock. A full run
 * (which also takes up what a run that died left above the watermark) still comes at least every
 * `fullRunMs` while nothing is due, so the feed's watermark passes such a prefix within that time.
 */
export function createSequencer(db: Db, { leaseMs = gapGraceMs, fullRunMs = 30_000 } = {}) {
  const events = db.collection<HookEventDocument>(hookCollections.events);
  const state = db.collection<SequenceState>(sequenceCollections.state);
  const versions = db.collection<EntityVersion>(sequenceCollections.versions);
  const withLock = createOwnerLocks(db, { leaseMs, waitMs: 0 });
  const batch = adaptiveBatch(sequenceBatch);

  const watermark = async () => (await state.findOne({ _id: 'state' }))?.watermark ?? 0;
  /** When a full run last found nothing to number. */
  let lastIdleRun = 0;
  /** When this process first found the gap above the watermark it still finds. */
  let gapSince: number | undefined;

  /** Each entity's last version given. */
  async function lastVersions(keys: string[]): Promise<Map<string, number>> {
    const counters = await versions.find({ _id: { $in: keys } }).toArray();
    return new Map(counters.map(({ _id, version }) => [_id, version]));
  }

  async function numberBatch(): Promise<{ numbered: number; more: boolean }> {
    const current = await watermark();
    // What a run that stopped midway numbered: a contiguous run just above the watermark.
    const stranded = await events
      .find({ sequence: { $gt: current } }, { projection: { sequence: 1 } })
      .sort({ sequence: 1 })
      .toArray();
    let next = current + 1;
    for (const event of stranded) {
      if (event.sequence === next) {
        next += 1;
        continue;
      }
      // A run still writing (its numbers land in order): wait for it; one that outlasts a lease is damage.
      if (Date.now() - (gapSince ??= Date.now()) > gapGraceMs) {
        throw new Error(`webhook event sequence ${next} is missing after ${current}; numbering stops until it is repaired`);
      }
      return { numbered: 0, more: false };
    }
    gapSince = undefined;
    // Only what numbering needs: an event's payload is read once more, by the fan-out that sends it.
    const due = await events
      .find({ sequenceDue: { $type: 'date' } }, { projection: { _id: 1, entityKey: 1 } })
      // Oldest first; the events of one write (one `sequenceDue`) in the order it recorded them.
      .sort({ sequenceDue: 1, unitIndex: 1, _id: 1 })
      .limit(batch.size)
      .toArray();
    if (due.length > 0) {
      const last = await lastVersions([...new Set(due.flatMap(({ entityKey }) => (entityKey ? [entityKey] : [])))]);
      const writes: Array<AnyBulkWriteOperation<HookEventDocument>> = [];
      for (const event of due) {
        const version = event.entityKey ? (last.get(event.entityKey) ?? 0) + 1 : undefined;
        if (event.entityKey) last.set(event.entityKey, version!);
        const sequence = next;
        next += 1;
        writes.push({
          updateOne: {
            filter: { _id: event._id, sequenceDue: { $type: 'date' } },
            update: {
              $set: { sequence, 'payload.sequence': sequence, ...(version !== undefined && { version, 'payload.version': version }) },
              $unset: { sequenceDue: '', unitIndex: '' },
            },
            // An event numbered meanwhile by another run must stop this ordered write, not be
            // skipped (the numbers after it would leave a gap): as an upsert it fails on its own `_id`.
            upsert: true,
          },
        });
      }
      // The counters first: a run that dies between the two writes leaves a version unused (the
      // events get later ones next time), never one given twice.
      // Forward only: a counter another run moved past what this one read fails (its `_id`), and
      // this run stops before it gives a version twice.
      try {
        if (last.size > 0) {
          await versions.bulkWrite(
            [...last].map(([key, version]) => ({
              updateOne: { filter: { _id: key, version: { $lt: version } }, update: { $set: { version } }, upsert: true },
            })),
            { ordered: false },
          );
        }
        const written = await events.bulkWrite(writes, { ordered: true });
        // An event swept while it waited (past its retention) would come back as a stub: none may.
        const stubs = Object.values(written.upsertedIds);
        if (stubs.length > 0) await events.deleteMany({ _id: { $in: stubs } });
      } catch (error) {
        // Overtaken: what was written stands, and the next run goes on from it.
        if (isDuplicateKeyError(error)) return { numbered: 0, more: false };
        throw error;
      }
    }
    // Under the lock, one writer: the watermark only moves forward (and `$max` is not in every engine).
    if (next - 1 > current) await state.updateOne({ _id: 'state' }, { $set: { watermark: next - 1 } }, { upsert: true });
    return { numbered: due.length, more: due.length === batch.size };
  }

  return {
    /** The highest sequence below which every event is numbered. */
    watermark,

    /** Numbers the oldest unnumbered events, unless another process is at it; answers how many, and whether more wait. */
    async run(): Promise<{ numbered: number; more: boolean; busy?: boolean }> {
      const now = Date.now();
      if (now - lastIdleRun < fullRunMs && !(await events.findOne({ sequenceDue: { $type: 'date' } }, { projection: { _id: 1 } }))) {
        return { numbered: 0, more: false };
      }
      try {
        const result = await withLock('hook-sequencer', numberBatch);
        batch.succeeded();
        if (result.numbered === 0) lastIdleRun = now;
        return result;
      } catch (error) {
        // Another process holds the lock: it numbers these too, perhaps not the ones it has not seen yet.
        if (error instanceof ApiError && error.code === 'request.conflict') return { numbered: 0, more: false, busy: true };
        batch.failed();
        throw error;
      }
    },
  };
}

export type Sequencer = ReturnType<typeof createSequencer>;
