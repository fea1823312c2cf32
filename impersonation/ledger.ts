import { createHash } from 'node:crypto';

import { CompactSign, importJWK, type JWK } from 'jose';
import type { AnyBulkWriteOperation, Db } from 'mongodb';

import { ApiError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import { adaptiveBatch } from '../lib/store/adaptive-batch.js';
import type { ImpersonationEvent } from './audit.js';
import type { ImpersonationAnnouncement } from '../hooks/catalog.js';
import { checkpointType, genesisHash, recordHash, type CheckpointClaims } from './chain.js';

/** Records chained in one run. */
const chainBatch = 500;

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

/** What the ledger announces for a record, if anything: the webhook event, and what it says (never a token, a hash of one, or the context). */
export function announcementOf(record: ImpersonationEvent): { event: ImpersonationAnnouncement; data: Record<string, unknown> } | undefined {
  const common = {
    ...(record.impersonationId !== undefined && { impersonationId: record.impersonationId }),
    ...(record.targetUserId !== undefined && { targetUserId: record.targetUserId }),
  };
  const terms = {
    ...(record.reason !== undefined && { reason: record.reason }),
    ...(record.ticketId !== undefined && { ticketId: record.ticketId }),
  };
  switch (record.kind) {
    case 'subject_token.issued':
      return {
        event: 'Impersonation.Requested',
        data: {
          ...common,
          ...terms,
          ...(record.boundActorId !== undefined && { actorId: record.boundActorId }),
          issuerClientId: record.issuerClientId,
          ...(record.expiresAt !== undefined && { expiresAt: new Date(record.expiresAt).toISOString() }),
        },
      };
    case 'exchange.succeeded':
      return {
        event: 'Impersonation.Started',
        data: {
          ...common,
          ...terms,
          ...(record.actorUserId !== undefined && { actorId: record.actorUserId }),
          clientId: record.clientId,
          resource: record.resource,
          scope: record.scope ?? '',
        },
      };
    case 'exchange.failed':
      return {
        event: 'Impersonation.Refused',
        data: {
          ...common,
          ...(record.actorUserId !== undefined && { actorId: record.actorUserId }),
          ...(record.clientId !== undefined && { clientId: record.clientId }),
          ...(record.resource !== undefined && { resource: record.resource }),
          reason: record.failureReason ?? 'unknown',
        },
      };
    case 'impersonation.revoked':
      return {
        event: 'Impersonation.Revoked',
        data: { ...common, ...(record.actorUserId !== undefined && { actorId: record.actorUserId }), revokedBy: record.clientId },
      };
    default:
      return undefined;
  }
}

export interface LedgerOptions {
  issuer: string;
  /** The provider's current signing key (private JWK with `alg` and `kid`). */
  signingKey(): JWK;
  /** Records the events of chained records, with the ids given (a second write of one id is a no-op). */
  announce(
    items: Array<{ id: string; event: ImpersonationAnnouncement; impersonationId?: string; clientId?: string; data: Record<string, unknown> }>,
  ): Promise<void>;
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
 */
export function createLedger(db: Db, options: LedgerOptions) {
  const records = db.collection<ImpersonationEvent>('impersonations');
  const ledger = db.collection<LedgerHead>('impersonation_ledger');
  const checkpoints = db.collection<CheckpointDocument>('impersonation_checkpoints');
  const withLock = createOwnerLocks(db, { leaseMs: 30_000, waitMs: 0 });
  const batch = adaptiveBatch(chainBatch);
  const settleMs = options.settleMs ?? 2000;
  const checkpointMs = options.checkpointMs ?? 300_000;

  async function head(): Promise<{ sequence: number; hash: string }> {
    const stored = await ledger.findOne({ _id: 'head' });
    let current = { sequence: stored?.sequence ?? 0, hash: stored?.hash ?? genesisHash };
    // What a run that stopped midway chained: a contiguous run just above the head.
    const stranded = await records
      .find({ sequence: { $gt: current.sequence } })
      .sort({ sequence: 1 })
      .toArray();
    for (const record of stranded) {
      if (record.sequence !== current.sequence + 1 || record.prevHash !== current.hash) {
        throw new Error(`impersonation audit sequence ${current.sequence + 1} is missing or broken; chaining stops until it is repaired`);
      }
      current = { sequence: record.sequence, hash: record.hash! };
    }
    return current;
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
    const due = await records
      .find({ chainDue: { $lte: new Date(Date.now() - settleMs) } })
      .sort({ chainDue: 1, createdAt: 1, _id: 1 })
      .limit(batch.size)
      .toArray();
    if (due.length > 0) {
      const announced = due.flatMap((record) => {
        // A record from before there were events (adopted, due at the epoch) is chained, not announced days late.
        const announcement = record.chainDue?.getTime() === 0 ? undefined : announcementOf(record);
        const clientId = record.kind === 'subject_token.issued' ? record.issuerClientId : record.clientId;
        return announcement
          ? [
              {
                // Derived from the record (a repeat is a no-op), one way: an exchange record's id is made from its subject token's hash.
                id: `imp-${createHash('sha256').update(record._id).digest('base64url').slice(0, 24)}`,
                ...announcement,
                ...(record.impersonationId !== undefined && { impersonationId: record.impersonationId }),
                ...(clientId && { clientId }),
              },
            ]
          : [];
      });
      await options.announce(announced);
      const writes: Array<AnyBulkWriteOperation<ImpersonationEvent>> = due.map((record) => {
        const sequence = current.sequence + 1;
        const hash = recordHash({ ...auditView(record), sequence, prevHash: current.hash });
        const update = {
          filter: { _id: record._id, chainDue: { $type: 'date' as const } },
          update: { $set: { sequence, prevHash: current.hash, hash }, $unset: { chainDue: '' as const } },
        };
        current = { sequence, hash };
        return { updateOne: update };
      });
      await records.bulkWrite(writes, { ordered: true });
      await ledger.updateOne({ _id: 'head' }, { $set: { sequence: current.sequence, hash: current.hash } }, { upsert: true });
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
