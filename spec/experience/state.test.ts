import { openDatabase, type Database } from '../../lib/store/database.js';
import { createExperienceStore } from '../../experience/state.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

/**
 * The interaction's state as the store keeps it, where a write's answer stands for a read (issue 36:
 * fewer commands per sign-in): what a first open answers is what was stored, however many first
 * requests race; a start answers the state its write left, and nothing once the interaction is submitted.
 */
describe('the sign-in experience state', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('experience-state') });
  });
  afterAll(async () => {
    await database.close();
  });

  it('answers every racing first open with the one document stored (its form token included)', async () => {
    const store = createExperienceStore(database.db);
    const expiresAt = new Date(Date.now() + 600_000);
    const opened = await Promise.all(Array.from({ length: 12 }, () => store.open('race-1', expiresAt, 'de')));
    const stored = await store.get('race-1');
    expect(new Set(opened.map(({ csrf }) => csrf))).toEqual(new Set([stored.csrf]));
    for (const experience of opened) expect(experience).toEqual(stored);
  });

  it('answers a start with the state it wrote, as a read would find it, and nothing once submitted', async () => {
    const store = createExperienceStore(database.db);
    const read = await store.open('start-1', new Date(Date.now() + 600_000));
    await store.addVerification('start-1', 'v1', { type: 'password', userId: 'u1' });
    expect(await store.identify('start-1', null, { userId: 'u1', amr: ['pwd'] })).toBe(true);
    expect(await store.proveFactor('start-1', 'u1', 'otp', 'f1')).toBe(false);
    const started = await store.start(await store.get('start-1'), 'SignIn');
    expect(started).toEqual(await store.get('start-1'));
    expect(started).toMatchObject({ event: 'SignIn', userId: null, verifications: {}, profile: {} });
    expect(started).not.toHaveProperty('amr');
    expect(await store.claimSubmit(started!)).toBe(true);
    expect(await store.start(read, 'Register')).toBeUndefined();
    expect((await store.get('start-1')).event).toBe('SignIn');
  });
});
