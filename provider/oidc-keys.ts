import { createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
import type { Db } from 'mongodb';

import { ApiError, assertThat } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';
import { algOfFamily, generateCookieKey, generateSigningKey, keyTypes, publicJwks, type KeyFamily, type KeyGeneration, type StoredSecrets } from './keys.js';

/** Logto's names for the provider's signing keys and its cookie keys. */
export type OidcKeyType = 'private-keys' | 'cookie-keys';

/**
 * A key as the Management API shows it: never its material. A private key is a key set (one
 * rotation's keys, `keys`), named by the key of the family it was made for.
 */
export interface OidcKeyInfo {
  id: string;
  createdAt: number;
  /** Private keys: the family the set was made for, as Logto names it (`EC`, `RSA`), or ours (`OKP` for EdDSA). */
  signingKeyAlgorithm?: KeyFamily;
  /** Private keys: that family's algorithm, which access tokens are signed with while the set is current. */
  alg?: string;
  /** Private keys: every key of the set, one per algorithm we offer (ID tokens use the one their client asks for). */
  keys?: Array<{ id: string; alg: string }>;
  /** `current` signs (or, for cookies, signs new cookies); `previous` only verifies. */
  status: 'current' | 'previous';
}

/**
 * The key sets of a stored document, newest first. A document from before sets were kept has its
 * keys in order, per algorithm the one in use first: its first key of each algorithm is one set,
 * the second of each another.
 */
function generationsOf(stored: Pick<StoredSecrets, 'keys' | 'generations' | 'created' | 'createdAt'>, family: KeyFamily): KeyGeneration[] {
  if (stored.generations) return stored.generations;
  const sets: JWK[][] = [];
  for (const key of stored.keys as JWK[]) {
    const index = sets.findIndex((set) => !set.some(({ alg }) => alg === key.alg));
    if (index >= 0) sets[index]!.push(key);
    else sets.push([key]);
  }
  return sets.map((set) => {
    const named = set.find(({ kty }) => kty === family) ?? set[0]!;
    return {
      id: named.kid!,
      family: named.kty as KeyFamily,
      createdAt: stored.created?.[named.kid!] ?? stored.createdAt.getTime(),
      kids: set.map(({ kid }) => kid!),
    };
  });
}

/** A cookie key's id: part of its hash, never the key. */
export const cookieKeyId = (key: string) => sha256(key).slice(0, 16);
/** How many key sets (or cookie keys) are kept: the one in use and the one before, as Logto does. */
const kept = 2;

/**
 * The provider's signing and cookie keys as one ring every part reads from: oidc-provider (through
 * `apply`), the Management API's token check and the actor-token check (`getKey`), and the cookie
 * signers (`cookieKeys`, one array changed in place). Rotation and deletion write the database
 * under a version condition (a concurrent change is a 409) and then `reload()`; other processes
 * reload when the ring's cache generation moves, within their refresh interval.
 */
export function createKeyRing(db: Db, initial: { signing: JWK[]; cookies: string[] }, { family = 'EC' }: { family?: KeyFamily } = {}) {
  const system = db.collection<StoredSecrets>('system');
  const signing: JWK[] = [...initial.signing];
  /** The key sets as loaded, newest first; until the first load, those of the initial keys. */
  let generations = generationsOf({ keys: initial.signing, createdAt: new Date() }, family);
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
    const algOf = new Map((stored.keys as JWK[]).map(({ kid, alg }) => [kid!, alg!]));
    return generationsOf(stored, family).map((set, index) => ({
      id: set.id,
      createdAt: set.createdAt,
      signingKeyAlgorithm: set.family,
      alg: algOfFamily(set.family),
      keys: set.kids.map((kid) => ({ id: kid, alg: algOf.get(kid)! })),
      status: index === 0 ? 'current' : 'previous',
    }));
  }

  /** Writes the new key list if nobody changed it since it was read. */
  async function replace(stored: StoredSecrets, keys: JWK[] | string[], created: Record<string, number>, sets?: KeyGeneration[]) {
    const version = stored.version ?? 0;
    const { modifiedCount } = await system.updateOne(
      { _id: stored._id, ...(version === 0 ? { $or: [{ version: { $exists: false } }, { version: 0 }] } : { version }) },
      { $set: { keys, created, version: version + 1, ...(sets && { generations: sets }) } },
    );
    assertThat(modifiedCount === 1, () => new ApiError('request.conflict', 'the keys were changed at the same time; read them again and retry'));
  }

  const ring = {
    cookieKeys,
    /** For jose's `jwtVerify`: the public keys of the ring as it is now. */
    getKey: ((header, token) => verify(header, token)) as JWTVerifyGetKey,
    jwks: () => ({ keys: [...signing] }),
    /** The algorithm access tokens are signed with: that of the family the current key set was made for. */
    signingAlg: () => algOfFamily(generations[0]?.family ?? family),
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
        generations = generationsOf(signed, family);
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

    /**
     * New keys that sign from now on; the ones they replace stay, to verify, until deleted or
     * rotated out. Private keys: a new key set, one key per algorithm, made for `asked` (Logto's
     * `signingKeyAlgorithm`, `EC` unless given), whose algorithm then signs access tokens.
     */
    async rotate(type: OidcKeyType, asked: KeyFamily = 'EC'): Promise<OidcKeyInfo[]> {
      const stored = await documentOf(type);
      const created = { ...stored.created };
      const now = Date.now();
      let keys: JWK[] | string[];
      if (type === 'cookie-keys') {
        const key = generateCookieKey();
        created[cookieKeyId(key)] = now;
        keys = [key, ...(stored.keys as string[])].slice(0, kept);
      } else {
        // The asked family's key first, so that the set is named by it.
        const fresh = await Promise.all([...keyTypes].sort((a, b) => Number(b.kty === asked) - Number(a.kty === asked)).map(generateSigningKey));
        for (const { kid } of fresh) created[kid!] = now;
        const set: KeyGeneration = { id: fresh[0]!.kid!, family: asked, createdAt: now, kids: fresh.map(({ kid }) => kid!) };
        // At most `kept` sets, newest first, with their keys: the new one signs, the one before verifies.
        const sets = [set, ...generationsOf(stored, family)].slice(0, kept);
        const keptKids = new Set(sets.flatMap(({ kids }) => kids));
        keys = [...fresh, ...(stored.keys as JWK[]).filter(({ kid }) => keptKids.has(kid!))];
        await replace(stored, keys, created, sets);
        await ring.reload();
        return describe(type, { ...stored, keys, created, generations: sets });
      }
      await replace(stored, keys, created);
      await ring.reload();
      return describe(type, { ...stored, keys, created });
    },

    /** Deletes a key (a private key's whole set, named by any of its keys) that no longer signs. The last key, and a key in use, stay (422). */
    async remove(type: OidcKeyType, id: string): Promise<void> {
      const stored = await documentOf(type);
      const listed = describe(type, stored);
      const index = listed.findIndex((key) => key.id === id || key.keys?.some((member) => member.id === id));
      assertThat(listed.length > 1, () => new ApiError('oidc.key_required', 'the last key cannot be deleted; rotate first'));
      assertThat(index >= 0, () => new ApiError('oidc.key_not_found', `no ${type === 'private-keys' ? 'private' : 'cookie'} key has id \`${id}\``, { id }));
      assertThat(
        listed[index]!.status === 'previous',
        () => new ApiError('oidc.only_previous_key_can_be_deleted', 'this key is in use; rotate first, then delete it'),
      );
      if (type === 'private-keys') {
        const sets = generationsOf(stored, family).filter((_set, position) => position !== index);
        const gone = new Set(listed[index]!.keys!.map((member) => member.id));
        const keys = (stored.keys as JWK[]).filter(({ kid }) => !gone.has(kid!));
        const created = Object.fromEntries(Object.entries(stored.created ?? {}).filter(([kid]) => !gone.has(kid)));
        await replace(stored, keys, created, sets);
        await ring.reload();
        return;
      }
      const keys = (stored.keys as Array<JWK | string>).filter((_key, position) => position !== index) as JWK[] | string[];
      const { [id]: _gone, ...created } = stored.created ?? {};
      await replace(stored, keys, created);
      await ring.reload();
    },
  };
  return ring;
}

export type KeyRing = ReturnType<typeof createKeyRing>;
