import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver, type Received } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Per-entity ordering (ours, `config.ordering: "per-entity"`): a delivery of an entity waits until
 * the earlier ones of that entity to the hook succeeded or were given up; other entities flow in
 * parallel, so a failing entity blocks only itself.
 */
describe('webhook delivery ordered per entity', () => {
  const concurrency = { HOOKS_CONCURRENCY: '8', HOOKS_CONCURRENCY_PER_HOOK: '8' };
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('hook-ordering', { ...hookTestEnv, ...concurrency });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const entityOf = ({ body }: Received) => (body.entity as { id: string }).id;

  it('delivers each entity’s versions in order while another entity’s first delivery keeps failing, and the others flow meanwhile', async () => {
    // Its own server, with twenty attempts a second apart: the failing entity fails until the other
    // entity's four deliveries are in, however long a loaded machine takes to make them (at a load of
    // 12, three failures a second apart were over before the last of them was written).
    const own = await startTestServer('hook-ordering-held', { ...hookTestEnv, HOOKS_RETRY_SCHEDULE: `0${',1'.repeat(19)}`, ...concurrency });
    try {
      await failingEntityHoldsOnlyItself(own);
    } finally {
      await own.close();
    }
  });

  async function failingEntityHoldsOnlyItself(server: TestServer) {
    const hook = await server.create('/api/hooks', {
      name: 'ordered',
      events: ['User.Created', 'User.Data.Updated'],
      config: { url: receiver.url, ordering: 'per-entity' },
    });
    expect(hook.config.ordering).toBe('per-entity');
    receiver.keys.push(hook.signingKey);

    // The slow user's first event fails at least three times, and until the fast user's four versions
    // are in (a second or so between attempts; the last two of the twenty are left to succeed);
    // everything else is accepted.
    const accepted: Received[] = [];
    let slowId = '';
    let fastId = '';
    let failures = 0;
    const fastDone = () => accepted.filter((received) => entityOf(received) === fastId).length === 4;
    receiver.answer = (received) => {
      if (entityOf(received) === slowId && received.body.version === 1 && (failures < 3 || (!fastDone() && failures < 18))) {
        failures += 1;
        return { status: 500 };
      }
      accepted.push(received);
      return { status: 204 };
    };
    const slow = await server.create('/api/users', { username: 'slow_entity' });
    slowId = slow.id;
    const fast = await server.create('/api/users', { username: 'fast_entity' });
    fastId = fast.id;
    for (let round = 1; round <= 3; round += 1) {
      await server.api('PATCH', `/api/users/${slow.id}`, { body: { name: `slow ${round}` } });
      await server.api('PATCH', `/api/users/${fast.id}`, { body: { name: `fast ${round}` } });
    }
    await deliveriesSettled(server.database.db, 45_000);

    expect(failures).toBeGreaterThanOrEqual(3);
    expect(failures).toBeLessThan(18);
    const versionsOf = (id: string) => accepted.filter((received) => entityOf(received) === id).map(({ body }) => body.version as number);
    expect(versionsOf(slow.id)).toEqual([1, 2, 3, 4]);
    expect(versionsOf(fast.id)).toEqual([1, 2, 3, 4]);
    // The failing entity held back only itself: every delivery of the other arrived before the slow one's first success.
    const firstSlow = accepted.findIndex((received) => entityOf(received) === slow.id);
    const lastFast = accepted.map(entityOf).lastIndexOf(fast.id);
    expect(lastFast).toBeLessThan(firstSlow);
  }

  it('lets the next delivery of an entity go once an earlier one is given up', async () => {
    const hook = await server.create('/api/hooks', {
      name: 'ordered, giving up',
      events: ['Role.Created', 'Role.Data.Updated'],
      config: { url: receiver.url, ordering: 'per-entity' },
    });
    receiver.keys.push(hook.signingKey);
    const accepted: Received[] = [];
    // The first event is refused at every attempt until its retries run out (about seven seconds here): the next version must then go out.
    receiver.answer = (received) => {
      if (received.body.hookId === hook.id && received.body.event === 'Role.Created') return { status: 500 };
      accepted.push(received);
      return { status: 204 };
    };
    const role = await server.create('/api/roles', { name: 'given up' });
    await server.api('PATCH', `/api/roles/${role.id}`, { body: { description: 'after the failure' } });
    await deliveriesSettled(server.database.db, 45_000);
    const deliveries = await server.api('GET', `/api/hooks/${hook.id}/deliveries`);
    const states = (deliveries.body as Array<{ event: string; state: string }>).map(({ event, state }) => [event, state]).sort();
    expect(states).toEqual([
      ['Role.Created', 'failed'],
      ['Role.Data.Updated', 'succeeded'],
    ]);
    expect(accepted.filter(({ body }) => body.hookId === hook.id).map(({ body }) => [body.event, body.version])).toEqual([['Role.Data.Updated', 2]]);
  });

  it('shows a parked delivery as parked, due at no time (nextAttemptAt null), until the one before it finishes', async () => {
    const hook = await server.create('/api/hooks', {
      name: 'ordered, parked',
      events: ['Scope.Created', 'Scope.Data.Updated'],
      config: { url: receiver.url, ordering: 'per-entity' },
    });
    receiver.keys.push(hook.signingKey);
    let holding = true;
    receiver.answer = (received) =>
      received.body.hookId === hook.id && received.body.event === 'Scope.Created' && holding ? { status: 500 } : { status: 204 };
    const resource = await server.create('/api/resources', { name: 'Parked', indicator: 'https://parked.example.com' });
    const scope = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'parked:read' });
    await server.api('PATCH', `/api/resources/${resource.id}/scopes/${scope.id}`, { body: { description: 'the second event' } });
    type Listed = { event: string; state: string; nextAttemptAt: number | null; parked?: boolean };
    let parked: Listed | undefined;
    for (const deadline = Date.now() + 30_000; !parked && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const listed = (await server.api('GET', `/api/hooks/${hook.id}/deliveries`)).body as Listed[];
      parked = listed.find(({ event }) => event === 'Scope.Data.Updated' && listed.some((other) => other.event === 'Scope.Created'));
      if (parked && !parked.parked) parked = undefined;
    }
    expect(parked).toMatchObject({ state: 'pending', parked: true, nextAttemptAt: null });
    holding = false;
    await deliveriesSettled(server.database.db, 45_000);
    const after = (await server.api('GET', `/api/hooks/${hook.id}/deliveries`)).body as Listed[];
    expect(after.map(({ state, parked: stillParked }) => [state, stillParked ?? false])).toEqual([
      ['succeeded', false],
      ['succeeded', false],
    ]);
  });
});
