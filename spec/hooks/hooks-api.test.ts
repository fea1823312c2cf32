import { Webhook } from 'standardwebhooks';

import { snapshot } from '../support/db.js';
import { deliveriesSettled, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('/api/hooks', () => {
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('hooks-api', hookTestEnv);
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.answer = () => ({ status: 204 });
  });

  it('creates, lists, reads, updates and deletes a hook, showing its signing key only once', async () => {
    const created = await server.api('POST', '/api/hooks', {
      body: { name: 'CRM sync', events: ['User.Created', 'PostSignIn'], config: { url: receiver.url, headers: { 'x-tenant': 'acme' } } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'CRM sync',
      events: ['User.Created', 'PostSignIn'],
      config: { url: receiver.url, headers: { 'x-tenant': 'acme' } },
      enabled: true,
      disabledReason: null,
      signingKey: expect.stringMatching(/^whsec_/),
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    const { id } = created.body;
    const { signingKey: _shownOnce, ...shown } = created.body;
    expect((await server.api('GET', `/api/hooks/${id}`)).body).toEqual(shown);
    const list = await server.api('GET', '/api/hooks?includeExecutionStats=true&page=1');
    expect(list.headers.get('total-number')).toBe('1');
    expect(list.body).toEqual([{ ...shown, executionStats: { requestCount: 0, successCount: 0 } }]);

    const patched = await server.api('PATCH', `/api/hooks/${id}`, { body: { name: 'CRM', events: ['User.Deleted'], enabled: false } });
    expect(patched.body).toMatchObject({ name: 'CRM', events: ['User.Deleted'], enabled: false, config: { url: receiver.url } });
    expect((await server.api('DELETE', `/api/hooks/${id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/hooks/${id}`)).status).toBe(404);
  });

  it('refuses bad hooks with a 4xx naming the problem, and writes nothing', async () => {
    const before = await snapshot(server.database.db);
    const refused: Array<[unknown, number, string]> = [
      [{ name: 'x', events: ['User.Exploded'], config: { url: receiver.url } }, 400, 'body.events.0'],
      [{ name: 'x', events: [], config: { url: receiver.url } }, 400, 'body.events'],
      [{ name: 'x', events: ['User.Created'], config: { url: 'ftp://example.com/hook' } }, 400, 'body.config.url'],
      [{ name: 'x', events: ['User.Created'], config: { url: 'http://[not-an-address/hook' } }, 400, 'body.config.url'],
      [
        { name: 'x', events: ['User.Created'], config: { url: 'https://example.com', headers: { 'webhook-signature': 'v1,forged' } } },
        400,
        'body.config.headers.webhook-signature',
      ],
      [
        { name: 'x', events: ['User.Created'], config: { url: 'https://example.com', headers: { 'x-evil': 'a\r\nInjected: 1' } } },
        400,
        'body.config.headers.x-evil',
      ],
      [{ name: 'x', events: ['User.Created'], config: { url: 'https://example.com', headers: { 'bad header': 'v' } } }, 400, 'body.config.headers'],
    ];
    for (const [body, status, field] of refused) {
      const answer = await server.api('POST', '/api/hooks', { body });
      expect({ status: answer.status, code: answer.body.code, field: answer.body.data?.field }).toEqual({ status, code: 'guard.invalid_input', field });
    }
    expect(await snapshot(server.database.db)).toEqual(before);
  });

  it('sends a sample event on demand and reports what the receiver answered', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created', 'PostRegister'], 'tested');
    receiver.answer = () => ({ status: 202, body: 'thanks' });
    const report = await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { event: 'PostRegister' } });
    expect(report.status).toBe(200);
    expect(report.body).toEqual({ ok: true, statusCode: 202, durationMs: expect.any(Number), response: 'thanks', error: null });
    const sample = receiver.received.at(-1)!;
    expect(sample.body).toMatchObject({ event: 'PostRegister', interactionEvent: 'Register', hookId: hook.id, sample: true });

    receiver.answer = () => ({ status: 500, body: 'boom' });
    expect((await server.api('POST', `/api/hooks/${hook.id}/test`)).body).toMatchObject({
      ok: false,
      statusCode: 500,
      response: 'boom',
      error: 'answered 500',
    });
    expect((await server.api('POST', '/api/hooks/nosuchhook/test')).status).toBe(404);
    // Tests are not deliveries.
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries`)).body).toEqual([]);
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  // Logto's form (packages/core/src/routes/hook.ts, libraries/hook triggerTestHook): samples of `events` to the
  // configuration given (not stored), signed with the hook's key; 204, or 422 with what went wrong.
  it("tests a configuration as Logto's does: {events, config} answers 204, or 422 with the receiver's answer", async () => {
    const hook = await subscribe(server, receiver, ['User.Created'], 'logto tested');
    const before = receiver.received.length;
    const config = { url: `${receiver.url}/other-path`, headers: { 'x-test-run': 'yes' } };
    const ok = await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events: ['PostSignIn', 'User.Created', 'PostSignIn'], config } });
    expect(ok.status).toBe(204);
    const samples = receiver.received.slice(before);
    expect(samples.map(({ body }) => body.event).sort()).toEqual(['PostSignIn', 'User.Created']);
    expect(samples.every(({ headers }) => headers['x-test-run'] === 'yes')).toBe(true);

    receiver.answer = () => ({ status: 500, body: 'boom' });
    expect(await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events: ['PostSignIn'], config } })).toMatchObject({
      status: 422,
      body: { code: 'hook.endpoint_responded_with_error', data: { responseStatus: 500, responseBody: 'boom' } },
    });
    await receiver.down();
    try {
      expect(await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events: ['PostSignIn'], config } })).toMatchObject({
        status: 422,
        body: { code: 'hook.send_test_payload_failed' },
      });
    } finally {
      await receiver.up();
    }
    // Half a form is no form: events without config, or config without events.
    expect((await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events: ['PostSignIn'] } })).status).toBe(400);
    expect((await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { config } })).status).toBe(400);
    // The configuration tested is checked as a stored one would be.
    expect((await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events: ['PostSignIn'], config: { url: 'ftp://example.com/x' } } })).status).toBe(
      400,
    );
    // Tests are not deliveries, and the hook's own configuration is unchanged.
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries`)).body).toEqual([]);
    expect((await server.api('GET', `/api/hooks/${hook.id}`)).body.config).toEqual({ url: receiver.url, headers: {} });
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  // Logto's GET /hooks/:id/recent-logs (packages/core/src/routes/hook.ts): the hook's log entries of the last day.
  it('answers recent logs as Logto does: one TriggerHook.<event> entry per attempt, by time window and log key', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created', 'Role.Deleted'], 'logged');
    receiver.answer = ({ body }) => ({ status: body.event === 'Role.Deleted' ? 400 : 200, body: 'noted' });
    const { body: role } = await server.api('POST', '/api/roles', { body: { name: 'logged role' } });
    await server.api('DELETE', `/api/roles/${role.id}`);
    await deliveriesSettled(server.database.db);

    const logs = await server.api('GET', `/api/hooks/${hook.id}/recent-logs`);
    expect(logs.status).toBe(200);
    expect(Number(logs.headers.get('total-number'))).toBe(logs.body.length);
    const created = logs.body.find(({ key }: { key: string }) => key === 'TriggerHook.Role.Created');
    expect(created).toMatchObject({
      id: expect.any(String),
      createdAt: expect.any(Number),
      payload: { key: 'TriggerHook.Role.Created', result: 'Success', hookId: hook.id, response: { statusCode: 200, body: 'noted' } },
    });
    expect(logs.body.find(({ key }: { key: string }) => key === 'TriggerHook.Role.Deleted')).toMatchObject({
      payload: { result: 'Error', response: { statusCode: 400 } },
    });

    const deleted = await server.api('GET', `/api/hooks/${hook.id}/recent-logs?logKey=TriggerHook.Role.Deleted`);
    expect(deleted.body.length).toBeGreaterThan(0);
    expect(deleted.body.every(({ key }: { key: string }) => key === 'TriggerHook.Role.Deleted')).toBe(true);
    expect((await server.api('GET', `/api/hooks/${hook.id}/recent-logs?logKey=ExchangeTokenBy.Password`)).body).toEqual([]);
    expect((await server.api('GET', `/api/hooks/${hook.id}/recent-logs?start_time=${Date.now() + 60_000}`)).body).toEqual([]);
    expect((await server.api('GET', `/api/hooks/${hook.id}/recent-logs?end_time=1`)).body).toEqual([]);
    expect((await server.api('GET', '/api/hooks/nosuchhook/recent-logs')).status).toBe(404);
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('lists deliveries with filters, redelivers one, and replays a time range to a hook', async () => {
    const hook = await subscribe(server, receiver, ['Role.Created', 'Role.Deleted'], 'replayed');
    const start = Date.now();
    receiver.answer = ({ body }) => ({ status: body.data?.name === 'refused role' ? 400 : 204 });
    const { body: accepted } = await server.api('POST', '/api/roles', { body: { name: 'accepted role' } });
    await server.api('POST', '/api/roles', { body: { name: 'refused role' } });
    await server.api('DELETE', `/api/roles/${accepted.id}`);
    await deliveriesSettled(server.database.db);

    const all = (await server.api('GET', `/api/hooks/${hook.id}/deliveries`)).body;
    expect(all.map(({ event, state }: { event: string; state: string }) => [event, state])).toEqual([
      ['Role.Deleted', 'succeeded'],
      ['Role.Created', 'failed'],
      ['Role.Created', 'succeeded'],
    ]);
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=failed`)).body).toHaveLength(1);
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries?event=Role.Deleted`)).body).toHaveLength(1);
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries?since=${Date.now() + 60_000}`)).body).toEqual([]);
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=lost`)).status).toBe(400);

    // The receiver now accepts it: a redelivery sends the same event, under the same id.
    const failed = all[1];
    receiver.answer = () => ({ status: 204 });
    const before = receiver.received.length;
    const redelivered = await server.api('POST', `/api/hooks/${hook.id}/deliveries/${failed.id}/redeliver`);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toMatchObject({ id: failed.id, state: 'pending', attemptCount: 0 });
    await receiver.waitFor((got) => got.length > before);
    expect(receiver.received[before]!.id).toBe(failed.eventId);
    await deliveriesSettled(server.database.db);
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=failed`)).body).toEqual([]);
    expect((await server.api('POST', `/api/hooks/${hook.id}/deliveries/nosuchdelivery/redeliver`)).status).toBe(404);
    // Eight refused attempts of one delivery, then its redelivery, and the other two at once.
    expect((await server.api('GET', `/api/hooks/${hook.id}?includeExecutionStats=true`)).body.executionStats).toEqual({ requestCount: 11, successCount: 3 });

    // A hook added afterwards catches up on the range.
    const late = await subscribe(server, receiver, ['Role.Created'], 'late');
    const replay = await server.api('POST', `/api/hooks/${late.id}/replay`, { body: { since: start } });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ events: 2, queued: 2 });
    await deliveriesSettled(server.database.db);
    const caughtUp = receiver.received
      .filter(({ body }) => body.hookId === late.id)
      .map(({ body }) => body.data.name)
      .sort();
    expect(caughtUp).toEqual(['accepted role', 'refused role']);
    expect((await server.api('POST', `/api/hooks/${late.id}/replay`, { body: { since: start, until: start - 1 } })).status).toBe(400);
    expect((await server.api('POST', `/api/hooks/${late.id}/replay`, { body: { since: 'yesterday' } })).status).toBe(400);

    await server.api('PATCH', `/api/hooks/${late.id}`, { body: { enabled: false } });
    expect((await server.api('POST', `/api/hooks/${late.id}/replay`, { body: { since: start } })).body.code).toBe('hook.disabled');
    for (const id of [hook.id, late.id]) await server.api('DELETE', `/api/hooks/${id}`);
  });

  it("sends the hook's own headers beside the signature headers", async () => {
    const hook = (await server.create('/api/hooks', {
      name: 'with headers',
      events: ['Role.Created'],
      config: { url: receiver.url, headers: { 'x-api-key': 'k-123', 'user-agent': 'custom-agent' } },
    })) as { id: string; signingKey: string };
    receiver.keys.push(hook.signingKey);
    const before = receiver.received.length;
    await server.api('POST', '/api/roles', { body: { name: 'headed' } });
    await receiver.waitFor((got) => got.length > before);
    const { headers, raw } = receiver.received[before]!;
    expect(headers).toMatchObject({ 'x-api-key': 'k-123', 'user-agent': 'custom-agent', 'content-type': 'application/json' });
    expect(() => new Webhook(hook.signingKey).verify(raw, headers as Record<string, string>)).not.toThrow();
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });
});

describe('the private-address guard', () => {
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // No allow-list: loopback is refused, as on a production server.
    server = await startTestServer('hooks-guard', { HOOKS_POLL_MS: '50', HOOKS_RETRY_SCHEDULE: '0' });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  it('refuses hooks whose URL names a private, loopback or link-local address', async () => {
    const port = new URL(receiver.url).port;
    for (const url of [
      receiver.url,
      `http://localhost:${port}/`,
      'http://10.0.0.8/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://0x7f.0.0.1/',
      'http://192.168.1.1/',
      'http://[fd00::1]/',
      // A trailing dot; IPv4-compatible, 6to4, Teredo and NAT64 addresses, each carrying 127.0.0.1 or 10.0.0.1.
      `http://localhost.:${port}/`,
      'http://LOCALHOST./',
      'http://[::7f00:1]/',
      'http://[2002:7f00:1::1]/',
      'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/',
      'http://[64:ff9b::a00:1]/',
      'http://[64:ff9b:1::a00:1]/',
    ]) {
      const answer = await server.api('POST', '/api/hooks', { body: { name: 'inside', events: ['Role.Created'], config: { url } } });
      expect([url, answer.status, answer.body.code]).toEqual([url, 422, 'hook.url_not_allowed']);
    }
    expect(await server.database.db.collection('hooks').countDocuments()).toBe(0);
  });

  it("refuses hop-by-hop headers in a hook's config (400 naming the header)", async () => {
    for (const header of ['Expect', 'Upgrade', 'TE', 'Keep-Alive', 'Proxy-Authorization', 'proxy-connection', 'Trailer']) {
      const answer = await server.api('POST', '/api/hooks', {
        body: { name: 'hop', events: ['Role.Created'], config: { url: 'https://hooks.example.com/', headers: { [header]: 'x' } } },
      });
      expect([header, answer.status, answer.body.code]).toEqual([header, 400, 'guard.invalid_input']);
    }
    expect(await server.database.db.collection('hooks').countDocuments()).toBe(0);
  });

  it('refuses at delivery time a name that resolves to a private address, and sends nothing', async () => {
    // As if the name had resolved elsewhere when the hook was saved (DNS rebinding).
    const port = new URL(receiver.url).port;
    const now = Date.now();
    await server.database.db.collection('hooks').insertOne({
      _id: 'rebound' as never,
      name: 'rebound',
      events: ['Role.Created'],
      config: { url: `http://localhost:${port}/hooks`, headers: {} },
      enabled: true,
      signingKeys: [{ key: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: new Date(now), expiresAt: null }],
      disabledReason: null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    });
    await server.api('POST', '/api/roles', { body: { name: 'not for loopback' } });
    await deliveriesSettled(server.database.db);
    const {
      body: [delivery],
    } = await server.api('GET', '/api/hooks/rebound/deliveries');
    expect(delivery).toMatchObject({ state: 'failed', lastStatus: null, lastError: 'localhost resolves to a private, loopback or reserved address' });
    const report = await server.api('POST', '/api/hooks/rebound/test');
    expect(report.body).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/private, loopback or reserved/) });
    // Logto's form names a configuration of its own: it is held to the same policy (server-side request forgery).
    for (const url of [`http://127.0.0.1:${port}/hooks`, `http://localhost:${port}/hooks`, 'http://169.254.169.254/latest/meta-data']) {
      const tested = await server.api('POST', '/api/hooks/rebound/test', { body: { events: ['PostSignIn'], config: { url } } });
      expect({ status: tested.status, code: tested.body.code }).toEqual({ status: 422, code: 'hook.url_not_allowed' });
    }
    expect(receiver.received).toEqual([]);
    expect(receiver.rejected).toEqual([]);
  });

  // Logto's hooks route (packages/core/src/routes/hook.ts) takes its legacy body too: one `event`,
  // and `config.retries`; with neither `event` nor `events` it answers 400 hook.missing_events.
  it("accepts Logto's legacy body (a single event, config.retries), and names a hook without events", async () => {
    const url = 'https://hooks.example.com/legacy';
    const legacy = await server.api('POST', '/api/hooks', { body: { name: 'legacy', event: 'PostRegister', config: { url, retries: 3 } } });
    expect(legacy).toMatchObject({ status: 201, body: { events: ['PostRegister'], config: { url, headers: {} } } });
    expect(legacy.body.config).not.toHaveProperty('retries');
    const none = await server.api('POST', '/api/hooks', { body: { name: 'nothing', config: { url } } });
    expect(none).toMatchObject({ status: 400, body: { code: 'hook.missing_events' } });
    await server.api('DELETE', `/api/hooks/${legacy.body.id}`);
  });
});
