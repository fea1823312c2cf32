import { startWebhookReceiver } from '../../examples/webhook-receiver.js';
import { uniqueDbName } from '../support/env.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The example receiver (`examples/webhook-receiver.ts`, `npm run example:receiver`): a CRM's copy of
 * the users kept in step through the receiver kit, verifying v1a signatures with the keys it reads
 * from the hook's JWKS, and ending at each user's latest state whatever is delivered again.
 */
describe('the example webhook receiver', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    server = await startTestServer('receiver-example', hookTestEnv);
  });
  afterAll(async () => {
    await receiver?.close();
    await server.close();
  });

  it('mirrors users from their events, verified with the published v1a key, and a redelivered old state changes nothing', async () => {
    const { client } = server.database;
    // The hook needs the receiver's URL, and the receiver the hook's JWKS: start it on a known port after the hook exists.
    const hook = await server.create('/api/hooks', {
      name: 'CRM',
      events: ['User.Created', 'User.Data.Updated', 'User.Deleted'],
      config: { url: 'http://localhost:9/placeholder', signatures: ['v1a'] },
    });
    receiver = await startWebhookReceiver({ client, db: client.db(uniqueDbName('crm')), jwksUri: `${server.url}/api/hooks/${hook.id}/jwks` });
    expect((await server.api('PATCH', `/api/hooks/${hook.id}`, { body: { config: { url: receiver.url, signatures: ['v1a'] } } })).status).toBe(200);

    const ann = await server.create('/api/users', { username: 'ann', primaryEmail: 'ann@example.com' });
    await server.api('PATCH', `/api/users/${ann.id}`, { body: { name: 'Ann' } });
    await server.api('PATCH', `/api/users/${ann.id}`, { body: { name: 'Ann Smith' } });
    const bob = await server.create('/api/users', { username: 'bob' });
    await server.api('DELETE', `/api/users/${bob.id}`);
    await deliveriesSettled(server.database.db);
    expect(await receiver.users.find({}).toArray()).toEqual([{ _id: ann.id, username: 'ann', email: 'ann@example.com', name: 'Ann Smith', version: 3 }]);

    // The creation (version 1) delivered again: the kit drops it, and Ann keeps her latest name.
    const deliveries = (await server.api('GET', `/api/hooks/${hook.id}/deliveries?event=User.Created`)).body as Array<{ id: string; state: string }>;
    expect(deliveries.every(({ state }) => state === 'succeeded')).toBe(true);
    for (const { id } of deliveries) expect((await server.api('POST', `/api/hooks/${hook.id}/deliveries/${id}/redeliver`)).status).toBe(202);
    await deliveriesSettled(server.database.db);
    expect(await receiver.users.find({}).toArray()).toEqual([{ _id: ann.id, username: 'ann', email: 'ann@example.com', name: 'Ann Smith', version: 3 }]);
  });
});
