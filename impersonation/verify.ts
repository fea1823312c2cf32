import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';

import { checkpointType, genesisHash, recordHash, type CheckpointClaims } from './chain.js';

/** One audit record as `GET /api/impersonations` answers it. */
export type AuditRecord = Record<string, unknown> & { id: string; sequence?: number; prevHash?: string; hash?: string };

export interface AuditVerification {
  ok: boolean;
  /** What is wrong, each naming the sequence or record it found it at. */
  problems: string[];
  /** Records checked (chained ones); records not chained yet are left out and counted apart. */
  checked: number;
  unchained: number;
  /** The highest sequence a valid checkpoint vouches for (0 if none): records after it are not protected against removal from the end. */
  checkpointed: number;
}

/**
 * Proves offline, with the provider's public keys, that no audit record was changed, removed or
 * inserted: every chained record must hash to its `hash`, follow the one before it (`prevHash`,
 * sequences 1, 2, 3, ... with no gap), and every checkpoint (a JWS the provider signed over a
 * sequence and the hash there) must verify and match the record at its sequence. Removing the
 * newest records is caught up to the newest checkpoint. `records` in any order; `checkpoints` as
 * `GET /api/impersonations/checkpoints` answers them (their `jws`) or the JWS strings alone.
 */
export async function verifyImpersonationAudit(
  records: AuditRecord[],
  checkpoints: Array<string | { jws: string }>,
  jwks: JSONWebKeySet,
  { issuer }: { issuer?: string } = {},
): Promise<AuditVerification> {
  const problems: string[] = [];
  const chained = records.filter((record) => record.sequence !== undefined).sort((a, b) => a.sequence! - b.sequence!);
  const bySequence = new Map<number, AuditRecord>();
  let previous = genesisHash;
  for (const [index, record] of chained.entries()) {
    const expected = index + 1;
    if (record.sequence !== expected) {
      problems.push(`sequence ${expected} is missing (found ${record.sequence} next): a record was removed or one inserted`);
      // Carry on from where the chain now is, to report what else is wrong.
    }
    if (bySequence.has(record.sequence!)) problems.push(`sequence ${record.sequence} appears twice`);
    bySequence.set(record.sequence!, record);
    if (record.prevHash !== previous) problems.push(`record ${record.id} (sequence ${record.sequence}) does not follow the record before it`);
    if (recordHash(record) !== record.hash) problems.push(`record ${record.id} (sequence ${record.sequence}) was changed: its hash does not match`);
    previous = record.hash ?? '';
  }

  const keys = createLocalJWKSet(jwks);
  let checkpointed = 0;
  for (const checkpoint of checkpoints) {
    const jws = typeof checkpoint === 'string' ? checkpoint : checkpoint.jws;
    let claims: CheckpointClaims;
    try {
      const { payload, protectedHeader } = await compactVerify(jws, keys);
      if (protectedHeader.typ !== checkpointType) throw new Error(`typ is ${String(protectedHeader.typ)}`);
      claims = JSON.parse(new TextDecoder().decode(payload)) as CheckpointClaims;
      if (issuer !== undefined && claims.iss !== issuer) throw new Error(`issued by ${claims.iss}`);
    } catch (error) {
      problems.push(`a checkpoint does not verify: ${(error as Error).message}`);
      continue;
    }
    const at = bySequence.get(claims.sequence);
    if (!at) problems.push(`checkpoint at sequence ${claims.sequence}: that record is missing (records were removed)`);
    else if (at.hash !== claims.hash) problems.push(`checkpoint at sequence ${claims.sequence}: the chain there differs from what was signed`);
    else checkpointed = Math.max(checkpointed, claims.sequence);
  }
  return { ok: problems.length === 0, problems, checked: chained.length, unchained: records.length - chained.length, checkpointed };
}
