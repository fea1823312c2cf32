/** The factors, as Logto names them (`MfaFactor`). */
export const mfaFactors = ['Totp', 'WebAuthn', 'BackupCode'] as const;
export type MfaFactor = (typeof mfaFactors)[number];

interface FactorBase {
  id: string;
  /** ISO 8601, as Logto's. */
  createdAt: string;
  lastUsedAt?: string;
}

/** An authenticator app: its shared secret, encrypted at rest (lib/mfa/secret-box.ts). */
export interface TotpFactor extends FactorBase {
  type: 'Totp';
  /** The base32 secret, sealed: `v1.<iv>.<ciphertext+tag>`. */
  key: string;
  /** The RFC 6238 time step of the last code accepted: a code of that step or an earlier one is refused (no replay). */
  lastUsedTimeStep?: number;
}

/** A passkey or security key (WebAuthn): the public half, and the signature counter it last reported. */
export interface WebAuthnFactor extends FactorBase {
  type: 'WebAuthn';
  /** base64url. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  /** The authenticator's user agent at registration, as Logto keeps it. */
  agent: string;
  /** A name the user gave it. */
  name?: string;
}

/** Ten single-use recovery codes, each stored as its SHA-256 (they are random, so no slow hash is needed). */
export interface BackupCodeFactor extends FactorBase {
  type: 'BackupCode';
  codes: Array<{ hash: string; usedAt: string | null }>;
}

export type MfaVerification = TotpFactor | WebAuthnFactor | BackupCodeFactor;

/**
 * A factor as an API shows it (Logto's `GET /api/users/:userId/mfa-verifications` item): never a
 * secret, a key, a code or its hash.
 */
export function mfaToApi(factor: MfaVerification) {
  const { id, type, createdAt, lastUsedAt } = factor;
  return {
    id,
    type,
    createdAt,
    ...(lastUsedAt && { lastUsedAt }),
    ...(factor.type === 'WebAuthn' && { agent: factor.agent, ...(factor.name && { name: factor.name }) }),
    ...(factor.type === 'BackupCode' && { remainCodes: factor.codes.filter(({ usedAt }) => usedAt === null).length }),
  };
}

/** A TOTP secret as a client or an operator sends it; whether it will do is `isTotpSecret`'s to say (Logto's 422). */
export const totpSecretSchema = { type: 'string', minLength: 1, maxLength: 128 } as const;

/**
 * Whether a secret will do: RFC 4648 base32, at least 128 bits (26 characters; RFC 4226 §4 asks for
 * 128, and otplib refuses less). Logto answers a secret it refuses with 422 `user.totp_secret_invalid`,
 * and so do we, though Logto takes 80-bit ones (16 characters) that we do not.
 */
export const isTotpSecret = (secret: string) => /^[A-Z2-7]{26,}=*$/.test(secret);

/** Backup codes a client or an operator brings: ten, each as a person would type one. */
export const backupCodesSchema = {
  type: 'array',
  minItems: 10,
  maxItems: 10,
  uniqueItems: true,
  items: { type: 'string', minLength: 6, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' },
} as const;

/** The schema of `mfaToApi`'s answer, for the routes that give it. */
export const mfaVerificationResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { enum: mfaFactors },
    createdAt: { type: 'string' },
    lastUsedAt: { type: 'string' },
    agent: { type: 'string' },
    name: { type: 'string' },
    remainCodes: { type: 'integer' },
  },
  required: ['id', 'type', 'createdAt'],
} as const;

/** The factors a user has, by type, in Logto's order (the second factor a page offers first). */
export const factorTypesOf = (factors: MfaVerification[] | undefined): MfaFactor[] =>
  mfaFactors.filter((type) =>
    (factors ?? []).some((factor) => factor.type === type && (factor.type !== 'BackupCode' || factor.codes.some(({ usedAt }) => usedAt === null))),
  );
