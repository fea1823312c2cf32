import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt's cost: `N` (a power of two) times `r` times 128 bytes of memory per hash, `p` times over. */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * scrypt, memory-hard, from node:crypto: N=2^15, r=8, p=3 (32 MiB per hash), one of OWASP's
 * recommended settings. The parameters are stored with each hash, so a hash made at another cost
 * still verifies, and is made again at this one at the next sign-in that proves its password.
 */
export const defaultScryptCost: ScryptCost = { N: 2 ** 15, r: 8, p: 3 };

/** OWASP's weakest recommended setting (N=2^13, r=8, p=10) in work per hash: below it, a stolen hash falls faster than it should. */
const recommendedWork = 2 ** 13 * 8 * 10;
export const belowRecommended = ({ N, r, p }: ScryptCost) => N * r * p < recommendedWork;

/** Why a scrypt cost cannot be used, or undefined when it can. */
export function scryptCostProblem({ N, r, p }: ScryptCost): string | undefined {
  if (!Number.isInteger(N) || N < 2 ** 10 || N > 2 ** 20 || (N & (N - 1)) !== 0) return 'N must be a power of two from 1024 to 1048576';
  if (!Number.isInteger(r) || r < 1 || r > 32) return 'r must be an integer from 1 to 32';
  if (!Number.isInteger(p) || p < 1 || p > 16) return 'p must be an integer from 1 to 16';
  if (128 * N * r > 256 * 2 ** 20) return 'N and r together ask more than 256 MiB per hash';
  return undefined;
}

const keyLength = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: 256 * options.N! * options.r! }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

const paddingSalt = Buffer.alloc(16);

/**
 * Hashing and checking passwords at one cost (`createIdentity`'s `passwordHashing`,
 * `PASSWORD_SCRYPT`). A stored hash names its own parameters, so it is checked at those.
 */
export function createPasswords(cost: ScryptCost = defaultScryptCost) {
  const costOf = (stored: string) => {
    const [scheme, N, r, p] = stored.split('$');
    return scheme === 'scrypt' ? { N: Number(N), r: Number(r), p: Number(p) } : undefined;
  };
  async function hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await derive(password, salt, cost);
    return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }
  async function verify(password: string, stored: string): Promise<boolean> {
    if (stored.startsWith('imported:')) {
      const matches = await verifyImported(password, stored);
      // An unsalted digest checks in microseconds; a check against it takes as long as one against our
      // hash (or an unknown account's), so that its time does not tell which accounts were imported so.
      if (isUnsalted(stored)) await derive(password, paddingSalt, cost);
      return matches;
    }
    const [, , , , salt, key] = stored.split('$');
    const storedCost = costOf(stored);
    if (!storedCost || scryptCostProblem(storedCost) || !salt || !key) return false;
    const expected = Buffer.from(key, 'base64url');
    const actual = await derive(password, Buffer.from(salt, 'base64url'), storedCost);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
  let unknown: Promise<string> | undefined;
  return {
    hash,
    verify,
    /** Checks a password against no account, as long as against one: an unknown identifier's time tells nothing. */
    verifyUnknown: async (password: string) => verify(password, await (unknown ??= hash('no account has this password'))),
    /** Whether a stored hash is to be made again once its password is proven: an imported digest, or one of another cost. */
    needsRehash: (stored: string) => {
      const storedCost = costOf(stored);
      return !storedCost || storedCost.N !== cost.N || storedCost.r !== cost.r || storedCost.p !== cost.p;
    },
  };
}

export type Passwords = ReturnType<typeof createPasswords>;

/**
 * Password digests imported from another system (Logto's `passwordDigest` + `passwordAlgorithm`):
 * kept as `imported:<algorithm>:<digest>`, verified with that algorithm, and replaced by our own
 * hash at the first sign-in that proves the password (`needsRehash`).
 */
export const importedAlgorithms = ['Argon2i', 'Argon2id', 'Argon2d', 'Bcrypt', 'SHA1', 'SHA256', 'MD5'] as const;
export type ImportedAlgorithm = (typeof importedAlgorithms)[number];

/**
 * The shape each digest must have, and the cost bounds an imported one must keep: a digest is
 * verified at every sign-in, so one with a cost set to gigabytes or hours would be a way to stall it.
 */
const argon2Shape = /^\$(argon2(?:i|d|id))\$(?:v=\d+\$)?((?:[a-z]=\d+,?)+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;
const maxArgon2 = { memoryKiB: 256 * 1024, passes: 10, lanes: 16 };
const bcryptShape = /^\$2[abxy]?\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const maxBcryptCost = 15;
const hexLength: Partial<Record<ImportedAlgorithm, number>> = { SHA1: 40, SHA256: 64, MD5: 32 };
const nodeHash: Partial<Record<ImportedAlgorithm, string>> = { SHA1: 'sha1', SHA256: 'sha256', MD5: 'md5' };

/** Why a digest cannot be imported with this algorithm, or undefined when it can. */
export function importedDigestProblem(algorithm: ImportedAlgorithm, digest: string): string | undefined {
  if (algorithm.startsWith('Argon2')) {
    const match = argon2Shape.exec(digest);
    if (!match || match[1] !== algorithm.toLowerCase()) return `is not an ${algorithm} digest ($${algorithm.toLowerCase()}$v=19$m=...,t=...,p=...$salt$hash)`;
    // The parameters in any order, as libraries write them (node-argon2 writes m, p, t).
    const parameters = Object.fromEntries(
      match[2]
        .split(',')
        .filter(Boolean)
        .map((pair) => pair.split('=') as [string, string]),
    );
    const [memory, passes, lanes] = [Number(parameters.m), Number(parameters.t), Number(parameters.p)];
    if (![memory, passes, lanes].every(Number.isInteger)) return 'lacks its m, t or p parameter';
    if (memory > maxArgon2.memoryKiB || passes > maxArgon2.passes || lanes > maxArgon2.lanes) {
      return `costs more than an imported digest may (m <= ${maxArgon2.memoryKiB}, t <= ${maxArgon2.passes}, p <= ${maxArgon2.lanes})`;
    }
    return undefined;
  }
  if (algorithm === 'Bcrypt') {
    const match = bcryptShape.exec(digest);
    if (!match) return 'is not a bcrypt digest ($2b$<cost>$<53 characters>)';
    return Number(match[1]) > maxBcryptCost ? `costs more than an imported digest may (cost <= ${maxBcryptCost})` : undefined;
  }
  const length = hexLength[algorithm]!;
  return new RegExp(`^[0-9a-fA-F]{${length}}$`).test(digest) ? undefined : `is not a ${algorithm} digest (${length} hexadecimal digits)`;
}

const isUnsalted = (stored: string) => Object.hasOwn(hexLength, stored.split(':')[1] ?? '');

export const importedHash = (algorithm: ImportedAlgorithm, digest: string) => `imported:${algorithm}:${hexLength[algorithm] ? digest.toLowerCase() : digest}`;

async function verifyImported(password: string, stored: string): Promise<boolean> {
  const [, algorithm, ...rest] = stored.split(':');
  const digest = rest.join(':');
  if (!importedAlgorithms.includes(algorithm as ImportedAlgorithm) || importedDigestProblem(algorithm as ImportedAlgorithm, digest)) return false;
  if (algorithm.startsWith('Argon2')) {
    const { default: argon2 } = await import('argon2');
    return argon2.verify(digest, password);
  }
  if (algorithm === 'Bcrypt') {
    const { default: bcrypt } = await import('bcryptjs');
    return bcrypt.compare(password, digest);
  }
  const actual = createHash(nodeHash[algorithm as ImportedAlgorithm]!)
    .update(password, 'utf8')
    .digest();
  const expected = Buffer.from(digest, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
