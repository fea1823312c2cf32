import { generateSecret, generateURI, verify } from 'otplib';

/** RFC 6238 with the authenticator apps' defaults: SHA-1, 6 digits, 30-second steps. */
const period = 30;

export const newTotpSecret = () => generateSecret();

/** The `otpauth://` URI an authenticator app scans (the QR code's content). */
export const totpUri = (secret: string, { issuer, label }: { issuer: string; label: string }) => generateURI({ issuer, label, secret });

/**
 * The time step `code` belongs to, when it is right within one step either side of now (RFC 6238
 * §5.2, for the clock drift of a phone) and later than `afterTimeStep`; undefined otherwise. The
 * caller stores the step it accepted, so that no code is accepted twice.
 */
export async function totpStepOf(secret: string, code: string, { now, afterTimeStep }: { now: number; afterTimeStep?: number }): Promise<number | undefined> {
  if (!/^\d{6}$/.test(code)) return undefined;
  // A stored secret otplib refuses (too short) proves nothing.
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now / 1000),
    period,
    epochTolerance: period,
    ...(afterTimeStep !== undefined && { afterTimeStep }),
  }).catch(() => ({ valid: false as const }));
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}
