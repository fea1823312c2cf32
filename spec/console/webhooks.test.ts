import { consoleHelpers } from '../support/console.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** A `datetime-local` value in UTC, to the second, as the console's range forms read it. */
const utc = (at: number) => new Date(at).toISOString().slice(0, 19);
const secretOn = (html: string) => /<code class="secret">([^<]+)<\/code>/.exec(html)?.[1];

/**
 * Webhooks in the console (issue 42): created with the events picker (the signing key shown once),
 * the delivery log with attempts, a test send, a range replayed and failed deliveries recovered,
 * one delivery again, a new signing key, disabled and enabled again, deleted; bad input said at
 * the field with nothing queued or made.
 */
describe('the console: webhooks', () => {
  let server: TestServer;
  let receiver: Receiver;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    receiver = await startReceiver();
    // Two attempts, a second apart: a failing receiver's deliveries fail quickly.
    server = await startTestServer('console-webhooks', { ...hookTestEnv, HOOKS_RETRY_SCHEDULE: '0,1' });
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  const hookCount = async () => ((await server.api('GET', '/api/hooks')).body as unknown[]).length;
  const deliveryCount = (hookId: string) => server.database.db.collection('hook_deliveries').countDocuments({ hookId });

  /** A hook made in the console on User.Created; the receiver learns its signing key from the page. */
  async function createHook(admin: Awaited<ReturnType<typeof helpers.administrator>>, name: string) {
    const created = await admin.submit('/console/webhooks/new', '/console/webhooks/new', { name, url: receiver.url, events: ['User.Created', 'User.Deleted'] });
    expect(created.status).toBe(303);
    const location = created.headers.get('location')!;
    const page = await (await admin.browser.go(location)).text();
    const key = secretOn(page);
    expect(key).toMatch(/^whsec_/);
    receiver.keys.push(key!);
    return { id: location.split('/').pop()!, location, page, key: key! };
  }

  it('creates a webhook with the events picker, shows its signing key once, and the change names the administrator', async () => {
    const admin = await helpers.administrator('console_hook_ana');
    const form = await (await admin.browser.go('/console/webhooks/new')).text();
    expect(form).toContain('value="User.Created"');
    expect(form).toContain('<legend>Session</legend>');
    const hook = await createHook(admin, 'CRM sync');
    expect(hook.page).toContain('The webhook is created.');
    expect(await (await admin.browser.go(hook.location)).text()).not.toContain(hook.key);
    expect((await server.api('GET', `/api/hooks/${hook.id}`)).body).toMatchObject({
      name: 'CRM sync',
      events: ['User.Created', 'User.Deleted'],
      enabled: true,
    });
    const changes = (await server.api('GET', `/api/changes?entityId=${hook.id}`)).body as Array<{ origin: Record<string, unknown> }>;
    expect(changes[0]?.origin).toMatchObject({ type: 'user', id: admin.id });
    expect(await (await admin.browser.go('/console/webhooks')).text()).toContain('CRM sync');
    // A change made in the console is announced naming the administrator (and no application).
    const doomed = await server.create('/api/users', { username: 'announced_deletion' });
    const remove = `/console/users/${doomed.id}/delete`;
    expect((await admin.submit(remove, remove)).status).toBe(303);
    await deliveriesSettled(server.database.db);
    const announced = receiver.received.find(({ body }) => body?.event === 'User.Deleted' && body?.data?.id === doomed.id);
    expect(announced?.body).toMatchObject({ administratorId: admin.id, method: 'DELETE', matchedRoute: '/users/:userId' });
    expect(announced?.body.clientId).toBeUndefined();
  });

  it('a webhook the API refuses is said at the field, and nothing is made', async () => {
    const admin = await helpers.administrator('console_hook_bo');
    const before = await hookCount();
    const noEvents = await admin.submit('/console/webhooks/new', '/console/webhooks/new', { name: 'Nothing', url: receiver.url });
    expect(noEvents.status).toBe(400);
    expect(await noEvents.text()).toMatch(/class="events"[^>]*aria-invalid="true"/);
    const badUrl = await admin.submit('/console/webhooks/new', '/console/webhooks/new', { name: 'Bad', url: 'ftp://x', events: 'User.Created' });
    expect(badUrl.status).toBe(400);
    const page = await badUrl.text();
    expect(page).toMatch(/id="url"[^>]*aria-invalid="true"/);
    // What was chosen comes back chosen.
    expect(page).toMatch(/value="User.Created"\s+checked/);
    const badEvent = await admin.submit('/console/webhooks/new', '/console/webhooks/new', { name: 'Bad', url: receiver.url, events: 'No.Such' });
    expect(badEvent.status).toBe(400);
    expect(await hookCount()).toBe(before);
  });

  it('shows the delivery log with attempts, sends a test, replays a range (each event again, by id), and sends one delivery again', async () => {
    const admin = await helpers.administrator('console_hook_cai');
    const hook = await createHook(admin, 'Replay target');
    const since = Date.now() - 1000;
    const users: Array<{ id: string }> = [];
    for (const name of ['replay_one', 'replay_two', 'replay_three']) users.push(await server.create('/api/users', { username: name }));
    await deliveriesSettled(server.database.db);
    const ours = () => receiver.received.filter(({ body }) => users.some(({ id }) => body?.data?.id === id && body?.event === 'User.Created'));
    const firstRound = new Set(ours().map(({ id }) => id));
    expect(firstRound.size).toBe(3);

    const log = await (await admin.browser.go(hook.location)).text();
    expect(log).toContain('User.Created');
    expect(log).toContain('HTTP 204');
    expect(log).toContain('Succeeded');

    const tested = await admin.submit(hook.location, `${hook.location}/test`);
    expect(tested.status).toBe(303);
    expect(await (await admin.browser.go(hook.location)).text()).toMatch(/The endpoint accepted the test: HTTP 204 in \d+ ms\./);

    // Bad ranges: said at the field, nothing queued.
    const queuedBefore = await deliveryCount(hook.id);
    const empty = await admin.submit(hook.location, `${hook.location}/replay`, { since: '', until: '', mode: 'all' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toMatch(/id="replay-since"[^>]*aria-invalid="true"/);
    const backwards = await admin.submit(hook.location, `${hook.location}/replay`, { since: utc(Date.now()), until: utc(Date.now() - 3_600_000), mode: 'all' });
    expect(backwards.status).toBe(400);
    expect(await backwards.text()).toContain('body.since must not be after body.until');
    const garbage = await admin.submit(hook.location, `${hook.location}/replay`, { since: 'yesterday', mode: 'all' });
    expect(garbage.status).toBe(400);
    expect(await deliveryCount(hook.id)).toBe(queuedBefore);

    const replayed = await admin.submit(hook.location, `${hook.location}/replay`, { since: utc(since), until: '', mode: 'all' });
    expect(replayed.status).toBe(303);
    const notice = await (await admin.browser.go(hook.location)).text();
    expect(notice).toMatch(/(\d+) events in the range; \1 queued for delivery\./);
    await deliveriesSettled(server.database.db);
    // At least once, by event id: each of the three came again under its own id.
    const counts = new Map<string, number>();
    for (const { id } of ours()) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...firstRound].sort());
    expect([...counts.values()].every((count) => count >= 2)).toBe(true);

    // One delivery again, from the log's button.
    const [delivery] = (await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=succeeded&page_size=1`)).body as Array<{ id: string; eventId: string }>;
    const before = receiver.received.filter(({ id }) => id === delivery!.eventId).length;
    const again = await admin.submit(hook.location, `${hook.location}/deliveries/${delivery!.id}/redeliver`);
    expect(again.status).toBe(303);
    expect(await (await admin.browser.go(hook.location)).text()).toContain('The delivery is queued again.');
    await receiver.waitFor((received) => received.filter(({ id }) => id === delivery!.eventId).length > before);
    const unknown = await admin.submit(hook.location, `${hook.location}/deliveries/no-such-delivery/redeliver`);
    expect(unknown.status).toBe(404);
  });

  it('recovers failed deliveries of a range; a new signing key is shown once and signs what follows; disabled, a replay is refused; enabled again; deleted', async () => {
    const admin = await helpers.administrator('console_hook_dax');
    const hook = await createHook(admin, 'Flaky target');
    const since = Date.now() - 1000;
    receiver.answer = () => ({ status: 500 });
    try {
      await server.create('/api/users', { username: 'recover_me' });
      await deliveriesSettled(server.database.db);
    } finally {
      receiver.answer = () => ({ status: 204 });
    }
    const failedLog = await (await admin.browser.go(`${hook.location}?state=failed`)).text();
    expect(failedLog).toContain('Failed');
    expect(failedLog).toContain('HTTP 500');
    const recovered = await admin.submit(hook.location, `${hook.location}/recover`, { since: utc(since), until: '', mode: 'all' });
    expect(recovered.status).toBe(303);
    expect(await (await admin.browser.go(hook.location)).text()).toMatch(/[1-9]\d* failed deliveries in the range: [1-9]\d* queued again, 0 skipped\./);
    await deliveriesSettled(server.database.db);
    expect((await server.api('GET', `/api/hooks/${hook.id}/deliveries?state=failed`)).body).toHaveLength(0);

    // A new signing key, confirmed on its own page, shown once; the receiver then knows only it.
    expect((await admin.browser.go(`${hook.location}/rotate`)).status).toBe(200);
    const rotated = await admin.submit(`${hook.location}/rotate`, `${hook.location}/rotate`);
    expect(rotated.status).toBe(303);
    const key = secretOn(await (await admin.browser.go(hook.location)).text());
    expect(key).toMatch(/^whsec_/);
    expect(key).not.toBe(hook.key);
    receiver.keys.splice(receiver.keys.indexOf(hook.key), 1, key!);
    const rejectedBefore = receiver.rejected.length;
    await server.create('/api/users', { username: 'after_rotation' });
    await deliveriesSettled(server.database.db);
    expect(receiver.rejected.length).toBe(rejectedBefore);

    const disabled = await admin.submit(`${hook.location}/disable`, `${hook.location}/disable`);
    expect(disabled.status).toBe(303);
    expect(await (await admin.browser.go(hook.location)).text()).toContain('Disabled (by an administrator)');
    const refused = await admin.submit(hook.location, `${hook.location}/replay`, { since: utc(since), mode: 'all' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('the hook is disabled; enable it first');
    const enabled = await admin.submit(`${hook.location}/enable`, `${hook.location}/enable`, { mode: 'skip' });
    expect(enabled.status).toBe(303);
    expect((await server.api('GET', `/api/hooks/${hook.id}`)).body.enabled).toBe(true);

    // Edited: no event at all is said at the picker; a new URL and events are saved, the rest of its configuration kept.
    expect((await server.api('PATCH', `/api/hooks/${hook.id}`, { body: { config: { url: receiver.url, headers: { 'x-tenant': 'acme' } } } })).status).toBe(200);
    const edit = `${hook.location}/edit`;
    expect(await (await admin.browser.go(edit)).text()).toMatch(/value="User.Created"\s+checked/);
    const none = await admin.submit(edit, edit, { name: 'Flaky target', url: receiver.url });
    expect(none.status).toBe(400);
    expect(await none.text()).toMatch(/class="events"[^>]*aria-invalid="true"/);
    const edited = await admin.submit(edit, edit, { name: 'Steady target', url: `${receiver.url}?v=2`, events: ['User.Deleted'] });
    expect(edited.status).toBe(303);
    expect((await server.api('GET', `/api/hooks/${hook.id}`)).body).toMatchObject({
      name: 'Steady target',
      events: ['User.Deleted'],
      config: { url: `${receiver.url}?v=2`, headers: { 'x-tenant': 'acme' } },
    });

    const deleted = await admin.submit(`${hook.location}/delete`, `${hook.location}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/console/webhooks');
    expect((await server.api('GET', `/api/hooks/${hook.id}`)).status).toBe(404);
    expect((await admin.browser.go(hook.location)).status).toBe(404);
  });
});
