import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Operational events (ours): a hook failing half way to being disabled (`Hook.Disabling`), disabled
 * (`Hook.Disabled`), and a delivery given up (`Hook.DeliveryExhausted`), announced to the other
 * hooks that subscribe to them, never to the hook they are about, and without its key or headers.
 */
describe('operational webhook events', () => {
  let server: TestServer;
  let watcher: Receiver;
  let failing: Receiver;

  beforeAll(async () => {
    watcher = await startReceiver();
    failing = await startReceiver();
    // Disabled after 4 s of failures; retried every second.
    server = await startTestServer('hook-operational', { ...hookTestEnv, HOOKS_DISABLE_AFTER: '4' });
  });
  afterAll(async () => {
    await server.close();
    await watcher.close();
    await failing.close();
  });

  it('announces a failing hook’s exhausted delivery, its coming disabling and its disabling to a watching hook, and none to itself', async () => {
    const operational = ['Hook.Disabling', 'Hook.Disabled', 'Hook.DeliveryExhausted'];
    const watch = await server.create('/api/hooks', { name: 'ops watcher', events: operational, config: { url: watcher.url } });
    watcher.keys.push(watch.signingKey);
    const broken = await server.create('/api/hooks', {
      name: 'broken endpoint',
      events: ['Role.Created', ...operational],
      config: { url: failing.url, headers: { authorization: 'Bearer a-secret-of-the-integrator' } },
    });
    failing.keys.push(broken.signingKey);
    failing.answer = () => ({ status: 503 });

    await server.create('/api/roles', { name: 'never delivered' });
    await watcher.waitFor((got) => got.some(({ body }) => body.event === 'Hook.Disabled'), 30_000);
    await deliveriesSettled(server.database.db, 30_000);

    const seen = watcher.received.map(({ body }) => body);
    const disabling = seen.find(({ event }) => event === 'Hook.Disabling');
    const disabled = seen.find(({ event }) => event === 'Hook.Disabled');
    const exhausted = seen.filter(({ event }) => event === 'Hook.DeliveryExhausted');
    expect(disabling).toMatchObject({
      entity: { type: 'Hook', id: broken.id },
      data: { id: broken.id, name: 'broken endpoint', disablesAt: expect.any(String) },
    });
    expect(disabled).toMatchObject({
      hookId: watch.id,
      data: { id: broken.id, url: failing.url, disabledReason: expect.stringMatching(/every attempt failed/) },
    });
    // The delivery still pending when the hook was disabled is skipped, not exhausted; the one that ran out of attempts is announced.
    expect(exhausted.length).toBeLessThanOrEqual(1);
    for (const body of exhausted) expect(body.data).toMatchObject({ hook: { id: broken.id }, delivery: { event: 'Role.Created', lastStatus: 503 } });
    expect(JSON.stringify(seen)).not.toMatch(/a-secret-of-the-integrator|whsec_/);
    // The broken hook was sent nothing about itself.
    expect(failing.received.filter(({ body }) => String(body.event).startsWith('Hook.'))).toEqual([]);
    expect((await server.api('GET', `/api/hooks/${broken.id}`)).body).toMatchObject({ enabled: false });
  });

  it('announces a delivery given up when its endpoint answers 410 Gone (the hook is disabled too)', async () => {
    const gone = await startReceiver();
    try {
      const hook = await server.create('/api/hooks', { name: 'gone endpoint', events: ['Role.Created'], config: { url: gone.url } });
      gone.keys.push(hook.signingKey);
      gone.answer = () => ({ status: 410 });
      const before = watcher.received.length;
      await server.create('/api/roles', { name: 'sent to a gone endpoint' });
      await watcher.waitFor(
        (got) =>
          got
            .slice(before)
            .filter(({ body }) => (body.data as { hook?: { id: string }; id?: string }).hook?.id === hook.id || (body.data as { id?: string }).id === hook.id)
            .length >= 2,
        20_000,
      );
      const about = watcher.received
        .slice(before)
        .map(({ body }) => [body.event, (body.data as { hook?: { id: string } }).hook?.id ?? (body.data as { id: string }).id]);
      expect(about).toEqual(
        expect.arrayContaining([
          ['Hook.DeliveryExhausted', hook.id],
          ['Hook.Disabled', hook.id],
        ]),
      );
    } finally {
      await gone.close();
    }
  });
});
