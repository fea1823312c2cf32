import { createHmac, randomBytes } from 'node:crypto';

import type { SigningKey } from './models.js';

const prefix = 'whsec_';

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function generateSigningKey(): string {
  return `${prefix}${randomBytes(32).toString('base64')}`;
}

/** The keys that sign now: the newest, and any rotated out whose overlap has not ended. */
export function activeKeys(keys: SigningKey[], now = new Date()): string[] {
  return keys.filter(({ expiresAt }) => expiresAt === null || expiresAt > now).map(({ key }) => key);
}

/**
 * The `webhook-signature` header (Standard Webhooks): `v1,<base64 HMAC-SHA256>` of
 * `<id>.<timestamp>.<body>` under each active key, space-separated, so that a receiver holding
 * either the old or the new key during a rotation accepts the message.
 */
export function signatureHeader(keys: string[], id: string, timestamp: number, body: Buffer): string {
  return keys
    .map((key) => {
      const hmac = createHmac('sha256', Buffer.from(key.slice(prefix.length), 'base64'));
      return `v1,${hmac.update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
    })
    .join(' ');
}

/** Logto's own header (`logto-signature-sha-256`): hex HMAC-SHA256 of the body under the key as text. */
export function logtoSignature(key: string, body: Buffer): string {
  return createHmac('sha256', key).update(body).digest('hex');
}
