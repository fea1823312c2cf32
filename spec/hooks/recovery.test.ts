import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Recovery without a storm (ours): failed deliveries sent again (`POST /api/hooks/:id/recover`),
 * and replay and re-enabling a disabled hook, each as `mode` says: every event, only the newest of
 * each entity, or none.
 */
describe('webhook recovery modes', () => {
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // One retry, at once: a refused delivery fails for good within moments.
    server = await startTestServer('hook-recovery', { ...hookTestEnv, HOOKS_RETRY_SCHEDULE: '0' });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  /** A hook whose endpoint refuses everything while `down` is true. */
  async function hookWithOutage(name: string) {
    const hook = await server.create('/api/hooks', {
      name,
      events: ['User.Created', 'User.Data.Updated', 'Role.Created'],
      config: { url: `${receiver.url}/${name}` },
    });
    receiver.keys.push(hook.signingKey);
    return hook as { id: string };
  }
  it('recover: latest-per-entity sends each entity’s newest failed event and marks the older ones skipped; skip sends nothing; all sends each', async () => {
    let down = true;
    receiver.answer = () => (down ? { status: 503 } : { status: 204 });
    const latest = await hookWithOutage('latest');
    const skipAll = await hookWithOutage('skip-all');
    const user = await server.create('/api/users', { username: 'recovered' });
    for (const name of ['one', 'two', 'three']) await server.api('PATCH', `/api/users/${user.id}`, { body: { name } });
    await server.create('/api/roles', { name: 'recovered role' });
    await deliveriesSettled(server.database.db);
    down = false;
    const before = receiver.received.length;

    const recovered = await server.api('POST', `/api/hooks/${latest.id}/recover`, { body: { since: 0, mode: 'latest-per-entity' } });
    expect({ status: recovered.status, body: recovered.body }).toEqual({ status: 202, body: { failed: 5, queued: 2, skipped: 3 } });
    const skipped = await server.api('POST', `/api/hooks/${skipAll.id}/recover`, { body: { since: 0, mode: 'skip' } });
    expect(skipped.body).toEqual({ failed: 5, queued: 0, skipped: 5 });
    await deliveriesSettled(server.database.db);
    const sent = receiver.received.slice(before).map(({ body }) => [body.hookId, body.event, body.version]);
    expect(sent.sort()).toEqual(
      [
        [latest.id, 'Role.Created', 1],
        [latest.id, 'User.Data.Updated', 4],
      ].sort(),
    );
    // Nothing failed is left: another recovery finds nothing.
    expect((await server.api('POST', `/api/hooks/${latest.id}/recover`, { body: { since: 0 } })).body).toEqual({ failed: 0, queued: 0, skipped: 0 });
    const states = (await server.api('GET', `/api/hooks/${latest.id}/deliveries`)).body as Array<{ state: string; lastError: string | null }>;
    expect(states.filter(({ state }) => state === 'skipped').every(({ lastError }) => /superseded/.test(lastError ?? ''))).toBe(true);
    expect((await server.api('POST', `/api/hooks/${latest.id}/recover`, { body: { since: 0, mode: 'some' } })).status).toBe(400);
  });

  it('replay: latest-per-entity sends the newest event of each entity in the range', async () => {
    receiver.answer = () => ({ status: 204 });
    const hook = await hookWithOutage('replayed');
    const before = receiver.received.length;
    const replay = await server.api('POST', `/api/hooks/${hook.id}/replay`, { body: { since: 0, mode: 'latest-per-entity' } });
    expect(replay.status).toBe(202);
    await deliveriesSettled(server.database.db);
    const sent = receiver.received.slice(before).filter(({ body }) => body.hookId === hook.id);
    const keys = sent.map(({ body }) => `${(body.entity as { type: string; id: string }).type}:${(body.entity as { id: string }).id}`);
    expect(new Set(keys).size).toBe(keys.length);
    const recovered = sent.find(({ body }) => (body.data as { username?: string } | undefined)?.username === 'recovered');
    expect(recovered?.body).toMatchObject({ event: 'User.Data.Updated', version: 4 });
  });

  it('re-enabling a disabled hook with mode latest-per-entity sends what it missed, newest per entity', async () => {
    let gone = true;
    receiver.answer = (received) => (gone && received.body.hookId === disabled.id ? { status: 410 } : { status: 204 });
    const disabled = await hookWithOutage('re-enabled');
    const user = await server.create('/api/users', { username: 'missed_while_disabled' });
    await deliveriesSettled(server.database.db);
    expect((await server.api('GET', `/api/hooks/${disabled.id}`)).body.enabled).toBe(false);
    // While it is disabled, the user changes twice: nothing is made for the hook.
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'first' } });
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'second' } });
    await deliveriesSettled(server.database.db);
    gone = false;
    const before = receiver.received.length;
    const enabled = await server.api('PATCH', `/api/hooks/${disabled.id}`, { body: { enabled: true, mode: 'latest-per-entity' } });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
    await deliveriesSettled(server.database.db);
    const sent = receiver.received.slice(before).filter(({ body }) => body.hookId === disabled.id && (body.entity as { id: string }).id === user.id);
    expect(sent.map(({ body }) => [body.event, body.version, (body.data as { name: string }).name])).toEqual([['User.Data.Updated', 3, 'second']]);
  });
});
