import { createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
import type { Db } from 'mongodb';

import type { Clock } from '../lib/clock.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { sha256 } from '../lib/ids.js';
import { algOfFamily, generateCookieKey, generateSigningKey, keyTypes, publicJwks, type KeyFamily, type KeyGeneration, type StoredSecrets } from './keys.js';
import { kept, servedKeys, standingSets, type KeyStatus } from './key-sets.js';

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
  /**
   * `current` signs (or, for cookies, signs new cookies); `previous` only verifies; `next` (a
   * staged rotation's set) is published for verifiers to fetch ahead, and signs from `activatesAt`.
   */
  status: KeyStatus;
  /** A `next` set: when it becomes current (epoch milliseconds). */
  activatesAt?: number;
}

/** A cookie key's id: part of its hash, never the key. */
export const cookieKeyId = (key: string) => sha256(key).slice(0, 16);

/**
 * The provider's signing and cookie keys as one ring every part reads from: oidc-provider (through
 * `apply`), the Management API's token check and the actor-token check (`getKey`), and the cookie
 * signers (`cookieKeys`, one array changed in place). Rotation and deletion write the database
 * under a version condition (a concurrent change is a 409) and then `reload()`; other processes
 * reload when the ring's cache generation moves, within their refresh interval.
 */
export function createKeyRing(
  db: Db,
  initial: { signing: JWK[]; cookies: string[] },
  { family = 'EC', clock }: { family?: KeyFamily; clock?: Pick<Clock, 'now' | 'wait'> } = {},
) {
  const system = db.collection<StoredSecrets>('system');
  const now = () => clock?.now().getTime() ?? Date.now();
  const signing: JWK[] = [...initial.signing];
  /** The signing document as last loaded; until the first load, one of the initial keys. */
  let stored: Pick<StoredSecrets, 'keys' | 'generations' | 'created' | 'createdAt' | 'nextAt'> = { keys: initial.signing, createdAt: new Date() };
  /** The key sets as they stood when the ring was last applied, newest first. */
  let standing = standingSets(stored, family, now());
  const cookieKeys: string[] = [...initial.cookies];
  let verify = createLocalJWKSet(publicJwks(signing));
  /** The stored versions the ring holds (bumped by every rotation and deletion). */
  const loaded = { signing: 0, cookies: 0 };
  const listeners: Array<(jwks: { keys: JWK[] }) => void> = [];
  /** The wait for a staged set's time, when one is pending. */
  let activation: { cancel(): void } | undefined;

  const documentOf = async (type: OidcKeyType) => (await system.findOne({ _id: type === 'private-keys' ? 'signing' : 'cookies' }))!;

  function describe(type: OidcKeyType, document: StoredSecrets): OidcKeyInfo[] {
    const createdAt = (id: string) => document.created?.[id] ?? document.createdAt.getTime();
    if (type === 'cookie-keys') {
      return (document.keys as string[]).map((key, index) => ({
        id: cookieKeyId(key),
        createdAt: createdAt(cookieKeyId(key)),
        status: index === 0 ? 'current' : 'previous',
      }));
    }
    const algOf = new Map((document.keys as JWK[]).map(({ kid, alg }) => [kid!, alg!]));
    return standingSets(document, family, now()).map((set) => ({
      id: set.id,
      createdAt: set.createdAt,
      signingKeyAlgorithm: set.family,
      alg: algOfFamily(set.family),
      keys: set.kids.map((kid) => ({ id: kid, alg: algOf.get(kid)! })),
      status: set.status,
      ...(set.status === 'next' && { activatesAt: document.nextAt! }),
    }));
  }

  /** Writes the new key list if nobody changed it since it was read. */
  async function replace(
    document: StoredSecrets,
    keys: JWK[] | string[],
    created: Record<string, number>,
    sets?: { generations: KeyGeneration[]; nextAt?: number },
  ) {
    const version = document.version ?? 0;
    const { modifiedCount } = await system.updateOne(
      { _id: document._id, ...(version === 0 ? { $or: [{ version: { $exists: false } }, { version: 0 }] } : { version }) },
      {
        $set: {
          keys,
          created,
          version: version + 1,
          ...(sets && { generations: sets.generations }),
          ...(sets?.nextAt !== undefined && { nextAt: sets.nextAt }),
        },
        ...(sets && sets.nextAt === undefined && { $unset: { nextAt: '' } }),
      },
    );
    assertThat(modifiedCount === 1, () => new ApiError('request.conflict', 'the keys were changed at the same time; read them again and retry'));
  }

  /** The loaded document's keys as they stand now, to the provider and our verifier; and a wait for a staged set's time. */
  function apply() {
    standing = standingSets(stored, family, now());
    signing.splice(0, signing.length, ...servedKeys(stored.keys as JWK[], standing));
    verify = createLocalJWKSet(publicJwks(signing));
    for (const listener of listeners) listener({ keys: [...signing] });
    activation?.cancel();
    activation = undefined;
    if (standing[0]?.status === 'next' && clock) {
      // A timer fires at most about 24.8 days ahead; a longer wait is taken in steps.
      const wait = clock.wait(Math.min(stored.nextAt! - now(), 2 ** 31 - 1));
      let cancelled = false;
      activation = {
        cancel() {
          cancelled = true;
          wait.cancel();
        },
      };
      void wait.done.then(() => {
        if (!cancelled) apply();
      });
    }
  }

  const ring = {
    cookieKeys,
    /** For jose's `jwtVerify`: the public keys of the ring as it is now. */
    getKey: ((header, token) => verify(header, token)) as JWTVerifyGetKey,
    jwks: () => ({ keys: [...signing] }),
    /** The algorithm access tokens are signed with: that of the family the current key set was made for. */
    signingAlg: () => algOfFamily(standing.find(({ status }) => status === 'current')?.family ?? family),
    /** Called with the private JWKS whenever the ring changes (to hand it to oidc-provider). */
    onChange(listener: (jwks: { keys: JWK[] }) => void) {
      listeners.push(listener);
    },
    /** Ends the wait for a staged set (at shutdown). */
    stop() {
      activation?.cancel();
      activation = undefined;
    },

    async reload() {
      const [signed, cookies] = await Promise.all([documentOf('private-keys'), documentOf('cookie-keys')]);
      // Reloads may overlap (a rotation's own, and the periodic one that saw another process's
      // change): one that read an older version than the ring holds must not put its keys back.
      const signedVersion = signed.version ?? 0;
      const cookiesVersion = cookies.version ?? 0;
      if (signedVersion >= loaded.signing) {
        loaded.signing = signedVersion;
        stored = signed;
        apply();
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
     * `signingKeyAlgorithm`, `EC` unless given), whose algorithm then signs access tokens. With a
     * grace period (seconds, private keys only) the set is staged: published at once, signing from
     * then on; a second staged rotation replaces a staged set that has not begun to sign, and an
     * immediate one waits for it (422).
     */
    async rotate(type: OidcKeyType, asked: KeyFamily = 'EC', gracePeriod = 0): Promise<OidcKeyInfo[]> {
      const document = await documentOf(type);
      const created = { ...document.created };
      const at = now();
      if (type === 'cookie-keys') {
        const key = generateCookieKey();
        created[cookieKeyId(key)] = at;
        const keys = [key, ...(document.keys as string[])].slice(0, kept);
        await replace(document, keys, created);
        await ring.reload();
        return describe(type, { ...document, keys, created });
      }
      const sets = standingSets(document, family, at);
      const next = sets.find(({ status }) => status === 'next');
      assertThat(
        gracePeriod > 0 || !next,
        () =>
          new ApiError(
            'oidc.invalid_request',
            `a staged key set becomes current at ${new Date(document.nextAt!).toISOString()}; rotate with a grace period to replace it, or wait`,
          ),
      );
      // The asked family's key first, so that the set is named by it.
      const fresh = await Promise.all([...keyTypes].sort((a, b) => Number(b.kty === asked) - Number(a.kty === asked)).map(generateSigningKey));
      for (const { kid } of fresh) created[kid!] = at;
      const set: KeyGeneration = { id: fresh[0]!.kid!, family: asked, createdAt: at, kids: fresh.map(({ kid }) => kid!) };
      // Newest first: a staged set before the current one and its previous; else the new set and the one it replaces.
      const settled = sets.filter(({ status }) => status !== 'next');
      const generations = (gracePeriod > 0 ? [set, ...settled.slice(0, kept)] : [set, ...settled].slice(0, kept)).map(
        ({ id, family: of, createdAt, kids }) => ({
          id,
          family: of,
          createdAt,
          kids,
        }),
      );
      const nextAt = gracePeriod > 0 ? at + gracePeriod * 1000 : undefined;
      const keptKids = new Set(generations.flatMap(({ kids }) => kids));
      const keys = [...fresh, ...(document.keys as JWK[]).filter(({ kid }) => keptKids.has(kid!))];
      const keptCreated = Object.fromEntries(Object.entries(created).filter(([kid]) => keptKids.has(kid)));
      await replace(document, keys, keptCreated, { generations, nextAt });
      await ring.reload();
      return describe(type, { ...document, keys, created: keptCreated, generations, nextAt });
    },

    /** Deletes a key (a private key's whole set, named by any of its keys) that no longer signs. The last key, a key in use and a staged one stay (422). */
    async remove(type: OidcKeyType, id: string): Promise<void> {
      const document = await documentOf(type);
      const listed = describe(type, document);
      const index = listed.findIndex((key) => key.id === id || key.keys?.some((member) => member.id === id));
      assertThat(listed.length > 1, () => new ApiError('oidc.key_required', 'the last key cannot be deleted; rotate first'));
      assertThat(index >= 0, () => new ApiError('oidc.key_not_found', `no ${type === 'private-keys' ? 'private' : 'cookie'} key has id \`${id}\``, { id }));
      assertThat(
        listed[index]!.status === 'previous',
        () =>
          new ApiError(
            'oidc.only_previous_key_can_be_deleted',
            listed[index]!.status === 'next'
              ? 'this key set is staged to sign; rotate again to replace it'
              : 'this key is in use; rotate first, then delete it',
          ),
      );
      if (type === 'private-keys') {
        const sets = standingSets(document, family, now()).filter((_set, position) => position !== index);
        const pending = sets[0]?.status === 'next';
        const generations = sets.map(({ id: setId, family: of, createdAt, kids }) => ({ id: setId, family: of, createdAt, kids }));
        const keptKids = new Set(generations.flatMap(({ kids }) => kids));
        const keys = (document.keys as JWK[]).filter(({ kid }) => keptKids.has(kid!));
        const created = Object.fromEntries(Object.entries(document.created ?? {}).filter(([kid]) => keptKids.has(kid)));
        await replace(document, keys, created, { generations, nextAt: pending ? document.nextAt : undefined });
        await ring.reload();
        return;
      }
      const keys = (document.keys as Array<JWK | string>).filter((_key, position) => position !== index) as JWK[] | string[];
      const { [id]: _gone, ...created } = document.created ?? {};
      await replace(document, keys, created);
      await ring.reload();
    },
  };
  return ring;
}

export type KeyRing = ReturnType<typeof createKeyRing>;
