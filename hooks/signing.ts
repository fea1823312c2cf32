import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

import type { SigningKey, SigningKeyPair } from './models.js';

const prefix = 'whsec_';
/** Standard Webhooks' names for an Ed25519 key pair: the secret key (seed and public key, 64 bytes) and the public key (32 bytes), base64. */
const secretKeyPrefix = 'whsk_';
const publicKeyPrefix = 'whpk_';
/** The DER headers that wrap a raw Ed25519 seed (PKCS #8) and public key (SPKI), RFC 8410. */
const pkcs8Ed25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiEd25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function generateSigningKey(): string {
  return `${prefix}${randomBytes(32).toString('base64')}`;
}

/** The keys that sign now: the newest, and any rotated out whose overlap has not ended. */
export function activeKeys(keys: SigningKey[], now = new Date()): string[] {
  return keys.filter(({ expiresAt }) => expiresAt === null || expiresAt > now).map(({ key }) => key);
}

/** A new Ed25519 key pair for `v1a` signatures, in Standard Webhooks' encoding (`whsk_`, `whpk_`). */
export function generateSigningKeyPair(): { secretKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(spkiEd25519.length);
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(pkcs8Ed25519.length);
  return {
    secretKey: `${secretKeyPrefix}${Buffer.concat([seed, raw]).toString('base64')}`,
    publicKey: `${publicKeyPrefix}${raw.toString('base64')}`,
  };
}

/** Parsed secret keys, so that each delivery does not parse its hook's key again (bounded: cleared when full). */
const secretKeyObjects = new Map<string, KeyObject>();

/** The key object of a `whsk_` secret key (its first 32 bytes are the seed). */
function secretKeyObject(secretKey: string): KeyObject {
  let key = secretKeyObjects.get(secretKey);
  if (!key) {
    const seed = Buffer.from(secretKey.slice(secretKeyPrefix.length), 'base64').subarray(0, 32);
    key = createPrivateKey({ key: Buffer.concat([pkcs8Ed25519, seed]), format: 'der', type: 'pkcs8' });
    if (secretKeyObjects.size >= 1000) secretKeyObjects.clear();
    secretKeyObjects.set(secretKey, key);
  }
  return key;
}

/** The key object of a `whpk_` public key. */
export function publicKeyObject(publicKey: string): KeyObject {
  const raw = Buffer.from(publicKey.slice(publicKeyPrefix.length), 'base64');
  return createPublicKey({ key: Buffer.concat([spkiEd25519, raw]), format: 'der', type: 'spki' });
}

/** The key pairs that sign now: the newest, and any rotated out whose overlap has not ended. */
export function activeKeyPairs(pairs: SigningKeyPair[] = [], now = new Date()): SigningKeyPair[] {
  return pairs.filter(({ expiresAt }) => expiresAt === null || expiresAt > now);
}

/**
 * The `webhook-signature` header (Standard Webhooks): `v1,<base64 HMAC-SHA256>` of
 * `<id>.<timestamp>.<body>` under each active secret, and `v1a,<base64 Ed25519 signature>` of the
 * same bytes under each active key pair, space-separated, so that a receiver holding either the
 * old or the new key during a rotation accepts the message.
 */
export function signatureHeader(keys: string[], id: string, timestamp: number, body: Buffer, pairs: SigningKeyPair[] = []): string {
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  const symmetric = keys.map(
    (key) =>
      `v1,${createHmac('sha256', Buffer.from(key.slice(prefix.length), 'base64'))
        .update(signed)
        .digest('base64')}`,
  );
  const asymmetric = pairs.map(({ secretKey }) => `v1a,${sign(null, signed, secretKeyObject(secretKey)).toString('base64')}`);
  return [...symmetric, ...asymmetric].join(' ');
}

/** Logto's own header (`logto-signature-sha-256`): hex HMAC-SHA256 of the body under the key as text. */
export function logtoSignature(key: string, body: Buffer): string {
  return createHmac('sha256', key).update(body).digest('hex');
}
