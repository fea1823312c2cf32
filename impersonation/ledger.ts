import { CompactSign, importJWK, type JWK } from 'jose';
import type { AnyBulkWriteOperation, Db } from 'mongodb';

import { ApiError, isDuplicateKeyError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import { adaptiveBatch } from '../lib/store/adaptive-batch.js';
import type { ImpersonationEvent } from './audit.js';
import { announcementsOf, type Announcement } from './announcements.js';
import { checkpointType, genesisHash, recordHash, type CheckpointClaims } from './chain.js';

/** Records chained in one run. */
const chainBatch = 500;
/** How long a gap just above the head may last before it counts as damage: a run still writing (the owner lock's lease) fills it by then. */
const gapGraceMs = 30_000;

interface LedgerHead {
  _id: 'head';
  sequence: number;
  hash: string;
  /** Whether records written before there was a ledger were given to it (once per deployment). */
  legacyAdopted?: boolean;
}

export interface CheckpointDocument {
  _id: string;
  sequence: number;
  hash: string;
  jws: string;
  createdAt: Date;
}

/** An audit record as the API answers it, and as it is hashed. */
export function auditView({ _id, chainDue: _chainDue, ...record }: ImpersonationEvent): Record<string, unknown> & { id: string } {
  return { id: _id, ...record };
}

export interface LedgerOptions {
  issuer: string;
  /** The provider's current signing key (private JWK with `alg` and `kid`). */
  signingKey(): JWK;
  /** Records the events of chained records, with the ids given (a second write of one id is a no-op). */
  announce(items: Announcement[]): Promise<void>;
  /** How long a record waits before it is chained: a claimed exchange that fails after it is corrected in place meanwhile. */
  settleMs?: number;
  /** The least time between two checkpoints (a run that chained something checkpoints when the last is older). */
  checkpointMs?: number;
  pollMs?: number;
  logger: Logger;
}

/**
 * The impersonation audit's ledger: after records settle, one process at a time (an owner lock)
 * gives them the next sequences and chains them by hash (`chain.ts`), in one ordered bulk write,
 * announces each as its webhook event, and now and then signs a checkpoint of the head with the
 * provider's signing key. A run that dies midway leaves a contiguous chained prefix, which the
 * next run takes up; events go before the chain (their ids are the records', so a repeat is a no-op).
 *
 * Two runs may still overlap: one whose lease ran out, or one whose write the driver gave up on
 * (a socket timeout) while the database still applies it. Neither can fork or break the chain:
 * sequences are unique (an index), and a write whose record was chained or changed since it was
 * read stops its run's ordered write instead of being skipped, so each run's writes are a
 * contiguous continuation of what it read, and the loser of any overlap stops at its first clash.
 */
export function createLedger(db: Db, options: LedgerOptions) {
  const records = db.collection<ImpersonationEvent>('impersonations');
  const ledger = db.collection<LedgerHead>('impersonation_ledger');
  const checkpoints = db.collection<CheckpointDocument>('impersonation_checkpoints');
  const withLock = createOwnerLocks(db, { leaseMs: gapGraceMs, waitMs: 0 });
  const batch = adaptiveBatch(chainBatch);
  const settleMs = options.settleMs ?? 2000;
  const checkpointMs = options.checkpointMs ?? 300_000;

  /** When this process first found the gap above the head it still finds. */
  let gapSince: number | undefined;

  /**
   * The head, moved past what runs chained above it (their bulk write is ordered, so they leave a
   * contiguous run), and whether that run is whole. A gap in it is a run still writing (another
   * process's, or one whose answer this process gave up waiting for): nothing is chained until it
   * closes, and only one that outlasts a lease counts as damage. A record that does not follow
   * the one before it never heals: chaining stops at once, for a person to look at.
   */
  async function head(): Promise<{ sequence: number; hash: string; whole: boolean }> {
    const stored = await ledger.findOne({ _id: 'head' });
    let current = { sequence: stored?.sequence ?? 0, hash: stored?.hash ?? genesisHash };
    const stranded = await records
      .find({ sequence: { $gt: current.sequence } }, { projection: { sequence: 1, prevHash: 1, hash: 1 } })
      .sort({ sequence: 1 })
      .toArray();
    for (const record of stranded) {
      const broken = record.sequence === current.sequence + 1 && record.prevHash !== current.hash;
      if (broken || (record.sequence !== current.sequence + 1 && Date.now() - (gapSince ??= Date.now()) > gapGraceMs)) {
        throw new Error(`impersonation audit sequence ${current.sequence + 1} is missing or broken; chaining stops until it is repaired`);
      }
      if (record.sequence !== current.sequence + 1) return { ...current, whole: false };
      current = { sequence: record.sequence, hash: record.hash! };
    }
    gapSince = undefined;
    return { ...current, whole: true };
  }
  /** When the checkpoint this process found owed (records chained since the last one) may be signed. */
  let checkpointOwedAt: number | undefined;

  async function checkpoint(at: { sequence: number; hash: string }, force: boolean) {
    checkpointOwedAt = undefined;
    if (at.sequence === 0) return;
    const [last] = await checkpoints.find({}).sort({ sequence: -1 }).limit(1).toArray();
    if (last && last.sequence >= at.sequence) return;
    if (last && !force && Date.now() - last.createdAt.getTime() < checkpointMs) {
      checkpointOwedAt = last.createdAt.getTime() + checkpointMs;
      return;
    }
    const jwk = options.signingKey();
    const claims: CheckpointClaims = { iss: options.issuer, sequence: at.sequence, hash: at.hash, iat: Math.floor(Date.now() / 1000) };
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: jwk.alg!, kid: jwk.kid!, typ: checkpointType })
      .sign(await importJWK(jwk, jwk.alg));
    await checkpoints.updateOne(
      { _id: `checkpoint:${at.sequence}` },
      { $setOnInsert: { sequence: at.sequence, hash: at.hash, jws, createdAt: new Date() } },
      { upsert: true },
    );
  }

  /** Records written before the ledger existed have no `chainDue`: they are chained first, oldest first, once. */
  async function adoptLegacy() {
    const stored = await ledger.findOne({ _id: 'head' });
    if (stored?.legacyAdopted) return;
    await records.updateMany({ sequence: { $exists: false }, chainDue: { $exists: false } }, { $set: { chainDue: new Date(0) } });
    await ledger.updateOne({ _id: 'head' }, { $set: { legacyAdopted: true } }, { upsert: true });
  }

  async function chainBatchNow(force: boolean): Promise<{ chained: number; more: boolean }> {
    await adoptLegacy();
    let current = await head();
    if (!current.whole) return { chained: 0, more: false };
    const due = await records
      .find({ chainDue: { $lte: new Date(Date.now() - settleMs) } })
      .sort({ chainDue: 1, createdAt: 1, _id: 1 })
      .limit(batch.size)
      .toArray();
    if (due.length > 0) {
      await options.announce(announcementsOf(due));
      const writes: Array<AnyBulkWriteOperation<ImpersonationEvent>> = due.map((record) => {
        const sequence = current.sequence + 1;
        const prevHash = current.hash;
        const hash = recordHash({ ...auditView(record), sequence, prevHash });
        current = { sequence, hash, whole: true };
        return {
          updateOne: {
            // The record as it was read and hashed (an exchange that fails after its claim is
            // corrected in place until it is chained), and not chained meanwhile by another run.
            filter: { _id: record._id, chainDue: { $type: 'date' }, kind: record.kind, failureReason: record.failureReason ?? { $exists: false } },
            update: { $set: { sequence, prevHash, hash }, $unset: { chainDue: '' } },
            // A write whose record no longer matches must stop the batch, not be skipped: the next
            // ones were hashed after it. As an upsert it fails on the record's own `_id` (E11000),
            // and the ordered write stops there, leaving a contiguous run the next run takes up.
            upsert: true,
          },
        };
      });
      try {
        const written = await records.bulkWrite(writes, { ordered: true });
        const stubs = Object.values(written.upsertedIds);
        if (stubs.length > 0) {
          // Only a record deleted between the read and the write comes back as a stub: remove it
          // again and say so; the verifier reports its sequence missing, which is what happened.
          await records.deleteMany({ _id: { $in: stubs } });
          throw new Error(`impersonation audit records ${stubs.join(', ')} were deleted while they were being chained`);
        }
      } catch (error) {
        // Overtaken (another run chained one of these, or gave one of these sequences away), or a
        // record changed after it was read: what was written stands, and the next run goes on from it.
        if (isDuplicateKeyError(error)) return { chained: 0, more: false };
        throw error;
      }
      // Forward only: a run that was overtaken, or whose answer came late, never moves it back.
      await ledger.updateOne(
        { _id: 'head', $or: [{ sequence: { $exists: false } }, { sequence: { $lt: current.sequence } }] },
        { $set: { sequence: current.sequence, hash: current.hash } },
      );
    }
    await checkpoint(current, force);
    return { chained: due.length, more: due.length === batch.size };
  }

  /** When this process last ran in full with nothing due (a checkpoint may still be owed then). */
  let lastIdleRun = 0;

  /**
   * Chains what has settled, unless another process is at it. `force` checkpoints the head now.
   * With nothing due and no checkpoint owed, one read answers and no lock is taken; a full run
   * still comes once a `checkpointMs`, for a checkpoint another process may have left owed.
   */
  async function run(force = false): Promise<{ chained: number; more: boolean; busy?: boolean }> {
    const now = Date.now();
    if (!force && lastIdleRun > 0 && now - lastIdleRun < checkpointMs && (checkpointOwedAt === undefined || now < checkpointOwedAt)) {
      const due = await records.findOne({ chainDue: { $lte: new Date(now - settleMs) } }, { projection: { _id: 1 } });
      if (!due) return { chained: 0, more: false };
    }
    try {
      const result = await withLock('impersonation-ledger', () => chainBatchNow(force));
      batch.succeeded();
      if (result.chained === 0) lastIdleRun = Date.now();
      return result;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'request.conflict') return { chained: 0, more: false, busy: true };
      batch.failed();
      throw error;
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  /** When the next run is due (Infinity while one runs: it schedules the next itself). */
  let dueAt = Infinity;
  const pollMs = options.pollMs ?? 1000;
  function schedule(delay: number) {
    if (stopped) return;
    dueAt = Date.now() + delay;
    timer = setTimeout(() => {
      dueAt = Infinity;
      running = run()
        .then(({ more }) => schedule(more ? 0 : pollMs))
        .catch((error: unknown) => {
          options.logger.error('The impersonation audit could not be chained', error);
          schedule(pollMs * 5);
        });
    }, delay);
    timer.unref?.();
  }

  return {
    run,
    start: () => schedule(pollMs),
    /** A record was written (a change stream saw it): a run once it has settled, unless one is due sooner. */
    wake() {
      if (stopped || dueAt === Infinity || dueAt <= Date.now() + settleMs) return;
      clearTimeout(timer);
      schedule(settleMs);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => undefined);
    },
    checkpoints: () => checkpoints.find({}).sort({ sequence: -1 }).toArray(),
  };
}

export type Ledger = ReturnType<typeof createLedger>;
