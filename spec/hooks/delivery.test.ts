import { Webhook } from 'standardwebhooks';

import { loadSettings } from '../../settings.js';
import { silentLogger } from '../../lib/logger.js';
import { startStandaloneServer, type StandaloneServer } from '../../standalone.js';
import { testMongoUri } from '../support/env.js';
import { createTestClock, type TestClock } from '../support/clock.js';
import { deliveriesSettled, distinctEvents, fastForward, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('webhook delivery', () => {
  let server: TestServer;
  let receiver: Receiver;
  // The worker's time: the tests move it to each retry instead of waiting for it.
  const clock: TestClock = createTestClock();
  const settled = (timeoutMs?: number) => deliveriesSettled(server.database.db, timeoutMs, clock);

  beforeAll(async () => {
    receiver = await startReceiver();
    // A 2 s limit for an attempt: one test is about a receiver that outlasts it.
    server = await startTestServer('hook-delivery', { ...hookTestEnv, HOOKS_TIMEOUT_MS: '2000', HOOKS_KEY_OVERLAP: '2' }, { clock });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.answer = () => ({ status: 204 });
  });

  const createRole = async (name: string) => (await server.create('/api/roles', { name })) as { id: string };

  it('retries while the receiver is down, and delivers everything once it is back', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created'], 'down then up');
    await receiver.down();
    const roles: Array<{ id: string }> = [];
    for (let i = 0; i < 5; i += 1) roles.push(await createRole(`while down ${i}`));
    // Each has been tried and refused at least twice.
    const deadline = Date.now() + 60_000;
    while ((await server.database.db.collection('hook_deliveries').countDocuments({ hookId: hook.id, attempts: { $gte: 2 } })) < 5 && Date.now() < deadline) {
      await fastForward(server.database.db, clock);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await receiver.up();
    await receiver.waitFor((got) => roles.every((role) => got.some(({ body }) => body.data?.id === role.id)));
    await settled();
    const { body: deliveries } = await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=succeeded`);
    expect(deliveries).toHaveLength(5);
    for (const delivery of deliveries) {
      expect(delivery.attemptCount).toBeGreaterThanOrEqual(3);
      // The refused attempts say why; the last one got the receiver's 204.
      expect(delivery.attempts[0]).toMatchObject({ ok: true, statusCode: 204 });
      expect(delivery.attempts.at(-1)).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/ECONNREFUSED/) });
    }
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('skips a retry or a redelivery of an event the hook no longer subscribes to', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created'], 'changes its mind');
    const sent = await createRole('sent before the change');
    await receiver.waitFor((got) => got.some(({ body }) => body.data?.id === sent.id));
    await settled();
    // Its retry waits 2 s of the worker's clock, which stands still until the test moves it, so
    // that no attempt is under way while the hook changes.
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '2' } });
    const retried = await createRole('retried after the change');
    const deadline = Date.now() + 60_000;
    while ((await server.database.db.collection('hook_attempts').countDocuments({ hookId: hook.id, ok: false })) < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await server.api('PATCH', `/api/hooks/${hook.id}`, { body: { events: ['Role.Deleted'] } })).status).toBe(200);
    const sentOf = (id: string) => receiver.received.filter(({ body }) => body.data?.id === id).length;
    const [sentBefore, retriedBefore] = [sentOf(sent.id), sentOf(retried.id)];
    receiver.answer = () => ({ status: 204 });
    const {
      body: [succeeded],
    } = await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=succeeded`);
    expect((await server.api('POST', `/api/hooks/${hook.id}/deliveries/${succeeded.id}/redeliver`)).status).toBe(202);
    await settled();
    const { body: deliveries } = await server.api('GET', `/api/hooks/${hook.id}/deliveries`);
    expect(deliveries.map(({ state, lastError }: { state: string; lastError: string | null }) => [state, lastError])).toEqual([
      ['skipped', 'the hook no longer subscribes to this event'],
      ['skipped', 'the hook no longer subscribes to this event'],
    ]);
    // Nothing more reached the receiver once the hook had changed.
    expect([sentOf(sent.id), sentOf(retried.id)]).toEqual([sentBefore, retriedBefore]);
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('honours Retry-After, and records each attempt with its status, duration and answer', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created'], 'retry after');
    const times: number[] = [];
    receiver.answer = () => {
      times.push(Date.now());
      return times.length === 1 ? { status: 503, headers: { 'retry-after': '2' }, body: 'busy, come back later' } : { status: 200, body: 'ok' };
    };
    await createRole('retry after');
    await receiver.waitFor(() => times.length === 1);
    await settled();
    await receiver.waitFor(() => times.length === 2);
    const {
      body: [delivery],
    } = await server.api('GET', `/api/hooks/${hook.id}/deliveries`);
    // The schedule says 1 s; the receiver asked for 2 (times on the worker's clock).
    expect(delivery.attempts[0].startedAt - delivery.attempts[1].startedAt).toBeGreaterThanOrEqual(2000);
    expect(delivery).toMatchObject({ state: 'succeeded', attemptCount: 2, lastStatus: 200, lastError: null, nextAttemptAt: null });
    expect(delivery.attempts).toEqual([
      { id: expect.any(String), startedAt: expect.any(Number), durationMs: expect.any(Number), ok: true, statusCode: 200, response: 'ok', error: null },
      {
        id: expect.any(String),
        startedAt: expect.any(Number),
        durationMs: expect.any(Number),
        ok: false,
        statusCode: 503,
        response: 'busy, come back later',
        error: 'answered 503',
      },
    ]);
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('gives up after the last attempt of the schedule, and a timeout counts as a failure', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created'], 'slow or failing');
    // The first and the last of the eight attempts outlast the 2 s timeout; the others fail at once.
    let answered = 0;
    receiver.answer = () => ((answered += 1) === 1 || answered === 8 ? { status: 204, delayMs: 2500 } : { status: 503 });
    await createRole('too slow');
    await settled(60_000);
    const {
      body: [delivery],
    } = await server.api('GET', `/api/hooks/${hook.id}/deliveries`);
    expect(delivery).toMatchObject({ state: 'failed', attemptCount: 8, lastStatus: null, lastError: 'no answer within 2000 ms' });
    // A timed-out first attempt was retried like any other failure (the attempts are newest first).
    expect(delivery.attempts.at(-1)).toMatchObject({ ok: false, statusCode: null, error: 'no answer within 2000 ms' });
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  }, 90_000);

  it('disables a hook whose endpoint answers 410 Gone, and says why', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created'], 'gone');
    receiver.answer = () => ({ status: 410 });
    await createRole('gone');
    await settled();
    const { body } = await server.api('GET', `/api/hooks/${hook.id}`);
    expect(body).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^the endpoint answered 410 Gone/) });
    const {
      body: [delivery],
    } = await server.api('GET', `/api/hooks/${hook.id}/deliveries`);
    expect(delivery).toMatchObject({ state: 'failed', attemptCount: 1, lastStatus: 410 });
    // A disabled hook gets nothing new.
    const before = receiver.received.length;
    await createRole('after gone');
    await settled();
    expect(receiver.received.length).toBe(before);
    // Enabling it by hand clears the reason.
    const enabled = await server.api('PATCH', `/api/hooks/${hook.id}`, { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('disables a hook that keeps failing past HOOKS_DISABLE_AFTER', async () => {
    const failingClock = createTestClock();
    const failing = await startTestServer(
      'hook-failing',
      { ...hookTestEnv, HOOKS_DISABLE_AFTER: '1', HOOKS_RETRY_SCHEDULE: '0,1,1,1,1' },
      { clock: failingClock },
    );
    try {
      const hook = await subscribe(failing, receiver, ['Role.Created'], 'failing');
      receiver.answer = () => ({ status: 500 });
      await failing.create('/api/roles', { name: 'failing' });
      await deliveriesSettled(failing.database.db, undefined, failingClock);
      const { body } = await failing.api('GET', `/api/hooks/${hook.id}`);
      expect(body).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^every attempt failed from .* to /) });
    } finally {
      await failing.close();
    }
  });

  it('signs with both keys during a rotation, then with the new one only', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created'], 'rotating');
    const oldKey = hook.signingKey;
    const rotated = await server.api('PATCH', `/api/hooks/${hook.id}/signing-key`);
    expect(rotated.status).toBe(200);
    const newKey = rotated.body.signingKey as string;
    expect(newKey).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newKey).not.toBe(oldKey);
    receiver.keys.push(newKey);

    const during = receiver.received.length;
    await createRole('during overlap');
    await receiver.waitFor((got) => got.length > during);
    const message = receiver.received[during]!;
    expect((message.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    // Receivers holding either key accept it.
    for (const key of [oldKey, newKey]) expect(() => new Webhook(key).verify(message.raw, message.headers as Record<string, string>)).not.toThrow();

    clock.advance(2100);
    const after = receiver.received.length;
    await createRole('after overlap');
    await receiver.waitFor((got) => got.length > after);
    const later = receiver.received[after]!;
    expect((later.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(() => new Webhook(newKey).verify(later.raw, later.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(oldKey).verify(later.raw, later.headers as Record<string, string>)).toThrow();
    // The key is shown when created or rotated, never when read.
    expect((await server.api('GET', `/api/hooks/${hook.id}`)).body.signingKey).toBeUndefined();
    expect(JSON.stringify((await server.api('GET', '/api/hooks')).body)).not.toContain('whsec_');
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('sent nothing that the standardwebhooks verifier refused', () => {
    expect(receiver.rejected).toEqual([]);
  });
});

describe('making deliveries from recorded events', () => {
  let recorder: TestServer;
  let deliverer: StandaloneServer | undefined;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    recorder = await startTestServer('hook-fan-out', { ...hookTestEnv, HOOKS_DELIVERY: 'false' });
  });
  afterAll(async () => {
    await deliverer?.close();
    await recorder.close();
    await receiver.close();
  });
  /** A second, delivering server over the recorder's database (once). */
  const startDeliverer = async () => {
    deliverer ??= await startStandaloneServer(
      { ...loadSettings({ PORT: '0', ...hookTestEnv }), mongodbUri: testMongoUri() },
      { logger: silentLogger, dbName: recorder.database.db.databaseName },
    );
  };

  it('gives a hook the events recorded after its creation, not a backlog older than it, once a worker runs', async () => {
    const { db } = recorder.database;
    const older = (await recorder.create('/api/roles', { name: 'before the hook' })) as { id: string };
    // Recorded a minute ago, and no worker has run since: past any clock disagreement.
    const aMinuteAgo = new Date(Date.now() - 60_000);
    await db.collection('hook_events').updateOne({ 'payload.data.id': older.id }, { $set: { createdAt: aMinuteAgo, fanOutDue: aMinuteAgo } });
    const hook = await subscribe(recorder, receiver, ['Role.Created'], 'fan-out');
    const newer = (await recorder.create('/api/roles', { name: 'after the hook' })) as { id: string };
    // The write path recorded both events and made no delivery: that is the worker's part.
    expect(await db.collection('hook_events').countDocuments({ fanOutDue: { $type: 'date' } })).toBe(2);
    expect(await db.collection('hook_deliveries').countDocuments({})).toBe(0);

    await startDeliverer();
    await receiver.waitFor((got) => got.some(({ body }) => body.data?.id === newer.id));
    await deliveriesSettled(db);
    // At least once: a redelivery of the same event (the same webhook-id) is the same event.
    expect(distinctEvents(receiver.received).map(({ body }) => body.data?.id)).toEqual([newer.id]);
    expect(await db.collection('hook_deliveries').countDocuments({ hookId: hook.id })).toBe(1);

    // The older event is still there for a replay, which does deliver it.
    const replay = await recorder.api('POST', `/api/hooks/${hook.id}/replay`, { body: { since: aMinuteAgo.getTime() - 1000 } });
    expect(replay.status).toBe(202);
    await receiver.waitFor((got) => got.some(({ body }) => body.data?.id === older.id));
  });

  it('fans out an event left to a worker that stopped: another takes it over after two polls', async () => {
    const { db } = recorder.database;
    await subscribe(recorder, receiver, ['Role.Created'], 'take-over');
    const role = (await recorder.create('/api/roles', { name: 'left behind' })) as { id: string };
    // As if recorded by a delivering process that stopped before its worker got to it.
    await db.collection('hook_events').updateOne({ 'payload.data.id': role.id }, { $set: { fanOutBy: 'a-stopped-worker' } });
    await startDeliverer();
    await receiver.waitFor((got) => got.some(({ body }) => body.data?.id === role.id));
    await deliveriesSettled(db);
    expect(await db.collection('hook_events').countDocuments({ fanOutDue: { $type: 'date' } })).toBe(0);
  });
});
