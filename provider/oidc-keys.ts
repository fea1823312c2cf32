import { createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
import type { Db } from 'mongodb';

import { ApiError, assertThat } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';
import { generateCookieKey, generateSigningKey, keyTypes, publicJwks, type KeyFamily, type StoredSecrets } from './keys.js';

/** Logto's names for the provider's signing keys and its cookie keys. */
export type OidcKeyType = 'private-keys' | 'cookie-keys';

/** A key as the Management API shows it: never its material. */
export interface OidcKeyInfo {
  id: string;
  createdAt: number;
  /** Private keys: the key family, as Logto names it (`EC`, `RSA`), and ours (`OKP` for EdDSA). */
  signingKeyAlgorithm?: KeyFamily;
  alg?: string;
  /** `current` signs (or, for cookies, signs new cookies); `previous` only verifies. */
  status: 'current' | 'previous';
}

/** A cookie key's id: part of its hash, never the key. */
export const cookieKeyId = (key: string) => sha256(key).slice(0, 16);
/** How many keys of one algorithm (or cookie keys) are kept: the one in use and the one before, as Logto does. */
const kept = 2;

/**
 * The provider's signing and cookie keys as one ring every part reads from: oidc-provider (through
 * `apply`), the Management API's token check and the actor-token check (`getKey`), and the cookie
 * signers (`cookieKeys`, one array changed in place). Rotation and deletion write the database
 * under a version condition (a concurrent change is a 409) and then `reload()`; other processes
 * reload when the ring's cache generation moves, within their refresh interval.
 */
export function createKeyRing(db: Db, initial: { signing: JWK[]; cookies: string[] }) {
  const system = db.collection<StoredSecrets>('system');
  const signing: JWK[] = [...initial.signing];
  const cookieKeys: string[] = [...initial.cookies];
  let verify = createLocalJWKSet(publicJwks(signing));
  /** The stored versions the ring holds (bumped by every rotation and deletion). */
  const loaded = { signing: 0, cookies: 0 };
  const listeners: Array<(jwks: { keys: JWK[] }) => void> = [];

  const documentOf = async (type: OidcKeyType) => (await system.findOne({ _id: type === 'private-keys' ? 'signing' : 'cookies' }))!;

  function describe(type: OidcKeyType, stored: StoredSecrets): OidcKeyInfo[] {
    const createdAt = (id: string) => stored.created?.[id] ?? stored.createdAt.getTime();
    if (type === 'cookie-keys') {
      return (stored.keys as string[]).map((key, index) => ({
        id: cookieKeyId(key),
        createdAt: createdAt(cookieKeyId(key)),
        status: index === 0 ? 'current' : 'previous',
      }));
    }
    const seen = new Set<string>();
    return (stored.keys as JWK[]).map(({ kid, kty, alg }) => {
      const first = !seen.has(alg!);
      seen.add(alg!);
      return { id: kid!, createdAt: createdAt(kid!), signingKeyAlgorithm: kty as KeyFamily, alg: alg, status: first ? 'current' : 'previous' };
    });
  }

  /** Writes the new key list if nobody changed it since it was read. */
  async function replace(stored: StoredSecrets, keys: JWK[] | string[], created: Record<string, number>) {
    const version = stored.version ?? 0;
    const { modifiedCount } = await system.updateOne(
      { _id: stored._id, ...(version === 0 ? { $or: [{ version: { $exists: false } }, { version: 0 }] } : { version }) },
      { $set: { keys, created, version: version + 1 } },
    );
    assertThat(modifiedCount === 1, () => new ApiError('request.conflict', 'the keys were changed at the same time; read them again and retry'));
  }

  const ring = {
    cookieKeys,
    /** For jose's `jwtVerify`: the public keys of the ring as it is now. */
    getKey: ((header, token) => verify(header, token)) as JWTVerifyGetKey,
    jwks: () => ({ keys: [...signing] }),
    /** Called with the private JWKS whenever the ring changes (to hand it to oidc-provider). */
    onChange(listener: (jwks: { keys: JWK[] }) => void) {
      listeners.push(listener);
    },

    async reload() {
      const [signed, cookies] = await Promise.all([documentOf('private-keys'), documentOf('cookie-keys')]);
      // Reloads may overlap (a rotation's own, and the periodic one that saw another process's
      // change): one that read an older version than the ring holds must not put its keys back.
      const signedVersion = signed.version ?? 0;
      const cookiesVersion = cookies.version ?? 0;
      if (signedVersion >= loaded.signing) {
        loaded.signing = signedVersion;
        signing.splice(0, signing.length, ...(signed.keys as JWK[]));
        verify = createLocalJWKSet(publicJwks(signing));
        for (const listener of listeners) listener({ keys: [...signing] });
      }
      if (cookiesVersion >= loaded.cookies) {
        loaded.cookies = cookiesVersion;
        cookieKeys.splice(0, cookieKeys.length, ...(cookies.keys as string[]));
      }
    },

    async list(type: OidcKeyType): Promise<OidcKeyInfo[]> {
      return describe(type, await documentOf(type));
    },

    /** A new key that signs from now on; the one it replaces stays, to verify, until deleted or rotated out. */
    async rotate(type: OidcKeyType, family?: KeyFamily): Promise<OidcKeyInfo[]> {
      const stored = await documentOf(type);
      const created = { ...stored.created };
      const now = Date.now();
      let keys: JWK[] | string[];
      if (type === 'cookie-keys') {
        const key = generateCookieKey();
        created[cookieKeyId(key)] = now;
        keys = [key, ...(stored.keys as string[])].slice(0, kept);
      } else {
        const fresh = await Promise.all(keyTypes.filter(({ kty }) => !family || kty === family).map(generateSigningKey));
        for (const { kid } of fresh) created[kid!] = now;
        const all = [...fresh, ...(stored.keys as JWK[])];
        // At most `kept` keys of each algorithm, newest first.
        keys = all.filter((key, index) => all.slice(0, index).filter(({ alg }) => alg === key.alg).length < kept);
      }
      await replace(stored, keys, created);
      await ring.reload();
      return describe(type, { ...stored, keys, created });
    },

    /** Deletes a key that no longer signs. The last key, and a key in use, stay (422). */
    async remove(type: OidcKeyType, id: string): Promise<void> {
      const stored = await documentOf(type);
      const listed = describe(type, stored);
      const index = listed.findIndex((key) => key.id === id);
      assertThat(listed.length > 1, () => new ApiError('oidc.key_required', 'the last key cannot be deleted; rotate first'));
      assertThat(index >= 0, () => new ApiError('oidc.key_not_found', `no ${type === 'private-keys' ? 'private' : 'cookie'} key has id \`${id}\``, { id }));
      assertThat(
        listed[index].status === 'previous',
        () => new ApiError('oidc.only_previous_key_can_be_deleted', 'this key is in use; rotate first, then delete it'),
      );
      const keys = (stored.keys as Array<JWK | string>).filter((_key, position) => position !== index) as JWK[] | string[];
      const { [id]: _gone, ...created } = stored.created ?? {};
      await replace(stored, keys, created);
      await ring.reload();
    },
  };
  return ring;
}

export type KeyRing = ReturnType<typeof createKeyRing>;
