import * as oauth from 'openid-client';
import { decodeJwt } from 'jose';

import { consoleBuiltIn } from '../../console/built-in.js';
import { consoleHelpers } from '../support/console.js';
import { ledgerCaughtUp } from '../support/ledger.js';
import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
/** The ledger looks often, lets records settle briefly, and signs a checkpoint on every run that chains. */
const ledgerEnv = { IMPERSONATION_LEDGER_POLL_MS: '50', IMPERSONATION_LEDGER_SETTLE_MS: '100', IMPERSONATION_CHECKPOINT_SECONDS: '0' };

/**
 * Impersonation in the console (issue 42): an administrator issues a subject token with a reason
 * and a ticket, sees it once with its audit, revokes it; the audit names the administrator, the
 * policy's demands are said at the field, and the chain is verified on a page of its own.
 */
describe('the console: impersonation', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;
  let resource: { indicator: string };
  let customer: { id: string };
  let spa: { id: string };
  let web: { id: string; secret: string };

  beforeAll(async () => {
    server = await startTestServer('console-impersonation', ledgerEnv);
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
    resource = await server.create('/api/resources', { name: 'Orders', indicator: 'https://orders.test' });
    const read = await server.create(`/api/resources/${(resource as unknown as { id: string }).id}/scopes`, { name: 'orders:read' });
    const role = await server.create('/api/roles', { name: 'Shopper', scopeIds: [read.id] });
    customer = await server.create('/api/users', { username: 'console_customer', name: 'Carla Customer' });
    await server.create(`/api/users/${customer.id}/roles`, { roleIds: [role.id] });
    spa = await server.create('/api/applications', { name: 'Support desk', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    web = await server.create('/api/applications', { name: 'Orders API', type: 'MachineToMachine' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const exchange = async (subjectToken: string) => {
    const config = await server.discover(spa.id);
    try {
      const response = await oauth.genericGrantRequest(config, grantType, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: resource.indicator,
        scope: 'orders:read',
      });
      return { ok: true as const, token: response.access_token };
    } catch (error) {
      return { ok: false as const, error: (error as { error?: string }).error };
    }
  };
  const tokenOn = (html: string) => /<code class="secret">([^<]+)<\/code>/.exec(html)?.[1];

  it('issues a subject token with a reason and a ticket, shows it once with its audit, and revokes it (the kill switch); the audit names the administrator', async () => {
    const admin = await helpers.administrator('console_imp_ada');
    const userPage = await (await admin.browser.go(`/console/users/${customer.id}`)).text();
    expect(userPage).toContain(`href="/console/users/${customer.id}/impersonate"`);
    const form = await admin.browser.go(`/console/users/${customer.id}/impersonate`);
    expect(form.status).toBe(200);
    // The administrator is the bound actor unless the form says otherwise: left empty here, any actor may exchange it.
    expect(await form.text()).toMatch(new RegExp(`id="actorId"[^>]*value="${admin.id}"`));
    const issued = await admin.submit(`/console/users/${customer.id}/impersonate`, `/console/users/${customer.id}/impersonate`, {
      reason: 'order stuck at checkout',
      ticketId: 'SUP-42',
      actorId: '',
    });
    expect(issued.status).toBe(303);
    const location = issued.headers.get('location')!;
    const impersonationId = /^\/console\/impersonations\/([^/?]+)$/.exec(location)![1]!;
    const shown = await (await admin.browser.go(location)).text();
    const subjectToken = tokenOn(shown);
    expect(subjectToken).toEqual(expect.any(String));
    expect(shown).toContain('subject_token.issued');
    expect(shown).toContain('order stuck at checkout · SUP-42');
    // Shown once.
    const again = await (await admin.browser.go(location)).text();
    expect(tokenOn(again)).toBeUndefined();

    // RFC 8693 §2.2: the token the console showed is the one the token endpoint exchanges, acting as the user.
    const granted = await exchange(subjectToken!);
    expect(granted.ok).toBe(true);
    expect(decodeJwt(granted.ok ? granted.token : '')).toMatchObject({ sub: customer.id, impersonation_id: impersonationId });

    const audit = (await server.api('GET', `/api/impersonations?impersonationId=${impersonationId}`)).body as Array<Record<string, unknown>>;
    expect(audit.find(({ kind }) => kind === 'subject_token.issued')).toMatchObject({
      administratorId: admin.id,
      issuerClientId: consoleBuiltIn.applicationId,
      reason: 'order stuck at checkout',
      ticketId: 'SUP-42',
      targetUserId: customer.id,
    });
    const changes = (await server.api('GET', `/api/changes?entityId=${impersonationId}`)).body as Array<{ action: string; origin: Record<string, unknown> }>;
    expect(changes.find(({ action }) => action === 'subject_token.issued')?.origin).toMatchObject({ type: 'user', id: admin.id });

    // The kill switch, confirmed on its own page.
    const confirm = await admin.browser.go(`${location}/revoke`);
    expect(confirm.status).toBe(200);
    const revoked = await admin.submit(`${location}/revoke`, `${location}/revoke`);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe(`${location}?done=revoked`);
    const after = await (await admin.browser.go(revoked.headers.get('location')!)).text();
    expect(after).toContain('The impersonation is revoked.');
    expect(after).toContain('impersonation.revoked');
    expect(after).not.toContain(`href="${location}/revoke"`);
    const records = (await server.api('GET', `/api/impersonations?impersonationId=${impersonationId}`)).body as Array<Record<string, unknown>>;
    expect(records.find(({ kind }) => kind === 'impersonation.revoked')).toMatchObject({ administratorId: admin.id });
    // RFC 7662 §2.2: what the exchange minted is inactive now.
    const resourceServer = await server.discover(web.id, web.secret);
    expect(await oauth.tokenIntrospection(resourceServer, granted.ok ? granted.token : '')).toEqual({ active: false });
    // A second revoke is refused with the API's reason, and writes nothing more.
    const twice = await admin.submit(`${location}/revoke`, `${location}/revoke`);
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain('already revoked');
    expect((await server.api('GET', `/api/impersonations?impersonationId=${impersonationId}`)).body).toHaveLength(records.length);
  });

  it('what the policy demands is said at the field, and nothing is issued; a suspended user is refused with the API’s reason', async () => {
    const admin = await helpers.administrator('console_imp_ben');
    expect((await server.api('PATCH', '/api/configs/impersonation', { body: { requireReason: true, requireTicketId: true } })).status).toBe(200);
    try {
      const count = async () => Number((await server.api('GET', '/api/impersonations?page_size=1')).headers.get('total-number'));
      const before = await count();
      const path = `/console/users/${customer.id}/impersonate`;
      const form = await (await admin.browser.go(path)).text();
      expect(form).toMatch(/id="reason"[^>]*required/);
      const noReason = await admin.submit(path, path, { reason: '', ticketId: 'SUP-1', actorId: '' });
      expect(noReason.status).toBe(400);
      const said = await noReason.text();
      expect(said).toMatch(/id="reason"[^>]*aria-invalid="true"/);
      expect(said).toContain('requires a `reason`');
      // What was typed comes back.
      expect(said).toContain('value="SUP-1"');
      const noTicket = await admin.submit(path, path, { reason: 'checking', ticketId: '', actorId: '' });
      expect(noTicket.status).toBe(400);
      expect(await noTicket.text()).toMatch(/id="ticketId"[^>]*aria-invalid="true"/);
      const badActor = await admin.submit(path, path, { reason: 'checking', ticketId: 'SUP-1', actorId: customer.id });
      expect(badActor.status).toBe(400);
      expect(await badActor.text()).toMatch(/id="actorId"[^>]*aria-invalid="true"/);
      const control = await admin.submit(path, path, { reason: 'line\u0007break', ticketId: 'SUP-1', actorId: '' });
      expect(control.status).toBe(400);
      expect(await count()).toBe(before);
    } finally {
      expect((await server.api('PATCH', '/api/configs/impersonation', { body: { requireReason: false, requireTicketId: false } })).status).toBe(200);
    }
    const suspended = await server.create('/api/users', { username: 'console_suspended_sam' });
    expect((await server.api('PATCH', `/api/users/${suspended.id}/is-suspended`, { body: { isSuspended: true } })).status).toBe(200);
    const refused = await admin.submit(`/console/users/${suspended.id}/impersonate`, `/console/users/${suspended.id}/impersonate`, { reason: 'x' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('suspended');
  });

  it('two revokes at once: one succeeds, the other is refused, and the audit has one revocation', async () => {
    const admin = await helpers.administrator('console_imp_cy');
    const issued = await admin.submit(`/console/users/${customer.id}/impersonate`, `/console/users/${customer.id}/impersonate`, { reason: 'race' });
    const location = issued.headers.get('location')!;
    const impersonationId = location.split('/').pop()!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await (await admin.browser.go(`${location}/revoke`)).text())![1]!;
    const statuses = await Promise.all([0, 1, 2].map(async () => (await admin.browser.form(`${location}/revoke`, { csrf })).status));
    expect(statuses.sort()).toEqual([303, 409, 409]);
    const records = (await server.api('GET', `/api/impersonations?impersonationId=${impersonationId}`)).body as Array<{ kind: string }>;
    expect(records.filter(({ kind }) => kind === 'impersonation.revoked')).toHaveLength(1);
  });

  it('lists the audit (one user’s, or all), and verifies the chain against the signed checkpoints: intact, then a changed record is found', async () => {
    const admin = await helpers.administrator('console_imp_dee');
    await admin.submit(`/console/users/${customer.id}/impersonate`, `/console/users/${customer.id}/impersonate`, { reason: 'audit me' });
    const list = await (await admin.browser.go(`/console/impersonations?user=${customer.id}`)).text();
    expect(list).toContain('audit me');
    expect(list).toContain(`Impersonations of user ${customer.id}.`);
    const nobody = await (await admin.browser.go('/console/impersonations?user=nobody-at-all')).text();
    expect(nobody).toContain('No impersonation yet.');
    const impersonations = server.database.db.collection<{ _id: string; sequence?: number; reason?: string }>('impersonations');
    await ledgerCaughtUp(server.database.db);
    const intact = await admin.browser.go('/console/impersonations/verify');
    expect(intact.status).toBe(200);
    const text = await intact.text();
    expect(text).toMatch(/The chain is intact: \d+ records checked; signed checkpoints vouch for it up to record \d+\./);
    expect(text).toContain('Record ');
    // Someone with the database changes a chained record's reason: the page says which record.
    const [victim] = await impersonations.find({ reason: 'audit me', sequence: { $exists: true } }).toArray();
    await impersonations.updateOne({ _id: victim!._id }, { $set: { reason: 'nothing to see' } });
    try {
      const broken = await (await admin.browser.go('/console/impersonations/verify')).text();
      expect(broken).toContain('The chain is broken');
      expect(broken).toContain(`record ${victim!._id} (sequence ${victim!.sequence}) was changed`);
    } finally {
      await impersonations.updateOne({ _id: victim!._id }, { $set: { reason: 'audit me' } });
    }
    expect((await admin.browser.go('/console/impersonations/no-such-impersonation')).status).toBe(404);
  });
});
