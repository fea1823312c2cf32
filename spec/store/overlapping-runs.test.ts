import { exportJWK, generateKeyPair, type JSONWebKeySet, type JWK } from 'jose';
import { MongoNetworkTimeoutError, type AnyBulkWriteOperation, type BulkWriteOptions, type Collection, type Db, type Document } from 'mongodb';

import { createSequencer } from '../../hooks/sequencer.js';
import { hookCollections } from '../../hooks/collections.js';
import { createImpersonationQueries, type ImpersonationEvent } from '../../impersonation/audit.js';
import { impersonationCollections } from '../../impersonation/collections.js';
import { auditView, createLedger } from '../../impersonation/ledger.js';
import { verifyImpersonationAudit } from '../../impersonation/verify.js';
import { silentLogger } from '../../lib/logger.js';
import { ensureIndexes, openDatabase, type Database } from '../../lib/store/database.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

/**
 * Two numbering runs at once (issue 37): one whose lease ran out, or one whose write the driver
 * gave up on (a socket timeout) while the database still applied it. Neither may fork the audit
 * chain, leave a gap in it, or give one webhook event sequence twice.
 */
describe('overlapping runs of the ledger and the sequencer', () => {
  const opened: Database[] = [];
  const open = async (dbName: string) => {
    const database = await openDatabase(testMongoUri(), { dbName });
    opened.push(database);
    return database;
  };
  afterAll(async () => {
    await Promise.all(opened.map((database) => database.close()));
  });

  let jwk: JWK;
  let jwks: JSONWebKeySet;
  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', kid: 'overlap' };
    jwks = { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', kid: 'overlap' }] };
  });
  const ledgerOn = (db: Db, settleMs = 0) =>
    createLedger(db, { issuer: 'https://id.test', signingKey: () => jwk, announce: async () => undefined, logger: silentLogger, settleMs, checkpointMs: 0 });
  const exchangeRecord = (id: string, dueAgoMs: number): ImpersonationEvent => ({
    _id: `exchange:${id}`,
    kind: 'exchange.succeeded',
    impersonationId: `imp-${id}`,
    targetUserId: 'u1',
    actorUserId: 'engineer',
    clientId: 'console',
    resource: 'https://api.test',
    scope: 'read',
    subjectTokenId: id,
    tokenId: `jti-${id}`,
    createdAt: Date.now() - dueAgoMs,
    chainDue: new Date(Date.now() - dueAgoMs),
  });
  const verified = async (db: Db) => {
    const records = await db.collection<ImpersonationEvent>('impersonations').find({}).toArray();
    return verifyImpersonationAudit(records.map(auditView), [], jwks);
  };

  const timedOut = () => new MongoNetworkTimeoutError('connection timed out (the test)');
  /** A database whose impersonation writes the driver gives up on: each is kept, to be applied later, as the engine would. */
  function holdingWrites(db: Db, late: AnyBulkWriteOperation[][]): Db {
    return withBulkWrite(db, 'impersonations', async (_collection, writes) => {
      late.push(writes);
      throw timedOut();
    });
  }
  /** A database whose bulk writes to `name` the driver gives up on every other time, at once, while the engine goes on applying them. */
  function abandoningWrites(db: Db, name: string, pending: Array<Promise<unknown>>): Db {
    let calls = 0;
    return withBulkWrite(db, name, async (collection, writes, options) => {
      const applying = collection.bulkWrite(writes, options);
      pending.push(applying.catch(() => undefined));
      calls += 1;
      if (calls % 2 === 0) throw timedOut();
      return applying;
    });
  }
  function withBulkWrite(
    db: Db,
    name: string,
    bulkWrite: (collection: Collection<Document>, writes: Array<AnyBulkWriteOperation<Document>>, options: BulkWriteOptions) => Promise<unknown>,
  ): Db {
    const wrapped = Object.create(db) as Db;
    wrapped.collection = ((collectionName: string) => {
      const collection = db.collection<Document>(collectionName);
      if (collectionName !== name) return collection;
      const lossy = Object.create(collection) as typeof collection;
      lossy.bulkWrite = ((writes: Array<AnyBulkWriteOperation<Document>>, options: BulkWriteOptions) => bulkWrite(collection, writes, options)) as never;
      return lossy;
    }) as never;
    return wrapped;
  }

  /**
   * Runs each worker again and again (a failed run, as a process would, is tried again) until
   * `done` says the work is over; a run that can never finish fails here, saying so, not at the
   * test's timeout.
   */
  async function runUntil(workers: Array<{ run(): Promise<unknown> }>, done: () => Promise<boolean>) {
    const deadline = Date.now() + 480_000;
    await Promise.all(
      workers.map(async (worker) => {
        while (!(await done())) {
          if (Date.now() > deadline) throw new Error('the workers did not finish within 480 s');
          await worker.run().catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }),
    );
  }

  it('a timed-out batch applied after the next run, over a record corrected meanwhile, stops at its first clash: the chain verifies', async () => {
    const { db } = await open(uniqueDbName('overlap-late'));
    await ensureIndexes(db, impersonationCollections);
    const records = db.collection<ImpersonationEvent>('impersonations');
    // Two exchanges settled long ago, one just now.
    await records.insertMany([exchangeRecord('a', 60_000), exchangeRecord('b', 59_000), exchangeRecord('c', 0)]);

    // The first run reads all three and numbers them 1, 2, 3; the driver gives up on its write.
    const late: AnyBulkWriteOperation[][] = [];
    await expect(ledgerOn(holdingWrites(db, late)).run()).rejects.toThrow('timed out');
    expect(late).toHaveLength(1);

    // Meanwhile the second exchange fails after its claim (its claims script refused) and is
    // corrected in place; a run that waits 30 s for records to settle chains the first two only.
    await createImpersonationQueries(db).markFailed('exchange:b', 'the claims script refused');
    expect(await ledgerOn(db, 30_000).run()).toMatchObject({ chained: 2 });

    // Now the engine applies the first run's write: every write is of something changed under it.
    await expect(db.collection('impersonations').bulkWrite(late[0], { ordered: true })).rejects.toMatchObject({ code: 11000 });

    // The third record is chained after the second as it now is, and the chain verifies.
    expect(await ledgerOn(db).run()).toMatchObject({ chained: 1 });
    const chain = await records.find({}).sort({ sequence: 1 }).toArray();
    expect(chain.map(({ _id, sequence, kind }) => [_id, sequence, kind])).toEqual([
      ['exchange:a', 1, 'exchange.succeeded'],
      ['exchange:b', 2, 'exchange.failed'],
      ['exchange:c', 3, 'exchange.succeeded'],
    ]);
    expect(await verified(db)).toMatchObject({ ok: true, problems: [], checked: 3, unchained: 0 });
  });

  /**
   * 1,000 records, as the sequencers' test: on the embedded engine each chained record's write
   * copies the collection, so the burst's cost grows with its square (2,000 took 150 s here, 1,000
   * takes 28 s), and what the test proves does not depend on its size.
   */
  it('a burst of 1,000 exchanges chained by two processes at once, each giving up on every other batch it writes: one chain, no gap, verified offline', async () => {
    const dbName = uniqueDbName('overlap-burst');
    const { db } = await open(dbName);
    await ensureIndexes(db, impersonationCollections);
    // Two processes' ledgers, each with its own connection; each answers every other batch as timed
    // out at once while the engine still applies it, so that its next run overlaps that write.
    const applying: Array<Promise<unknown>> = [];
    const ledgers = [
      ledgerOn(abandoningWrites(db, 'impersonations', applying)),
      ledgerOn(abandoningWrites((await open(dbName)).db, 'impersonations', applying)),
    ];
    let bursting = true;
    const chaining = runUntil(ledgers, async () => !bursting && (await db.collection('impersonations').countDocuments({ chainDue: { $exists: true } })) === 0);
    const records = db.collection<ImpersonationEvent>('impersonations');
    // Claims come as group commits (one insert of many); some settle out of the order they arrive in.
    for (let sent = 0; sent < 1000; sent += 100) {
      await records.insertMany(Array.from({ length: 100 }, (_, index) => exchangeRecord(`t${sent + index}`, (index * 37) % 1500)));
    }
    bursting = false;
    await chaining;
    await Promise.all(applying);
    const verification = await verified(db);
    expect(verification).toMatchObject({ ok: true, problems: [], checked: 1000, unchained: 0 });
  }, 600_000);

  it('two sequencers at once, each giving up on every other batch it writes: every event numbered once, 1..n with no gap, versions per entity in order', async () => {
    const dbName = uniqueDbName('overlap-seq');
    const { db } = await open(dbName);
    await ensureIndexes(db, hookCollections);
    const applying: Array<Promise<unknown>> = [];
    const sequencers = [
      createSequencer(abandoningWrites(db, 'hook_events', applying), { fullRunMs: 0 }),
      createSequencer(abandoningWrites((await open(dbName)).db, 'hook_events', applying), { fullRunMs: 0 }),
    ];
    const events = db.collection<{ _id: string; entityKey: string; sequence?: number; version?: number; createdAt: Date }>('hook_events');
    let recording = true;
    const numbering = runUntil(sequencers, async () => !recording && (await events.countDocuments({ sequenceDue: { $exists: true } })) === 0);
    for (let sent = 0; sent < 1000; sent += 100) {
      const at = new Date();
      await events.insertMany(
        Array.from({ length: 100 }, (_, index) => ({
          _id: `e${sent + index}`,
          event: 'User.Data.Updated',
          entityKey: `User:u${index % 7}`,
          payload: {},
          sequenceDue: at,
          unitIndex: index,
          createdAt: at,
          expiresAt: new Date(Date.now() + 86_400_000),
        })) as never,
      );
    }
    recording = false;
    await numbering;
    await Promise.all(applying);
    // A run whose answer was lost leaves its numbers above the watermark; the next full run takes them up.
    await sequencers[0].run();
    const numbered = await events.find({}).sort({ sequence: 1 }).toArray();
    expect(numbered.map(({ sequence }) => sequence)).toEqual(Array.from({ length: 1000 }, (_, index) => index + 1));
    expect(await sequencers[0].watermark()).toBe(1000);
    for (let entity = 0; entity < 7; entity += 1) {
      const versions = numbered.filter(({ entityKey }) => entityKey === `User:u${entity}`).map(({ version }) => version!);
      expect(new Set(versions).size).toBe(versions.length);
      expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    }
  }, 600_000);
});
