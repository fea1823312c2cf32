import { openDatabase, type Database } from '../../lib/store/database.js';
import { insertEach, insertMissing } from '../../lib/store/insert-each.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

/**
 * Against whichever engine the tests run on: MongoDB reports each failed document of an
 * unordered insert, the embedded engine refuses the whole command; the answers must be the same.
 */
describe('inserting documents whose unique keys may be taken (lib/insert-each.ts)', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('insert-each') });
  });
  afterAll(async () => {
    await database.close();
  });

  const ids = async (name: string) => (await database.db.collection<{ _id: string }>(name).find({}).sort({ _id: 1 }).toArray()).map(({ _id }) => _id);

  it('stores the new documents of a batch beside ones whose keys are taken, and says which were which', async () => {
    const collection = database.db.collection<{ _id: string; n?: number }>('mixed');
    await collection.insertOne({ _id: 'b', n: 0 });
    const outcomes = await insertEach(collection, [{ _id: 'a' }, { _id: 'b', n: 1 }, { _id: 'c' }, { _id: 'a' }]);
    expect(outcomes).toEqual(['inserted', 'duplicate', 'inserted', 'duplicate']);
    expect(await ids('mixed')).toEqual(['a', 'b', 'c']);
    // The taken key kept its first document.
    expect(await collection.findOne({ _id: 'b' })).toEqual({ _id: 'b', n: 0 });
  });

  it('answers a batch of new documents in one go, and a lone document on its own', async () => {
    const collection = database.db.collection<{ _id: string }>('fresh');
    expect(await insertEach(collection, [{ _id: 'x' }, { _id: 'y' }])).toEqual(['inserted', 'inserted']);
    expect(await insertEach(collection, [{ _id: 'x' }])).toEqual(['duplicate']);
    expect(await ids('fresh')).toEqual(['x', 'y']);
  });

  it('leaves taken keys alone without failing, through insertMissing', async () => {
    const collection = database.db.collection<{ _id: string }>('missing');
    await insertMissing(collection, [{ _id: 'p' }]);
    await expect(insertMissing(collection, [{ _id: 'p' }, { _id: 'q' }])).resolves.toBeUndefined();
    expect(await ids('missing')).toEqual(['p', 'q']);
  });
});
