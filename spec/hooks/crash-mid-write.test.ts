import { openDatabase, type Database } from '../../lib/store/database.js';
import { uniqueDbName, uriForDb } from '../support/env.js';
import { callApi, clientCredentials, spawnServer, type ServerProcess } from '../support/process.js';

const baseUrl = 'http://id.test.local';
const admin = { BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'process-test-secret-0123456789' };

/** The roles that exist, and the ids their Role.Created events name (with repeats). */
async function rolesAndEvents(database: Database) {
  const roles = (
    await database.db
      .collection<{ _id: string; name: string }>('roles')
      .find({ name: /^burst / })
      .toArray()
  ).map(({ _id }) => _id);
  const events = (await database.db.collection('hook_events').find({ event: 'Role.Created' }).toArray()).map(({ payload }) => payload.data.id as string);
  return { roles, events };
}

describe('a server killed (SIGKILL) in the middle of writes, without transactions', () => {
  const started: ServerProcess[] = [];
  let database: Database;

  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.stop('SIGKILL')));
    await database.close();
  });

  it('leaves no committed change without its event: each is announced once, by the next server to look', async () => {
    const dbName = uniqueDbName('crashwrite');
    database = await openDatabase(uriForDb(dbName));
    const writer = await spawnServer(dbName, { BASE_URL: baseUrl, ...admin, HOOKS_DELIVERY: 'false' });
    started.push(writer);
    const { body } = await clientCredentials(writer, admin.BOOTSTRAP_CLIENT_ID, admin.BOOTSTRAP_CLIENT_SECRET, `${baseUrl}/api`);
    const token = body.access_token!;

    // Sixteen writers at once, until the server dies under them.
    let answered = 0;
    let next = 0;
    const writes = Promise.all(
      Array.from({ length: 16 }, async () => {
        for (;;) {
          const result = await callApi(writer, token, 'POST', '/api/roles', { name: `burst ${next++}` }).catch(() => undefined);
          if (!result) return;
          expect(result.status).toBe(200);
          answered += 1;
        }
      }),
    );
    const burstDeadline = Date.now() + 60_000;
    while (answered < 200) {
      if (Date.now() > burstDeadline) throw new Error(`only ${answered} writes answered within 60 s:\n${writer.output().slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await writer.stop('SIGKILL');
    await writes;

    // Another server finds what the dead one wrote without recording, and records it.
    started.push(await spawnServer(dbName, { BASE_URL: baseUrl, ...admin, HOOKS_DELIVERY: 'false' }));
    const deadline = Date.now() + 90_000;
    let seen = await rolesAndEvents(database);
    while (seen.roles.some((id) => !seen.events.includes(id)) || (await database.db.collection('change_intents').countDocuments()) > 0) {
      if (Date.now() > deadline) throw new Error(`roles without their event after 90 s: ${seen.roles.filter((id) => !seen.events.includes(id)).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      seen = await rolesAndEvents(database);
    }
    expect(seen.roles.length).toBeGreaterThanOrEqual(answered);
    // Once each, and none for a role that does not exist.
    expect([...seen.events].sort()).toEqual([...seen.roles].sort());
  }, 150_000);
});
