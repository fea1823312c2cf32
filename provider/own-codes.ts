import { createHash, timingSafeEqual } from 'node:crypto';

import type { Db } from 'mongodb';
import type Provider from 'oidc-provider';

import type { Clock } from '../lib/clock.js';
import { providerCollection } from './collections.js';

/** Who an authorization code of one of our own applications signed in, and how. */
export interface OwnSignIn {
  accountId: string;
  /** RFC 8176 methods, as the sign-in reported them (`pwd`, `otp`, `hwk`, `mfa`, ...). */
  amr: string[];
  sessionUid?: string | undefined;
}

const sameText = (a: string, b: string) => {
  const [left, right] = [Buffer.from(a), Buffer.from(b)];
  return left.length === right.length && timingSafeEqual(left, right);
};

/**
 * Redeems, in this process, an authorization code issued to one of the service's own applications
 * (the admin console), with the checks of the token endpoint (RFC 6749 §4.1.3): the code is live,
 * it was issued to `clientId` for `redirectUri`, and the PKCE verifier matches its S256 challenge
 * (RFC 7636 §4.6). It is spent by one conditional write, so that of two redemptions only one
 * succeeds. Answers undefined for any failure: the caller only learns that the sign-in did not hold.
 */
export async function redeemOwnCode(
  provider: Provider,
  db: Db,
  clock: Clock,
  { code, clientId, redirectUri, verifier }: { code: string; clientId: string; redirectUri: string; verifier: string },
): Promise<OwnSignIn | undefined> {
  if (code.length > 512) return undefined;
  const found = await provider.AuthorizationCode.find(code);
  if (
    !found ||
    found.isExpired ||
    (found as { consumed?: number }).consumed !== undefined ||
    found.clientId !== clientId ||
    found.redirectUri !== redirectUri ||
    !found.accountId
  )
    return undefined;
  if (found.codeChallengeMethod !== 'S256' || !found.codeChallenge) return undefined;
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  if (!sameText(challenge, found.codeChallenge)) return undefined;
  const spent = await db
    .collection<{ _id: string; consumed?: number; expiresAt?: Date }>(providerCollection('AuthorizationCode'))
    .updateOne(
      { _id: found.jti, consumed: { $exists: false }, expiresAt: { $gt: clock.now() } },
      { $set: { consumed: Math.floor(clock.now().getTime() / 1000) } },
    );
  if (spent.modifiedCount !== 1) return undefined;
  return { accountId: found.accountId, amr: found.amr ?? [], sessionUid: found.sessionUid };
}
