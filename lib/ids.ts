import { createHash, randomBytes, randomInt } from 'node:crypto';

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A random lower-case alphanumeric id (21 characters: about 108 bits), as Logto's ids look. */
export function generateId(length = 21): string {
  let id = '';
  for (let i = 0; i < length; i += 1) id += alphabet[randomInt(alphabet.length)];
  return id;
}

/** A secret of 256 random bits, base64url. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
