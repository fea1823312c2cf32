import { randomInt, timingSafeEqual } from 'node:crypto';

import { sha256 } from '../ids.js';

/** Ten codes of ten characters from an alphabet without look-alikes (about 50 bits each). */
const count = 10;
const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';

export function newBackupCodes(): string[] {
  return Array.from({ length: count }, () => Array.from({ length: 10 }, () => alphabet[randomInt(alphabet.length)]).join(''));
}

export const hashBackupCode = (code: string) => sha256(code.trim().toLowerCase().replaceAll('-', ''));

/** The index of the unused code that `given` is, or -1. */
export function matchBackupCode(codes: Array<{ hash: string; usedAt: string | null }>, given: string): number {
  const hash = Buffer.from(hashBackupCode(given));
  return codes.findIndex(({ hash: stored, usedAt }) => usedAt === null && stored.length === hash.length && timingSafeEqual(Buffer.from(stored), hash));
}
