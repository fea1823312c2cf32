import type { Db } from 'mongodb';

/**
 * Waits until the impersonation ledger has chained every audit record and signed a checkpoint of
 * the chain's head (a test server with `IMPERSONATION_CHECKPOINT_SECONDS=0` signs one every run).
 */
export async function ledgerCaughtUp(db: Db, timeoutMs = 20_000) {
  const records = db.collection<{ sequence?: number }>('impersonations');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await records.countDocuments({ chainDue: { $exists: true } });
    const [head] = await records
      .find({ sequence: { $exists: true } })
      .sort({ sequence: -1 })
      .limit(1)
      .toArray();
    const [checkpoint] = await db.collection<{ sequence: number }>('impersonation_checkpoints').find({}).sort({ sequence: -1 }).limit(1).toArray();
    if (pending === 0 && head && checkpoint?.sequence === head.sequence) return;
    if (Date.now() > deadline) throw new Error('the ledger did not chain and checkpoint the records');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
