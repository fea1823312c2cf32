import { createTestClock } from '../support/clock.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { silentLogger } from '../../lib/logger.js';
import { uniqueDbName } from '../support/env.js';
import { startSweeper, sweepOnce, sweepTargets } from '../../lib/store/sweeper.js';

const past = (ms: number, from = Date.now()) => new Date(from - ms);

/** Polls `check` until it holds (every 50 ms, up to 20 s). */
async function eventually(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The service's own TTL monitor: what a TTL index has expired is deleted on every engine (the
 * embedded one never runs TTL indexes), in bounded batches, one process at a time; what has no TTL
 * index (the impersonation audit) is never touched.
 */
describe('the sweeper (lib/store/sweeper.ts)', () => {
  const clock = createTestClock();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sweeper', {}, { clock });
  });
  afterAll(() => server.close());
  const db = () => server.database.db;
  /** A collection as the test writes it: documents with a string id and any fields. */
  const raw = (name: string) => db().collection<{ _id: string } & Record<string, unknown>>(name);

  it('reads its targets off the declared TTL indexes: the provider’s artifacts, codes, counters, events, changes; never the audit', () => {
    const targets = sweepTargets(server.identity.collections);
    const names = targets.map(({ collection }) => collection);
    expect(names).toEqual(expect.arrayContaining(['oidc_Session', 'oidc_AccessToken', 'changes', 'hook_events', 'subject_tokens', 'attempt_counters']));
    expect(names).not.toContain('impersonations');
    expect(targets.find(({ collection }) => collection === 'oidc_Session')).toEqual({ collection: 'oidc_Session', field: 'expiresAt', afterSeconds: 0 });
  });

  it('deletes at most maxBatches × batchSize a run from one collection, the dead only', async () => {
    const documents = db().collection<{ _id: string; expiresAt?: Date }>('sweep_bounds');
    await documents.insertMany([
      ...Array.from({ length: 7 }, (_, i) => ({ _id: `dead-${i}`, expiresAt: past(60_000) })),
      ...Array.from({ length: 3 }, (_, i) => ({ _id: `live-${i}`, expiresAt: past(-60_000) })),
      { _id: 'endless' },
    ]);
    const target = [{ collection: 'sweep_bounds', field: 'expiresAt', afterSeconds: 0 }];
    expect(await sweepOnce(db(), target, new Date(), { batchSize: 2, maxBatches: 2 })).toEqual({ sweep_bounds: 4 });
    expect(await sweepOnce(db(), target, new Date(), { batchSize: 2, maxBatches: 2 })).toEqual({ sweep_bounds: 3 });
    expect(await sweepOnce(db(), target, new Date(), { batchSize: 2, maxBatches: 2 })).toEqual({});
    expect((await documents.find().toArray()).map(({ _id }) => _id).sort()).toEqual(['endless', 'live-0', 'live-1', 'live-2']);
  });

  it('honours a TTL index’s own delay (expireAfterSeconds)', async () => {
    const documents = db().collection<{ _id: string; at: Date }>('sweep_delay');
    await documents.insertMany([
      { _id: 'old', at: past(120_000) },
      { _id: 'young', at: past(30_000) },
    ]);
    expect(await sweepOnce(db(), [{ collection: 'sweep_delay', field: 'at', afterSeconds: 60 }], new Date(), { batchSize: 10, maxBatches: 1 })).toEqual({
      sweep_delay: 1,
    });
    expect((await documents.find().toArray()).map(({ _id }) => _id)).toEqual(['young']);
  });

  it('runs in the server when its clock says (what is dead by the system’s time): ended sessions, tokens, codes and changes go, live ones and the audit stay', async () => {
    const now = Date.now();
    await raw('oidc_Session').insertMany([
      { _id: 'ended-session', payload: '{}', expiresAt: past(1000, now) },
      { _id: 'live-session', payload: '{}', expiresAt: past(-3_600_000, now) },
    ]);
    await raw('changes').insertOne({ _id: 'old-change', expiresAt: past(1000, now) });
    await raw('impersonations').insertOne({ _id: 'audit-record', createdAt: 0, expiresAt: past(1000, now) });
    clock.advance(60_000);
    await eventually(async () => (await raw('oidc_Session').countDocuments({ _id: 'ended-session' })) === 0, 'the sweep');
    expect(await raw('changes').countDocuments({ _id: 'old-change' })).toBe(0);
    expect(await raw('oidc_Session').countDocuments({ _id: 'live-session' })).toBe(1);
    expect(await raw('impersonations').countDocuments({ _id: 'audit-record' })).toBe(1);
  });

  it('sweeps in one process at a time: two sweeping at once delete each dead document once, without error', async () => {
    // A database of their own: the server's own sweeper takes the same lease in the suite's database.
    const own = server.database.client.db(uniqueDbName('sweep-race'));
    const documents = own.collection<{ _id: string; expiresAt: Date }>('sweep_race');
    await documents.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: `dead-${i}`, expiresAt: past(1000) })));
    const target = [{ collection: 'sweep_race', field: 'expiresAt', afterSeconds: 0 }];
    const options = { logger: silentLogger, clock: createTestClock(), everyMs: 3_600_000, batchSize: 10, maxBatches: 10 };
    const [one, two] = [startSweeper(own, target, options), startSweeper(own, target, options)];
    await Promise.all([one.sweepNow(), two.sweepNow()]);
    await Promise.all([one.stop(), two.stop()]);
    expect(await documents.countDocuments()).toBe(0);
  });
});
