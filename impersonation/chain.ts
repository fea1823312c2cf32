import { createHash } from 'node:crypto';

/**
 * The impersonation audit's hash chain, shared by the ledger that writes it and the verifier that
 * checks it offline: each record's `hash` is SHA-256 (hex) of its canonical JSON as the API answers
 * it (`GET /api/impersonations`), `hash` left out and `sequence` and `prevHash` in. Canonical JSON
 * here is JSON with every object's keys sorted by code point and no whitespace (the form of
 * RFC 8785 for the strings, numbers and plain objects these records hold).
 */
export const genesisHash = '0'.repeat(64);

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The hash of a record as the API shows it (with `sequence` and `prevHash`; any `hash` it has is left out). */
export function recordHash(record: Record<string, unknown>): string {
  const { hash: _hash, ...hashed } = record;
  return createHash('sha256').update(canonicalJson(hashed)).digest('hex');
}

/** What a checkpoint signs: the chain's head at one sequence. */
export interface CheckpointClaims {
  iss: string;
  sequence: number;
  hash: string;
  iat: number;
}

export const checkpointType = 'impersonation-checkpoint+jwt';
