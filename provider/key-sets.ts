import type { JWK } from 'jose';

import type { KeyFamily, KeyGeneration, StoredSecrets } from './keys.js';

/**
 * Signing keys as key sets (one rotation's keys, a key of every algorithm): which sets a stored
 * document holds, where each stands at a given time (a staged set, the current one, the previous
 * one), and the keys the provider is given, in the order it picks them. Pure: the ring
 * (`oidc-keys.ts`) reads and writes the document.
 */

/** How many key sets (or cookie keys) are kept: the one in use and the one before, as Logto does. */
export const kept = 2;

export type KeyStatus = 'next' | 'current' | 'previous';
export type StandingSet = KeyGeneration & { status: KeyStatus };

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

/**
 * The key sets as they stand at `now`, newest first. A staged rotation's set (`nextAt` in the
 * future) is `next` and the sets after it keep their places; once its time has come it is current,
 * the one before it previous, and the one before that is no longer served (as an immediate
 * rotation would have left them). No write is needed for that turn: every process reads it from
 * the same document at the same time.
 */
export function standingSets(
  stored: Pick<StoredSecrets, 'keys' | 'generations' | 'created' | 'createdAt' | 'nextAt'>,
  family: KeyFamily,
  now: number,
): StandingSet[] {
  const sets = generationsOf(stored, family);
  const staged = stored.nextAt !== undefined && sets.length > 1;
  if (staged && now < stored.nextAt!) {
    return sets.slice(0, kept + 1).map((set, index) => ({ ...set, status: index === 0 ? 'next' : index === 1 ? 'current' : 'previous' }));
  }
  return (staged ? sets.slice(0, kept) : sets).map((set, index) => ({ ...set, status: index === 0 ? 'current' : 'previous' }));
}

/** The keys the provider holds, in the order it picks them: the current set's first, then a staged set's, then the previous set's. */
export function servedKeys(keys: JWK[], sets: StandingSet[]): JWK[] {
  const rank: Record<KeyStatus, number> = { current: 0, next: 1, previous: 2 };
  const byKid = new Map(keys.map((key) => [key.kid!, key]));
  return [...sets]
    .sort((a, b) => rank[a.status] - rank[b.status])
    .flatMap(({ kids }) => kids.map((kid) => byKid.get(kid)))
    .filter((key): key is JWK => key !== undefined);
}
