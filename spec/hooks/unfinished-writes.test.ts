import { changeEvents } from '../../hooks/catalog.js';
import { hookCollections } from '../../hooks/collections.js';
import { createOutbox } from '../../hooks/outbox.js';
import { systemClock } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { silentLogger } from '../../lib/logger.js';
import { ensureIndexes, openDatabase, type Database } from '../../lib/store/database.js';
import { intentCollections, intentsCollection, startIntentResolver } from '../../lib/store/intents.js';
import { withId, type RoleDocument } from '../../lib/store/models.js';
import { createQueries } from '../../lib/store/queries/index.js';
import { createRecordWriter, createWriter, type Write } from '../../lib/store/unit-of-work.js';
import type { ChangeKey } from '../../hooks/catalog.js';
import { intentStates } from '../../management/intent-states.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';

/** A process that dies inside a unit of work: after the writes, before their records. */
class Died extends Error {}

/**
 * The outbox without transactions (the embedded engine, a standalone mongod): a unit of work that
 * stops after its writes and before their records leaves its intents, and the resolver records the
 * changes that were made, once, with their events, and nothing for those that were not.
 */
describe('changes left unrecorded by a process that stopped mid-write (no transactions)', () => {
  let database: Database;
  const origin = { method: 'POST', path: '/api/roles', route: '/api/roles', params: {}, clientId: 'tester' };

  beforeAll(async () => {
    database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('intents'), transactions: false });
    await ensureIndexes(database.db, { ...hookCollections, ...intentCollections });
  });
  afterAll(async () => {
    await database.close();
  });

  const queries = () => createQueries(database.db);
  const outbox = () => createOutbox(database.db, queries(), { retentionMs: 60_000 });
  const writer = () => createWriter<ChangeKey>(database, outbox(), { mustIntend: ({ entity, action }) => Object.hasOwn(changeEvents, `${entity}.${action}`) });
  const resolver = () =>
    startIntentResolver(database.db, {
      state: intentStates(database.db, queries()),
      write: createRecordWriter(database, outbox()),
      logger: silentLogger,
      clock: systemClock,
      ageMs: 0,
      everyMs: 3_600_000,
    });
  const role = (name: string): RoleDocument => ({ _id: generateId(), name, description: '', type: 'User', isDefault: false, createdAt: Date.now() });
  const eventsFor = (id: string) => database.db.collection('hook_events').find({ 'payload.data.id': id }).toArray();
  const recordsFor = (id: string) => database.db.collection('changes').find({ id }).toArray();

  /** Runs `work` in a unit of work whose process "dies" right after it. */
  async function dieAfter(work: (write: Write<ChangeKey>) => Promise<void>) {
    await expect(
      writer()(origin, async (write) => {
        await work(write);
        throw new Died();
      }),
    ).rejects.toBeInstanceOf(Died);
  }

  it('records a create that was written, with its event, once, though two resolvers run at once', async () => {
    const created = role('written then died');
    await dieAfter(async ({ intend }) => {
      await intend({ entity: 'Role', action: 'created', id: created._id });
      await queries().roles.insert(created);
    });
    expect(await recordsFor(created._id)).toHaveLength(0);

    const [first, second] = [resolver(), resolver()];
    await Promise.all([first.resolveNow(), second.resolveNow()]);
    await Promise.all([first.stop(), second.stop()]);
    expect(await recordsFor(created._id)).toEqual([expect.objectContaining({ entity: 'Role', action: 'created', data: withId(created), origin })]);
    const events = await eventsFor(created._id);
    expect(events.map(({ event, payload }) => ({ event, data: payload.data }))).toEqual([{ event: 'Role.Created', data: withId(created) }]);
    expect(await database.db.collection(intentsCollection).countDocuments({ id: created._id })).toBe(0);
  });

  it('writes the event of a change whose record was written before the process stopped', async () => {
    const recorded = role('recorded, event lost');
    // The process stops between the change's record and its event.
    const dying = { record: async () => Promise.reject(new Died()), committed: () => undefined };
    const mustIntend = ({ entity, action }: { entity: string; action: string }) => Object.hasOwn(changeEvents, `${entity}.${action}`);
    await expect(
      createWriter<ChangeKey>(database, dying, { mustIntend })(origin, async ({ intend, record }) => {
        await intend({ entity: 'Role', action: 'created', id: recorded._id });
        await queries().roles.insert(recorded);
        record({ entity: 'Role', action: 'created', id: recorded._id, data: withId(recorded) });
      }),
    ).rejects.toBeInstanceOf(Died);
    expect(await recordsFor(recorded._id)).toHaveLength(1);
    expect(await eventsFor(recorded._id)).toHaveLength(0);

    const sweep = resolver();
    await sweep.resolveNow();
    await sweep.stop();
    expect((await eventsFor(recorded._id)).map(({ event }) => event)).toEqual(['Role.Created']);
    expect(await recordsFor(recorded._id)).toHaveLength(1);
  });

  it("records a member's organization roles changed before the process stopped, by what was given and taken", async () => {
    const organizationId = generateId();
    const userId = generateId();
    await queries().organizationUserRoles.add(organizationId, userId, ['r-kept', 'r-taken']);
    await dieAfter(async ({ intend }) => {
      await intend({ entity: 'Organization', action: 'membership.roles.updated', id: organizationId, key: userId, before: ['r-kept', 'r-taken'] });
      await queries().organizationUserRoles.replace(organizationId, userId, ['r-kept', 'r-given']);
    });
    const sweep = resolver();
    await sweep.resolveNow();
    await sweep.stop();
    const events = await database.db.collection('hook_events').find({ 'payload.organizationId': organizationId }).toArray();
    expect(events.map(({ payload }) => payload)).toEqual([
      expect.objectContaining({
        event: 'Organization.Membership.Roles.Updated',
        organizationId,
        userId,
        addedRoleIds: ['r-given'],
        removedRoleIds: ['r-taken'],
      }),
    ]);
  });

  it('records nothing for a create that never reached the database', async () => {
    const never = role('died before writing');
    await dieAfter(async ({ intend }) => {
      await intend({ entity: 'Role', action: 'created', id: never._id });
    });
    const sweep = resolver();
    await sweep.resolveNow();
    await sweep.stop();
    expect(await recordsFor(never._id)).toHaveLength(0);
    expect(await eventsFor(never._id)).toHaveLength(0);
  });

  it('records a delete that was written with the entity as last recorded, and a relation by what it added and removed', async () => {
    const doomed = role('deleted then died');
    await writer()(origin, async ({ intend, record }) => {
      await intend({ entity: 'Role', action: 'created', id: doomed._id });
      await queries().roles.insert(doomed);
      record({ entity: 'Role', action: 'created', id: doomed._id, data: withId(doomed) });
    });
    const linked = role('linked then died');
    await queries().roles.insert(linked);
    await queries().links.rolesScopes.add(linked._id, ['s-kept', 's-dropped']);

    await dieAfter(async ({ intend }) => {
      await intend({ entity: 'Role', action: 'deleted', id: doomed._id });
      await intend({ entity: 'Role', action: 'scopes.updated', id: linked._id, before: ['s-kept', 's-dropped'] });
      await queries().roles.delete(doomed._id);
      await queries().links.rolesScopes.replace(linked._id, ['s-kept', 's-new']);
    });
    const sweep = resolver();
    await sweep.resolveNow();
    await sweep.stop();

    expect((await recordsFor(doomed._id)).map(({ action, data }) => ({ action, data }))).toEqual([
      { action: 'created', data: withId(doomed) },
      { action: 'deleted', data: withId(doomed) },
    ]);
    // The record keeps what moved; the event names the role (and its permissions as they now are).
    expect((await recordsFor(linked._id)).map(({ action, data }) => ({ action, data }))).toEqual([
      { action: 'scopes.updated', data: { addedScopeIds: ['s-new'], removedScopeIds: ['s-dropped'] } },
    ]);
    expect((await database.db.collection('hook_events').find({ 'payload.roleId': linked._id }).toArray()).map(({ event }) => event)).toEqual([
      'Role.Scopes.Updated',
    ]);
  });

  it('keeps no intent of a unit refused before it wrote, and refuses a change that announces an event recorded without its intent', async () => {
    const refused = role('refused');
    await expect(
      writer()(origin, async ({ intend }) => {
        await intend({ entity: 'Role', action: 'created', id: refused._id });
        throw new ApiError('role.name_in_use', 'taken');
      }),
    ).rejects.toBeInstanceOf(ApiError);
    expect(await database.db.collection(intentsCollection).countDocuments({ id: refused._id })).toBe(0);

    await expect(
      writer()(origin, async ({ record }) => {
        record({ entity: 'Role', action: 'created', id: refused._id, data: {} });
      }),
    ).rejects.toThrow('the change Role.created was recorded without being intended first');
  });
});
