import { deliveriesSettled, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * One endpoint that hangs must not hold back the others: each delivery holds its slot only until
 * its own outcome is recorded, a hook has at most HOOKS_CONCURRENCY_PER_HOOK attempts in flight,
 * and due deliveries are taken across hooks in turn. (The latency this buys is measured in
 * `bench/webhooks.ts`; here only what is delivered is asserted.)
 */
describe('webhook delivery: a hanging endpoint beside a healthy one', () => {
  let server: TestServer;
  let healthy: Receiver;
  let hanging: Receiver;

  beforeAll(async () => {
    [healthy, hanging] = await Promise.all([startReceiver(), startReceiver()]);
    // Four slots in all, two per hook; an attempt may take a minute before it times out.
    server = await startTestServer('hook-isolation', { ...hookTestEnv, HOOKS_CONCURRENCY: '4', HOOKS_CONCURRENCY_PER_HOOK: '2', HOOKS_TIMEOUT_MS: '60000' });
    hanging.answer = () => ({ status: 204, delayMs: 120_000 });
  });
  afterAll(async () => {
    // Closing the hanging receiver ends its attempts, so that the server's worker can stop.
    await hanging.close();
    await server.close();
    await healthy.close();
  });

  it('delivers every event to the healthy hook while the other hook hangs, and holds only two slots for the hanging one', async () => {
    await subscribe(server, hanging, ['Role.Created'], 'hangs');
    await subscribe(server, healthy, ['Role.Created'], 'healthy');
    const roles: Array<{ id: string }> = [];
    for (let i = 0; i < 20; i += 1) roles.push(await server.create('/api/roles', { name: `isolated ${i}` }));
    // Before any hanging attempt can time out (a minute), every event has reached the healthy endpoint.
    await healthy.waitFor((got) => roles.every((role) => got.some(({ body }) => body.data?.id === role.id)), 30_000);
    // The hanging endpoint has been sent only as many as its hook may have in flight (waiting for
    // both to arrive, since they race the healthy hook's; a third could only follow a minute's timeout).
    await hanging.waitFor((got) => got.length >= 2);
    expect(hanging.received).toHaveLength(2);
    const { db } = server.database;
    const hangingHook = (await db.collection('hooks').findOne({ name: 'hangs' }))!;
    expect(await db.collection('hook_deliveries').countDocuments({ hookId: hangingHook._id, leaseOwner: { $ne: null } })).toBe(2);
    expect(await db.collection('hook_deliveries').countDocuments({ hookId: hangingHook._id, state: 'pending' })).toBe(20);
  });

  it("delivers the hanging hook's backlog too once its endpoint answers: nothing was dropped for the wait", async () => {
    const { db } = server.database;
    const hangingHook = (await db.collection('hooks').findOne({ name: 'hangs' }))!;
    // The endpoint moves to one that answers; the old one goes away, failing the two attempts it held (to be retried).
    const recovered = await startReceiver();
    expect((await server.api('PATCH', `/api/hooks/${hangingHook._id}`, { body: { config: { url: recovered.url } } })).status).toBe(200);
    recovered.keys.push(...hanging.keys);
    await hanging.close();
    hanging = recovered;
    const more = await server.create('/api/roles', { name: 'after the hang' });
    await healthy.waitFor((got) => got.some(({ body }) => body.data?.id === more.id), 30_000);
    await deliveriesSettled(db, 60_000);
    expect(await db.collection('hook_deliveries').countDocuments({ hookId: hangingHook._id, state: 'succeeded' })).toBe(21);
    expect(await db.collection('hook_deliveries').countDocuments({ state: { $ne: 'succeeded' } })).toBe(0);
  });
});
