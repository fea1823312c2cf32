import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { hookEvents } from '../../hooks/catalog.js';
import { createWebhookReceiver, mongoReceiverStore, type HookEventName, type ReceiverResult, type WebhookEvent } from '../../receiver/index.js';
import { createTestClock } from '../support/clock.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { takeNext } from '../support/wait.js';

/**
 * The receiver kit (`oidc-identity/receiver`) against real deliveries: the signature verified,
 * a redelivered event and a stale one (an older version arriving after a newer one was applied)
 * each processed zero times, with its bookkeeping in MongoDB.
 */
describe('the receiver kit', () => {
  let server: TestServer;
  let listener: Server;
  let url: string;
  const handled: WebhookEvent[] = [];
  const outcomes: Array<{ id: string; version?: number; outcome: ReceiverResult['outcome'] }> = [];
  let failOnce: ((event: WebhookEvent) => boolean) | undefined;
  let receive: ReturnType<typeof createWebhookReceiver>['receive'] | undefined;
  const clock = createTestClock();
  const settled = () => deliveriesSettled(server.database.db, undefined, clock);

  beforeAll(async () => {
    // A retry waits a minute of a clock that stands still until the test moves it (deliveriesSettled does).
    server = await startTestServer('receiver-kit', { ...hookTestEnv, HOOKS_RETRY_SCHEDULE: '0,60,60' }, { clock });
    listener = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        void receive!(req.headers, body).then((result) => {
          const parsed = JSON.parse(body.toString()) as WebhookEvent;
          outcomes.push({ id: parsed.id, ...(parsed.version !== undefined && { version: parsed.version }), outcome: result.outcome });
          res.writeHead(result.status).end();
        });
      });
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/webhooks`;
  });
  afterAll(async () => {
    await server.close();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  it('types every event of the catalog by name (a name the kit does not know fails to compile here)', () => {
    const lifecycle: HookEventName[] = [
      'PostSignOut',
      'Session.Revoked',
      'Grant.Created',
      'Grant.Revoked',
      'RefreshToken.ReuseDetected',
      'Token.Issued',
      'User.Roles.Updated',
    ];
    expect(hookEvents).toEqual(expect.arrayContaining(lifecycle));
    const handled: WebhookEvent = { id: 'e', event: 'Organization.Membership.Roles.Updated', createdAt: new Date().toISOString() };
    expect(hookEvents).toContain(handled.event);
  });

  it('processes each event once: a redelivery is a duplicate, an older version after a newer one is stale, a forged one is refused', async () => {
    const hook = await server.create('/api/hooks', { name: 'kit', events: ['User.Created', 'User.Data.Updated'], config: { url } });
    const kit = createWebhookReceiver({
      secrets: [hook.signingKey],
      store: await mongoReceiverStore(server.database.client, server.database.db),
      async handle(event) {
        if (failOnce?.(event)) {
          failOnce = undefined;
          throw new Error('the integrator’s database was busy');
        }
        handled.push(event);
      },
    });
    receive = kit.receive;

    const user = await server.create('/api/users', { username: 'kit_user' });
    // Version 2 fails once (answered 500, so the sender retries it later); version 3 is sent after that failure and applied first.
    failOnce = (event) => event.version === 2;
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'two' } });
    await takeNext(outcomes, new Set(), ({ version, outcome }) => version === 2 && outcome === 'failed', 'failed delivery of version 2', 20_000);
    await server.api('PATCH', `/api/users/${user.id}`, { body: { name: 'three' } });
    await takeNext(outcomes, new Set(), ({ version, outcome }) => version === 3 && outcome === 'processed', 'version 3 processed', 20_000);
    await settled();
    expect(handled.map(({ version }) => version)).toEqual([1, 3]);
    expect(outcomes.filter(({ version }) => version === 2).map(({ outcome }) => outcome)).toEqual(['failed', 'stale']);

    // The sender delivers version 3 again: the kit has processed its id, and does nothing.
    const deliveries = (await server.api('GET', `/api/hooks/${hook.id}/deliveries`)).body as Array<{ id: string; eventId: string }>;
    const third = deliveries.find(({ eventId }) => eventId === handled[1]!.id)!;
    expect((await server.api('POST', `/api/hooks/${hook.id}/deliveries/${third.id}/redeliver`)).status).toBe(202);
    await settled();
    expect(outcomes.at(-1)).toMatchObject({ id: third.eventId, outcome: 'duplicate' });
    expect(handled).toHaveLength(2);

    // Signed with another secret, or too old: refused before anything is read.
    const body = Buffer.from(JSON.stringify({ id: 'forged', event: 'User.Created' }));
    const now = Math.floor(Date.now() / 1000);
    const forged = await kit.receive({ 'webhook-id': 'forged', 'webhook-timestamp': String(now), 'webhook-signature': 'v1,AAAA' }, body);
    expect(forged).toMatchObject({ status: 401, outcome: 'rejected' });
    const old = await kit.receive({ 'webhook-id': 'old', 'webhook-timestamp': String(now - 3600), 'webhook-signature': 'v1,AAAA' }, body);
    expect(old).toMatchObject({ status: 400, outcome: 'rejected' });
    expect(handled).toHaveLength(2);
  });

  it("recognises the hook test's sample: skipped by default (200 'sample', nothing written), run by a handler that asks for samples", async () => {
    const hook = await server.create('/api/hooks', { name: 'kit samples', events: ['User.Created'], config: { url } });
    // The README's handler, as written: it reads the entity's id and writes the user into the integrator's data.
    const crm = new Map<string, unknown>();
    const readmeHandler = async (event: WebhookEvent) => {
      crm.set(event.entity!.id, (event.data as { name?: unknown }).name);
    };
    const store = await mongoReceiverStore(server.database.client, server.database.db);
    receive = createWebhookReceiver({ secrets: [hook.signingKey], store, handle: readmeHandler }).receive;
    const tested = await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { event: 'User.Created' } });
    expect(tested.status).toBe(200);
    expect(outcomes.at(-1)).toMatchObject({ outcome: 'sample' });
    expect(crm.size).toBe(0);

    const tried: WebhookEvent[] = [];
    receive = createWebhookReceiver({ secrets: [hook.signingKey], store, samples: 'handle', handle: async (event) => void tried.push(event) }).receive;
    await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { event: 'User.Created' } });
    expect(tried).toHaveLength(1);
    expect(tried[0]).toMatchObject({ sample: true, event: 'User.Created', entity: { type: 'User', id: 'sample-id' } });
    expect(tried[0]).not.toHaveProperty('version');
    // A sample leaves no bookkeeping: the same id sent again is a sample again, not a duplicate.
    await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { event: 'User.Created' } });
    expect(tried).toHaveLength(2);
  });
});
