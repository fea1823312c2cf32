import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from '@simplewebauthn/server';

import { onFirstUse } from '../on-first-use.js';
import type { WebAuthnFactor } from './model.js';

/** SimpleWebAuthn, loaded at the first passkey ceremony (a third of a start's loading otherwise). */
const simpleWebAuthn = onFirstUse(() => import('@simplewebauthn/server'));

/** How long a challenge may be answered (Logto's five minutes). */
export const challengeTtlMs = 5 * 60_000;

/** The relying party: this service's name, its host as the RP id, and the origin the browser must report. */
export interface RelyingParty {
  name: string;
  id: string;
  origin: string;
}

export const relyingPartyOf = (publicOrigin: string, name: string): RelyingParty => ({ name, id: new URL(publicOrigin).hostname, origin: publicOrigin });

const transportsOf = (factor: WebAuthnFactor) => factor.transports as AuthenticatorTransport[];

/**
 * Options for `navigator.credentials.create()`: a discoverable credential where the authenticator
 * can keep one (a passkey), no attestation (we trust no vendor list), and none of the user's
 * credentials again.
 */
export async function registrationOptions(rp: RelyingParty, user: { id: string; name: string }, existing: WebAuthnFactor[]) {
  const { generateRegistrationOptions } = await simpleWebAuthn();
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: new TextEncoder().encode(user.id),
    userName: user.name,
    attestationType: 'none',
    excludeCredentials: existing.map((factor) => ({ id: factor.credentialId, transports: transportsOf(factor) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
}

/** The new credential, when the response answers `challenge` from our origin and RP id; undefined otherwise. */
export async function verifiedRegistration(rp: RelyingParty, challenge: string, response: RegistrationResponseJSON, agent: string) {
  const { verifyRegistrationResponse } = await simpleWebAuthn();
  const result = await verifyRegistrationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: false,
  }).catch(() => undefined);
  if (!result?.verified) return undefined;
  const { credential } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? response.response.transports ?? [],
    agent,
  };
}

/** Options for `navigator.credentials.get()`: the user's credentials, or none for a discoverable (passkey) sign-in. */
export async function authenticationOptions(rp: RelyingParty, allowed: WebAuthnFactor[]) {
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  return generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allowed.map((factor) => ({ id: factor.credentialId, transports: transportsOf(factor) })),
    userVerification: 'preferred',
  });
}

/**
 * The credential's new signature counter, when the assertion answers `challenge` from our origin
 * and RP id, is signed by the stored key, and its counter moved forward (a cloned authenticator
 * repeats one; an authenticator that keeps none reports 0 every time); undefined otherwise.
 */
export async function verifiedAssertion(rp: RelyingParty, challenge: string, response: AuthenticationResponseJSON, factor: WebAuthnFactor) {
  const { verifyAuthenticationResponse } = await simpleWebAuthn();
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    credential: { id: factor.credentialId, publicKey: Buffer.from(factor.publicKey, 'base64url'), counter: factor.counter, transports: transportsOf(factor) },
    requireUserVerification: false,
  }).catch(() => undefined);
  return result?.verified ? { newCounter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified } : undefined;
}
