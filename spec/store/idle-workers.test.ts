import type { CommandStartedEvent } from 'mongodb';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

import { createSequencer } from '../../hooks/sequencer.js';
import { createLedger } from '../../impersonation/ledger.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import { silentLogger } from '../../lib/logger.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

/**
 * What an idle worker costs (issue 37): every process's delivery worker and ledger look every
 * poll. With nothing to do, one read answers and no lock is taken; with something due, they run in
 * full as before.
 */
describe('idle workers: one read a look, no lock', () => {
  let database: Database;
  const commands: string[] = [];
  const upkeep = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'endSessions', 'buildInfo']);
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('idle-workers'), clientOptions: { monitorCommands: true } });
    database.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (upkeep.has(event.commandName)) return;
      const target: unknown = event.command[event.commandName];
      commands.push(`${event.commandName} ${typeof target === 'string' ? target : ''}`.trim());
    });
  });
  afterAll(async () => {
    await database.close();
  });
  const during = async (work: () => Promise<unknown>) => {
    commands.length = 0;
    await work();
    return [...commands];
  };

  it('the sequencer: a look with nothing to number reads once; an event due is numbered under the lock', async () => {
    const sequencer = createSequencer(database.db);
    // The first look of a process is a full run (it also takes up what a dead run left).
    expect(await during(() => sequencer.run())).toContain('update owner_locks');
    expect(await during(() => sequencer.run())).toEqual(['find hook_events']);
    await database.db
      .collection('hook_events')
      .insertOne({ _id: 'e1', event: 'User.Created', sequenceDue: new Date(), unitIndex: 0, createdAt: new Date() } as never);
    const numbering = await during(async () => expect(await sequencer.run()).toMatchObject({ numbered: 1 }));
    expect(numbering).toContain('update owner_locks');
    expect(await database.db.collection('hook_events').findOne({ _id: 'e1' } as never)).toMatchObject({ sequence: 1 });
    expect(await sequencer.watermark()).toBe(1);
    expect(await during(() => sequencer.run())).toEqual(['find hook_events']);
  });

  it('the sequencer with fullRunMs 0 runs in full at every look', async () => {
    const sequencer = createSequencer(database.db, { fullRunMs: 0 });
    await sequencer.run();
    expect(await during(() => sequencer.run())).toContain('update owner_locks');
  });

  it('the ledger: a look with nothing settled reads once; a settled record is chained and checkpointed', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk: JWK = { ...(await exportJWK(privateKey)), alg: 'ES256', kid: 'idle' };
    const announced: string[] = [];
    const ledger = createLedger(database.db, {
      issuer: 'https://id.test',
      signingKey: () => jwk,
      announce: async (items) => {
        announced.push(...items.map(({ event }) => event));
      },
      logger: silentLogger,
      settleMs: 0,
      checkpointMs: 60_000,
    });
    expect(await during(() => ledger.run())).toContain('update owner_locks');
    expect(await during(() => ledger.run())).toEqual(['find impersonations']);
    await database.db.collection('impersonations').insertOne({
      _id: 'r1',
      kind: 'subject_token.issued',
      impersonationId: 'i1',
      targetUserId: 'u1',
      issuerClientId: 'c1',
      context: {},
      expiresAt: Date.now() + 60_000,
      createdAt: Date.now(),
      chainDue: new Date(Date.now() - 1000),
    } as never);
    expect(await ledger.run()).toMatchObject({ chained: 1 });
    expect(await database.db.collection('impersonations').findOne({ _id: 'r1' } as never)).toMatchObject({ sequence: 1 });
    expect((await ledger.checkpoints()).map(({ sequence }) => sequence)).toEqual([1]);
    expect(announced).toHaveLength(1);
    // Chained and checkpointed: the next looks are one read again.
    await ledger.run();
    expect(await during(() => ledger.run())).toEqual(['find impersonations']);
    // `force` (a shutdown, a test) always runs in full.
    expect(await during(() => ledger.run(true))).toContain('update owner_locks');
  });

  it('the ledger shrinks a batch the database cannot take at once until it passes, and chains everything in order', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk: JWK = { ...(await exportJWK(privateKey)), alg: 'ES256', kid: 'shrink' };
    const db = database.client.db(uniqueDbName('ledger-shrink'));
    // Stands for an engine that times out on any batch of more than 3 events.
    const ledger = createLedger(db, {
      issuer: 'https://id.test',
      signingKey: () => jwk,
      announce: async (items) => {
        if (items.length > 3) throw new Error('socket timeout');
      },
      logger: silentLogger,
      settleMs: 0,
      checkpointMs: 60_000,
    });
    const records = db.collection<{ _id: string; sequence?: number }>('impersonations');
    await records.insertMany(
      Array.from({ length: 10 }, (_, index) => ({
        _id: `r${index}`,
        kind: 'subject_token.issued',
        impersonationId: `i${index}`,
        targetUserId: 'u1',
        issuerClientId: 'c1',
        context: {},
        expiresAt: Date.now() + 60_000,
        createdAt: Date.now() + index,
        chainDue: new Date(Date.now() - 1000 + index),
      })) as never,
    );
    let failures = 0;
    for (let look = 0; look < 30 && (await records.countDocuments({ sequence: { $exists: false } })) > 0; look += 1) {
      await ledger.run().catch(() => (failures += 1));
    }
    expect(failures).toBeGreaterThan(0);
    const chained = await records.find({}).sort({ sequence: 1 }).toArray();
    expect(chained.map(({ sequence }) => sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(chained.map(({ _id }) => _id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9']);
  });
});
