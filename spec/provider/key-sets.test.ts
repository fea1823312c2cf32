import type { JWK } from 'jose';

import { openDatabase, type Database } from '../../lib/store/database.js';
import { generateSigningKey, keyTypes } from '../../provider/keys.js';
import { createKeyRing } from '../../provider/oidc-keys.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

const keyOf = (alg: string) => generateSigningKey(keyTypes.find((type) => type.alg === alg)!);

/**
 * Signing keys stored before key sets existed (one key per algorithm, rotated one algorithm at a
 * time) are read as sets after an upgrade: the first key of each algorithm is the current set, the
 * second of each the previous one. Nothing is lost, and the next rotation writes sets.
 */
describe('key sets over signing keys stored before them', () => {
  let database: Database;
  let old: { ec: JWK; ecOlder: JWK; okp: JWK; rsa: JWK };
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('key-sets') });
    old = { ec: await keyOf('ES256'), ecOlder: await keyOf('ES256'), okp: await keyOf('EdDSA'), rsa: await keyOf('RS256') };
    // An earlier version's document: EC rotated once (its older key kept to verify), the others never.
    await database.db
      .collection('system')
      .insertMany([
        { _id: 'signing', keys: [old.ec, old.okp, old.rsa, old.ecOlder], createdAt: new Date(), version: 1 } as never,
        { _id: 'cookies', keys: ['cookie-key'], createdAt: new Date() } as never,
      ]);
  });
  afterAll(async () => {
    await database.close();
  });

  it('lists the stored keys as two sets, named by the family of ACCESS_TOKEN_ALG, and signs access tokens with it', async () => {
    const ring = createKeyRing(database.db, { signing: [old.ec, old.okp, old.rsa, old.ecOlder], cookies: ['cookie-key'] }, { family: 'EC' });
    await ring.reload();
    const listed = await ring.list('private-keys');
    expect(listed.map(({ id, status, keys }) => [id, status, keys!.map(({ id: kid }) => kid)])).toEqual([
      [old.ec.kid, 'current', [old.ec.kid, old.okp.kid, old.rsa.kid]],
      [old.ecOlder.kid, 'previous', [old.ecOlder.kid]],
    ]);
    expect(ring.signingAlg()).toBe('ES256');
  });

  it('rotates into sets: the new one current, the stored current one previous, the older key gone', async () => {
    const ring = createKeyRing(database.db, { signing: [], cookies: [] }, { family: 'EC' });
    await ring.reload();
    const rotated = await ring.rotate('private-keys', 'RSA');
    expect(rotated.map(({ signingKeyAlgorithm, status }) => [signingKeyAlgorithm, status])).toEqual([
      ['RSA', 'current'],
      ['EC', 'previous'],
    ]);
    expect(rotated[1]!.id).toBe(old.ec.kid);
    const kids = ring.jwks().keys.map(({ kid }) => kid);
    expect(kids).toHaveLength(6);
    expect(kids).not.toContain(old.ecOlder.kid);
    expect(kids).toEqual(expect.arrayContaining([old.ec.kid, old.okp.kid, old.rsa.kid]));
    expect(ring.signingAlg()).toBe('RS256');
    // Another process reading the same document sees the same.
    const other = createKeyRing(database.db, { signing: [], cookies: [] }, { family: 'EC' });
    await other.reload();
    expect([other.signingAlg(), (await other.list('private-keys')).map(({ id }) => id)]).toEqual(['RS256', rotated.map(({ id }) => id)]);
  });
});
