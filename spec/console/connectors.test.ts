import { consoleHelpers } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Social connectors in the console (issue 42): added from a factory with a JSON configuration and a
 * write-only client secret (a configuration that is not JSON, or that the factory refuses, said at
 * the field with nothing made), changed with the secret kept, deleted after confirming.
 */
describe('the console: social connectors', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    server = await startTestServer('console-connectors');
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const connectors = async () => (await server.api('GET', '/api/connectors')).body as Array<{ id: string; config: Record<string, unknown> }>;
  const sealedSecretOf = async (id: string) =>
    (await server.database.db.collection<{ _id: string; sealedSecret?: string }>('connectors').findOne({ _id: id }))?.sealedSecret;

  it('adds a connector from a factory, keeps its secret write-only, changes its configuration with the secret kept, and deletes it', async () => {
    const admin = await helpers.administrator('console_connectors_kim');
    const form = await (await admin.browser.go('/console/connectors/new')).text();
    expect(form).toContain('<option value="github-universal"');
    expect(form).toContain('&quot;scope&quot;');

    const notJson = await admin.submit('/console/connectors/new', '/console/connectors/new', {
      connectorId: 'github-universal',
      config: '{clientId:',
      clientSecret: 'x',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.text()).toMatch(/id="config"[^>]*aria-invalid="true"/);
    const refused = await admin.submit('/console/connectors/new', '/console/connectors/new', {
      connectorId: 'github-universal',
      config: '{}',
      clientSecret: 'x',
    });
    expect(refused.status).toBe(400);
    const said = await refused.text();
    expect(said).toMatch(/id="config"[^>]*aria-invalid="true"/);
    expect(said).toContain('clientId');
    expect(await connectors()).toEqual([]);

    const created = await admin.submit('/console/connectors/new', '/console/connectors/new', {
      connectorId: 'github-universal',
      name: 'GitHub for staff',
      config: JSON.stringify({ clientId: 'gh-client' }),
      clientSecret: 'gh-secret-value',
    });
    expect(created.status).toBe(303);
    const path = created.headers.get('location')!;
    const page = await (await admin.browser.go(path)).text();
    expect(page).toContain('gh-client');
    expect(page).not.toContain('gh-secret-value');
    const [connector] = await connectors();
    expect(connector!.config.clientSecret).toBeUndefined();
    const sealed = await sealedSecretOf(connector!.id);
    expect(sealed).toEqual(expect.any(String));

    const changed = await admin.submit(path, path, { config: JSON.stringify({ ...connector!.config, clientId: 'gh-client-2' }), clientSecret: '' });
    expect(changed.status).toBe(303);
    expect((await connectors())[0]!.config.clientId).toBe('gh-client-2');
    expect(await sealedSecretOf(connector!.id)).toBe(sealed);
    const changes = (await server.api('GET', `/api/changes?entityId=${connector!.id}`)).body as Array<{ origin: { type?: string; id?: string } }>;
    expect(changes.every(({ origin }) => origin.type === 'user' && origin.id === admin.id)).toBe(true);

    expect((await admin.submit(`${path}/delete`, `${path}/delete`)).status).toBe(303);
    expect(await connectors()).toEqual([]);
    expect((await admin.browser.go(path)).status).toBe(404);
  });
});
