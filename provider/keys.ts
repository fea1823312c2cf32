import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

import { isDuplicateKeyError } from '../lib/errors.js';

/**
 * One signing key per algorithm we offer, by key family (a JWK's `kty`); oidc-provider picks the
 * first key whose `alg` a token asks for.
 */
export const keyTypes = [
  { kty: 'EC', alg: 'ES256', options: {} },
  { kty: 'OKP', alg: 'EdDSA', options: { crv: 'Ed25519' } },
  { kty: 'RSA', alg: 'RS256', options: { modulusLength: 2048 } },
] as const;

export type KeyFamily = (typeof keyTypes)[number]['kty'];

export interface StoredSecrets {
  _id: 'signing' | 'cookies' | 'mfa';
  /** In the order they are used: for each algorithm the first signs, the others only verify. */
  keys: JWK[] | string[];
  createdAt: Date;
  /** When each key was made, by its id (a signing key's `kid`, a cookie key's `cookieKeyId`); older documents have none. */
  created?: Record<string, number>;
  /** Bumped by every rotation and deletion: the condition of the next one. */
  version?: number;
  /** Signing keys only: the key sets, newest first (`provider/oidc-keys.ts`); older documents have none. */
  generations?: KeyGeneration[];
  /** Signing keys only: while in the future, when the first of `generations` (a staged rotation's) begins to sign. */
  nextAt?: number;
}

/**
 * One rotation's signing keys: a key of every algorithm we offer, made together. `family` is the
 * one asked for (Logto's `signingKeyAlgorithm`): access tokens are signed with its algorithm while
 * this set is current; `id` is that key's `kid`.
 */
export interface KeyGeneration {
  id: string;
  family: KeyFamily;
  createdAt: number;
  kids: string[];
}

/** The algorithm of a key family, as `keyTypes` pairs them. */
export const algOfFamily = (family: KeyFamily) => keyTypes.find(({ kty }) => kty === family)!.alg;
/** The family of an algorithm. */
export const familyOfAlg = (alg: string): KeyFamily => keyTypes.find((type) => type.alg === alg)?.kty ?? 'EC';

export async function generateSigningKey({ alg, options }: (typeof keyTypes)[number]): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { ...options, extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

/** A key of every algorithm we offer, made together (a first start's set). */
export async function generateSigningKeys(): Promise<JWK[]> {
  return Promise.all(keyTypes.map(generateSigningKey));
}

export const generateCookieKey = () => randomBytes(32).toString('base64url');

/**
 * Reads a secret set, creating it on first start. Two processes starting at once on an
 * empty database both generate one, but only the first insert wins (unique `_id`), and
 * the loser reads the winner's, so every process ends up with the same keys.
 */
async function loadOrCreate<T extends JWK[] | string[]>(db: Db, id: StoredSecrets['_id'], generate: () => Promise<T>): Promise<T> {
  const collection = db.collection<StoredSecrets>('system');
  const existing = await collection.findOne({ _id: id });
  if (existing) return existing.keys as T;
  const keys = await generate();
  try {
    await collection.insertOne({ _id: id, keys, createdAt: new Date() });
    return keys;
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const winner = await collection.findOne({ _id: id });
    return winner!.keys as T;
  }
}

export interface ProviderSecrets {
  /** Private signing keys, as oidc-provider's `jwks` setting takes them. */
  jwks: { keys: JWK[] };
  /** Keys that sign the provider's cookies. */
  cookieKeys: string[];
  /** The key that seals MFA secrets, unless the host gives its own. */
  mfaKey: Buffer;
}

/**
 * The provider's secrets, each made and stored at the first start. `generateSigning` makes the
 * signing set then (the tests' servers begin with one set made once per run: RSA costs about
 * 240 ms of CPU a key).
 */
export async function loadProviderSecrets(db: Db, generateSigning: () => Promise<JWK[]> = generateSigningKeys): Promise<ProviderSecrets> {
  const [signing, cookieKeys, [mfaKey]] = await Promise.all([
    loadOrCreate(db, 'signing', generateSigning),
    loadOrCreate(db, 'cookies', async () => [generateCookieKey()]),
    loadOrCreate(db, 'mfa', async () => [generateCookieKey()]),
  ]);
  return { jwks: { keys: signing }, cookieKeys, mfaKey: Buffer.from(mfaKey!, 'base64url') };
}

/** The public half of a key set: what the provider publishes and what our own verifier trusts. */
export function publicJwks(keys: JWK[]): { keys: JWK[] } {
  return {
    keys: keys.map(({ kty, crv, x, y, n, e, alg, use, kid }) =>
      Object.fromEntries(Object.entries({ kty, crv, x, y, n, e, alg, use, kid }).filter(([, value]) => value !== undefined)),
    ),
  };
}
