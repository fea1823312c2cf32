import { randomBytes } from 'node:crypto';

/** The database server of this run (see global-setup). */
export function testMongoUri(): string {
  const uri = process.env.TEST_MONGODB_URI;
  if (!uri) throw new Error('TEST_MONGODB_URI is not set: run the tests through jest (npm test)');
  return uri;
}

/** A database of its own for each server a test starts, so that suites never see each other's data. */
export function uniqueDbName(label: string): string {
  return `t_${label.replace(/[^a-z0-9]/gi, '').slice(0, 20)}_${randomBytes(4).toString('hex')}`;
}

/** The run's server URI with another database in its path. */
export function uriForDb(dbName: string): string {
  return withDatabase(testMongoUri(), dbName);
}

/** `uri` with `dbName` in its path. */
export function withDatabase(uri: string, dbName: string): string {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]+)(\/[^?]*)?/, `$1/${dbName}`);
}

/**
 * scrypt at its least cost (`PASSWORD_SCRYPT`) for the servers tests start: a password hash takes
 * about 4 ms instead of 380, the same code path at a cost the server warns is fit for tests only.
 * The hash budget and cap count hashes, not time; `password-cost.test.ts` checks the default and a change of cost.
 */
export const testPasswordScrypt = 'N=1024,r=8,p=1';
export const testPasswordHashing = { N: 1024, r: 8, p: 1 };
