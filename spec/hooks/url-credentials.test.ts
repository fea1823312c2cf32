import { snapshot } from '../support/db.js';
import { hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The outside attack's fourth finding: `http://user:pass@host/` was accepted as a hook URL and
 * repeated verbatim in `Hook.Disabled` and `Hook.DeliveryExhausted`, which go to other hooks and to
 * holders of a `hook-events` token. A URL with user information is refused when saved; a URL is
 * shown beyond its hook as scheme, host and path only (no credentials, no query string).
 */
describe('webhook URLs never leak the credentials they carry', () => {
  let server: TestServer;
  let watcher: Receiver;
  let gone: Receiver;

  beforeAll(async () => {
    watcher = await startReceiver();
    gone = await startReceiver();
    server = await startTestServer('hook-url-credentials', hookTestEnv);
  });
  afterAll(async () => {
    await server.close();
    await watcher.close();
    await gone.close();
  });

  it('refuses user information in a hook URL when created, changed or tested (400, the field named), writing nothing', async () => {
    const withCredentials = gone.url.replace('http://', 'http://integrator:pass-secret@');
    const before = await snapshot(server.database.db);
    const created = await server.api('POST', '/api/hooks', { body: { name: 'with credentials', events: ['Role.Created'], config: { url: withCredentials } } });
    expect({ status: created.status, code: created.body.code, field: created.body.data?.field }).toEqual({
      status: 400,
      code: 'guard.invalid_input',
      field: 'body.config.url',
    });
    const hook = await server.create('/api/hooks', { name: 'plain', events: ['Role.Created'], config: { url: gone.url } });
    const afterCreate = await snapshot(server.database.db);
    const patched = await server.api('PATCH', `/api/hooks/${hook.id}`, { body: { config: { url: withCredentials } } });
    expect({ status: patched.status, field: patched.body.data?.field }).toEqual({ status: 400, field: 'body.config.url' });
    const tested = await server.api('POST', `/api/hooks/${hook.id}/test`, { body: { events: ['Role.Created'], config: { url: withCredentials } } });
    expect({ status: tested.status, field: tested.body.data?.field }).toEqual({ status: 400, field: 'body.config.url' });
    expect(await snapshot(server.database.db)).toBe(afterCreate);
    expect(before).not.toBe(afterCreate);
    await server.api('DELETE', `/api/hooks/${hook.id}`);
  });

  it('shows a hook’s URL to other hooks without its query string, nor the credentials of one saved before they were refused', async () => {
    const operational = ['Hook.Disabled', 'Hook.DeliveryExhausted'];
    const watch = await server.create('/api/hooks', { name: 'ops watcher', events: operational, config: { url: watcher.url } });
    watcher.keys.push(watch.signingKey);
    // A query string may carry a receiver's token; user information could be saved before this release.
    const withQuery = await server.create('/api/hooks', { name: 'query token', events: ['Role.Created'], config: { url: `${gone.url}?token=query-secret` } });
    const legacy = await server.create('/api/hooks', { name: 'legacy credentials', events: ['Role.Created'], config: { url: gone.url } });
    await server.database.db
      .collection('hooks')
      .updateOne({ _id: legacy.id }, { $set: { 'config.url': gone.url.replace('http://', 'http://integrator:pass-secret@') } });
    gone.keys.push(withQuery.signingKey, legacy.signingKey);
    gone.answer = () => ({ status: 410 });
    await server.create('/api/roles', { name: 'sent to a gone endpoint' });
    const about = (id: string) => watcher.received.filter(({ body }) => JSON.stringify(body.data).includes(id));
    await watcher.waitFor(() => about(withQuery.id).length >= 2 && about(legacy.id).length >= 2, 30_000);

    const shown = gone.url; // http://127.0.0.1:<port>/hooks
    for (const { id } of [withQuery, legacy]) {
      const disabled = about(id).find(({ body }) => body.event === 'Hook.Disabled')!;
      const exhausted = about(id).find(({ body }) => body.event === 'Hook.DeliveryExhausted')!;
      expect(disabled.body.data).toMatchObject({ id, url: shown });
      expect(exhausted.body.data).toMatchObject({ hook: { id, url: shown } });
    }
    const everything = JSON.stringify([watcher.received.map(({ raw }) => raw), (await server.api('GET', '/api/hook-events?limit=100')).body]);
    expect(everything).not.toMatch(/query-secret|pass-secret|integrator:/);
    // Each delivery record and attempt of the hooks is free of them too.
    for (const { id } of [withQuery, legacy]) {
      expect(JSON.stringify((await server.api('GET', `/api/hooks/${id}/deliveries`)).body)).not.toMatch(/query-secret|pass-secret/);
      expect(JSON.stringify((await server.api('GET', `/api/hooks/${id}/recent-logs`)).body)).not.toMatch(/query-secret|pass-secret/);
    }
  });
});
