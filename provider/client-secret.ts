import { timingSafeEqual } from 'node:crypto';
import type Provider from 'oidc-provider';

import { replaceClientSecretComparison } from './internals.js';

import type { Clock } from '../lib/clock.js';
import { sha256 } from '../lib/ids.js';
import type { ApplicationSecretDocument } from '../lib/store/models.js';

/**
 * We never keep an application's secret, only its SHA-256. oidc-provider compares the
 * presented secret with the client's `client_secret`, so we give it a marker followed
 * by the hashes of the application's live secrets (several during a rotation), and
 * teach `compareClientSecret` to hash before it compares. A host's own clients, whose
 * `client_secret` has no marker, keep oidc-provider's comparison.
 */
const marker = '$oidc-identity$sha256$';

export function hashedSecretsMetadata(secrets: ApplicationSecretDocument[]): string {
  return marker + secrets.map(({ hash, expiresAt }) => `${hash}:${expiresAt ?? ''}`).join(',');
}

function matchesOneOf(stored: string, actual: string, now: number): boolean {
  const presented = Buffer.from(sha256(actual));
  let matched = false;
  // Walk every entry, so that the time taken does not tell which one matched.
  for (const entry of stored.slice(marker.length).split(',')) {
    const [hash = '', expiresAt = ''] = entry.split(':');
    const candidate = Buffer.from(hash);
    const live = expiresAt === '' || Number(expiresAt) > now;
    if (candidate.length === presented.length && timingSafeEqual(candidate, presented) && live) matched = true;
  }
  return matched;
}

/**
 * Teaches oidc-provider to compare a presented secret with our hashes; a host's own clients keep its
 * comparison. A secret past its `expiresAt` by `clock` matches nothing.
 */
export function installHashedSecretComparison(provider: Provider, clock: Clock): void {
  replaceClientSecretComparison(provider, (client, actual, own) =>
    typeof client.clientSecret === 'string' && client.clientSecret.startsWith(marker)
      ? Promise.resolve(matchesOneOf(client.clientSecret, actual, clock.now().getTime()))
      : own(actual),
  );
}
