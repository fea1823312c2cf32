import * as oauth from 'openid-client';

import { consoleHelpers } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Keys, the impersonation policy and the JWT customizers in the console (issue 42): rotation and
 * deletion confirmed on their own pages (never key material shown), the policy's fields said at the
 * field when refused, a customizer's dry run of the script as typed, saved and deleted.
 */
describe('the console: keys, the impersonation policy and token claims', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    server = await startTestServer('console-security');
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body === undefined ? undefined : { body });
  type Key = { id: string; status: string; signingKeyAlgorithm?: string };
  const keys = async (type: string) => (await api('GET', `/api/configs/oidc/${type}`)).body as Key[];

  it('saves the impersonation policy; a bad lifetime, ceilings that are not JSON, or an unknown resource are said at the field', async () => {
    const admin = await helpers.administrator('console_security_mo');
    const role = await server.create('/api/roles', { name: 'Finance', description: 'Money', type: 'User' });
    const path = '/console/impersonation-policy';
    const before = (await api('GET', '/api/configs/impersonation')).body;
    const base = { maxTokenTtl: '600', scopeCeilings: '{}' };
    const short = await admin.submit(path, path, { ...base, maxTokenTtl: '10' });
    expect(short.status).toBe(400);
    expect(await short.text()).toMatch(/id="maxTokenTtl"[^>]*aria-invalid="true"/);
    const notJson = await admin.submit(path, path, { ...base, scopeCeilings: '{oops' });
    expect(notJson.status).toBe(400);
    expect(await notJson.text()).toMatch(/id="scopeCeilings"[^>]*aria-invalid="true"/);
    const unknown = await admin.submit(path, path, { ...base, scopeCeilings: JSON.stringify({ 'https://nowhere.test': ['x'] }) });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toMatch(/id="scopeCeilings"[^>]*aria-invalid="true"/);
    expect((await api('GET', '/api/configs/impersonation')).body).toEqual(before);
    const saved = await admin.submit(path, path, { ...base, requireReason: 'yes', protectedRoleIds: role.id });
    expect(saved.status).toBe(303);
    expect((await api('GET', '/api/configs/impersonation')).body).toMatchObject({
      requireReason: true,
      requireTicketId: false,
      maxTokenTtl: 600,
      protectedRoleIds: [role.id],
    });
    expect(await (await admin.browser.go(saved.headers.get('location')!)).text()).toMatch(new RegExp(`value="${role.id}"\\s+checked`));
  });

  it('dry-runs a token-claims script as typed, refuses one that does not compile at the field, saves and deletes it', async () => {
    const admin = await helpers.administrator('console_security_nia');
    const path = '/console/jwt-customizers/access-token';
    expect(await (await admin.browser.go('/console/jwt-customizers')).text()).toContain('no script');
    const script =
      'const getCustomJwtClaims = async ({ token, context, environmentVariables }) => ({ plan: context.plan, region: environmentVariables.REGION });';
    const fields = { script, environmentVariables: '{"REGION":"eu"}', tokenSample: '{}', contextSample: '{"plan":"gold"}' };
    const dryRun = await admin.submit(path, path, { ...fields, intent: 'test' });
    expect(dryRun.status).toBe(200);
    expect(await dryRun.text()).toMatch(/&quot;plan&quot;: &quot;gold&quot;,\s+&quot;region&quot;: &quot;eu&quot;/);
    expect((await api('GET', '/api/configs/jwt-customizer/access-token')).status).toBe(404);
    const broken = await admin.submit(path, path, { ...fields, script: 'const getCustomJwtClaims = async ( => {', intent: 'save' });
    expect(broken.status).toBe(400);
    expect(await broken.text()).toMatch(/id="script"[^>]*aria-invalid="true"/);
    const badSample = await admin.submit(path, path, { ...fields, contextSample: '[1,2]', intent: 'test' });
    expect(badSample.status).toBe(400);
    expect(await badSample.text()).toMatch(/id="contextSample"[^>]*aria-invalid="true"/);
    const saved = await admin.submit(path, path, { ...fields, intent: 'save' });
    expect(saved.status).toBe(303);
    expect((await api('GET', '/api/configs/jwt-customizer/access-token')).body).toMatchObject({ script, environmentVariables: { REGION: 'eu' } });
    expect((await admin.submit(`${path}/delete`, `${path}/delete`)).status).toBe(303);
    expect((await api('GET', '/api/configs/jwt-customizer/access-token')).status).toBe(404);
    expect((await admin.browser.go('/console/jwt-customizers/no-such-type')).status).toBe(404);
  });
  // Last: deleting the previous signing key ends the test's own Management API token.
  it('lists the keys with no key material, rotates the signing keys to another family after confirming, and deletes the previous one', async () => {
    const admin = await helpers.administrator('console_security_liv');
    const page = await (await admin.browser.go('/console/keys')).text();
    const [current] = await keys('private-keys');
    expect(page).toContain(current!.id);
    expect(page).not.toMatch(/"d":|&quot;d&quot;|"k":/);
    expect((await admin.browser.go('/console/keys/private-keys/rotate')).status).toBe(200);
    expect((await admin.browser.go('/console/keys/no-such-keys/rotate')).status).toBe(404);
    const rotated = await admin.submit('/console/keys/private-keys/rotate', '/console/keys/private-keys/rotate', {
      signingKeyAlgorithm: 'EC',
      rotationGracePeriod: '0',
    });
    expect(rotated.status).toBe(303);
    expect(await (await admin.browser.go(rotated.headers.get('location')!)).text()).toContain('The keys are rotated.');
    const after = await keys('private-keys');
    expect(after.find(({ status }) => status === 'current')).toMatchObject({ signingKeyAlgorithm: 'EC' });
    const previous = after.find(({ status }) => status === 'previous')!;
    expect(previous.id).toBe(current!.id);
    const remove = `/console/keys/private-keys/${previous.id}/delete`;
    expect((await admin.submit(remove, remove)).status).toBe(303);
    // What the deleted key signed no longer verifies, the test's own Management API token among them: a new one.
    const config = await server.discover(server.admin.clientId, server.admin.clientSecret);
    const { access_token: token } = await oauth.clientCredentialsGrant(config, { scope: 'all', resource: server.identity.managementApiIndicator });
    expect(((await server.api('GET', '/api/configs/oidc/private-keys', { token })).body as Key[]).map(({ status }) => status)).toEqual(['current']);
    const changes = (await server.api('GET', '/api/changes?entityId=private-keys', { token })).body as Array<{
      action: string;
      origin: { type?: string; id?: string };
    }>;
    expect(changes.map(({ action, origin }) => `${action}:${origin.id}`)).toEqual([`deleted:${admin.id}`, `rotated:${admin.id}`]);
  });
});
