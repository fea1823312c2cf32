import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';

/** RFC 6238 with the authenticator apps' defaults: SHA-1, 6 digits, 30-second steps. */
const period = 30;

export const newTotpSecret = () => generateSecret();

/** The `otpauth://` URI an authenticator app scans (the QR code's content). */
export const totpUri = (secret: string, { issuer, label }: { issuer: string; label: string }) => generateURI({ issuer, label, secret });

// pngjs's own option, passed through by qrcode's PNG renderer; qrcode's types leave it out.
const pngOptions = { rendererOpts: { filterType: 2 } } as QRCode.QRCodeToDataURLOptions;

/**
 * The URI's QR code as a `data:` URL of a PNG (Logto's `secretQrCode`). Each row is filtered as its
 * difference from the row above (PNG's "Up" filter) rather than pngjs's default of trying all five
 * filters on every row: a QR code's modules are several pixels tall, so most rows become zeros.
 * Measured on Node 20: 2.6 ms a code instead of 5.9, for 8.6 KB instead of 4.3.
 */
export const totpQrPng = (uri: string): Promise<string> => QRCode.toDataURL(uri, pngOptions);

/** The URI's QR code as an SVG document, for the sign-in pages (inline, no image request). */
export const totpQrSvg = (uri: string): Promise<string> => QRCode.toString(uri, { type: 'svg', margin: 1 });

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
