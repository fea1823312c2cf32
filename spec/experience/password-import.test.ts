import { createHash } from 'node:crypto';

import argon2 from 'argon2';
import bcrypt from 'bcryptjs';

import { snapshot } from '../support/db.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld } from './world.js';

const password = 'imported password 1';

/** A digest of `password` as another system would have stored it, made with the algorithm's own library. */
async function digestOf(algorithm: string, of = password): Promise<string> {
  switch (algorithm) {
    case 'Argon2i':
      return argon2.hash(of, { type: argon2.argon2i, memoryCost: 4096, timeCost: 2 });
    case 'Argon2id':
      return argon2.hash(of, { type: argon2.argon2id, memoryCost: 4096, timeCost: 2 });
    case 'Argon2d':
      return argon2.hash(of, { type: argon2.argon2d, memoryCost: 4096, timeCost: 2 });
    case 'Bcrypt':
      return bcrypt.hash(of, 4);
    default:
      return createHash({ SHA1: 'sha1', SHA256: 'sha256', MD5: 'md5' }[algorithm]!).update(of).digest('hex');
  }
}

/**
 * Users imported with a password digest, as Logto's POST /users takes them (`passwordDigest` +
 * `passwordAlgorithm`, packages/core/src/routes/admin-user/basics.ts): verified with that algorithm,
 * and rehashed with ours at the first sign-in.
 */
describe('users imported with a password digest', () => {
  const { world, newSignIn, codeFrom, signInWithApi } = experienceWorld('password-import');
  let server: TestServer;
  beforeAll(() => {
    ({ server } = world);
  });

  it.each(['Argon2i', 'Argon2id', 'Argon2d', 'Bcrypt', 'SHA1', 'SHA256', 'MD5'])(
    '%s: the password verifies, a wrong one does not, and the first sign-in replaces the digest with our hash',
    async (algorithm) => {
      const username = `imported_${algorithm.toLowerCase()}`;
      const digest = await digestOf(algorithm);
      const created = await server.api('POST', '/api/users', { body: { username, passwordDigest: digest, passwordAlgorithm: algorithm } });
      expect(created).toMatchObject({ status: 200, body: { username, hasPassword: true } });
      expect(JSON.stringify(created.body)).not.toContain(digest);
      const id = created.body.id;

      expect((await server.api('POST', `/api/users/${id}/password/verify`, { body: { password } })).status).toBe(204);
      expect((await server.api('POST', `/api/users/${id}/password/verify`, { body: { password: 'not the password' } })).body.code).toBe(
        'session.invalid_credentials',
      );

      const { browser } = await newSignIn();
      expect((await signInWithApi(browser, { type: 'username', value: username }, 'not the password')).status).toBe(422);
      const verified = await signInWithApi(browser, { type: 'username', value: username }, password);
      expect(verified.status).toBe(200);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      expect(await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo)).toEqual(expect.any(String));

      const stored = await server.database.db.collection('users').findOne({ _id: id });
      expect(stored?.passwordHash).toMatch(/^scrypt\$/);
      // The password still works, now against our hash.
      expect((await server.api('POST', `/api/users/${id}/password/verify`, { body: { password } })).status).toBe(204);
    },
  );

  it.each([
    ['both a password and a digest', { password, passwordDigest: 'ab'.repeat(20), passwordAlgorithm: 'SHA1' }, 'user.password_and_digest'],
    ['a digest without its algorithm', { passwordDigest: 'ab'.repeat(20) }, 'user.password_algorithm_required'],
    ['an unknown algorithm', { passwordDigest: 'ab'.repeat(20), passwordAlgorithm: 'Crypt' }, 'guard.invalid_input'],
    ['a digest of the wrong length', { passwordDigest: 'ab'.repeat(20), passwordAlgorithm: 'SHA256' }, 'guard.invalid_input'],
    ['an Argon2 digest under another Argon2 name', 'Argon2id as Argon2i', 'guard.invalid_input'],
    ['an Argon2 digest that would take 4 GiB to check', '$argon2id$v=19$m=4194304,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2g', 'guard.invalid_input'],
    ['a bcrypt digest of cost 31', `$2b$31$${'a'.repeat(53)}`, 'guard.invalid_input'],
  ] as const)('refuses %s with 400, writing nothing', async (_name, given, code) => {
    let body: Record<string, unknown>;
    if (typeof given !== 'string') body = { ...given };
    else if (given === 'Argon2id as Argon2i') body = { passwordDigest: await digestOf('Argon2id'), passwordAlgorithm: 'Argon2i' };
    else body = { passwordDigest: given, passwordAlgorithm: given.startsWith('$argon2') ? 'Argon2id' : 'Bcrypt' };
    const before = await snapshot(server.database.db);
    const answer = await server.api('POST', '/api/users', { body: { username: 'refused_import', ...body } });
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code });
    expect(await snapshot(server.database.db)).toBe(before);
  });
});
