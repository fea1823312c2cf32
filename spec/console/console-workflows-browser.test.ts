import type { Browser, Page } from 'playwright-core';

import { consoleBuiltIn } from '../../console/built-in.js';
import { browserJourneyMs, launchChromium, pageProblems, screenshotsOf } from '../support/chromium.js';
import { totpAt } from '../support/console.js';
import { deliveriesSettled, hookTestEnv } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const password = 'console workflows password 7';

/**
 * The console's impersonation and webhook workflows in Chromium (issue 42): impersonate a user with
 * a reason and a ticket, see the subject token once, revoke it, and verify the audit chain; create
 * a webhook with the events picker and replay a range of its events. Every page is checked by
 * axe-core (WCAG 2.0–2.2 A/AA) at 1280 and 390 px, in the light and the dark scheme.
 */
describe('the admin console’s workflows in a real browser (Chromium, axe-core)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('console-workflows', { ...hookTestEnv, BRAND_NAME: 'Acme' });
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    browser = await launchChromium();
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterEach(async () => {
    await page?.context().close();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
  });
  const shoot = screenshotsOf(() => page);

  /** An administrator with an authenticator app, signed in to the console through the pages. */
  async function signInAs(username: string) {
    const admin = await server.create('/api/users', { username, password });
    await server.create(`/api/users/${admin.id}/roles`, { roleIds: [consoleBuiltIn.roleId] });
    const secret = (await server.create(`/api/users/${admin.id}/mfa-verifications`, { type: 'Totp' })).secret as string;
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Username, email or phone').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code from your authenticator app').fill(await totpAt(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    return admin as { id: string };
  }

  it(
    'impersonates a user with a reason and a ticket, sees the subject token once, revokes it, and verifies the audit chain',
    async () => {
      const admin = await signInAs('support_lead');
      const customer = await server.create('/api/users', { username: 'pat_customer', name: 'Pat Customer' });
      await page.goto(`${server.url}/console/users/${customer.id}`);
      await page.getByRole('link', { name: 'Impersonate' }).click();
      await page.getByRole('heading', { name: 'Impersonate Pat Customer' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByLabel('Reason').fill('cannot see last invoice');
      await page.getByLabel('Ticket').fill('SUP-1187');
      await page.getByLabel('Actor (user ID)').fill('');
      await page.getByRole('button', { name: 'Issue subject token' }).click();
      await page.getByRole('heading', { name: 'Impersonation', exact: true }).waitFor();
      const token = await page.locator('code.secret').innerText();
      expect(token.length).toBeGreaterThan(20);
      await page.getByRole('cell', { name: 'cannot see last invoice · SUP-1187' }).waitFor();
      await shoot('console-impersonation');
      expect(await pageProblems(page)).toEqual([]);
      await page.reload();
      expect(await page.locator('code.secret').count()).toBe(0);

      await page.getByRole('link', { name: 'Revoke' }).click();
      await page.getByRole('heading', { name: /^Revoke impersonation / }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('status').filter({ hasText: 'The impersonation is revoked.' }).waitFor();
      await page.getByRole('cell', { name: 'impersonation.revoked' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      const records = (await server.api('GET', `/api/impersonations?targetUserId=${customer.id}`)).body as Array<{ kind: string; administratorId?: string }>;
      // The revocation also voided the unspent subject token; the issue and the revocation name the administrator.
      expect(records.map(({ kind }) => kind)).toEqual(expect.arrayContaining(['impersonation.revoked', 'subject_token.issued', 'subject_token.voided']));
      for (const kind of ['impersonation.revoked', 'subject_token.issued'])
        expect(records.find((record) => record.kind === kind)?.administratorId).toBe(admin.id);

      await page.getByRole('link', { name: 'Impersonation audit' }).first().click();
      await page.getByRole('heading', { name: 'Impersonation audit' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('link', { name: 'Verify the chain' }).click();
      await page.getByRole('heading', { name: 'The audit chain' }).waitFor();
      expect(await page.getByRole('status').innerText()).toMatch(/^The chain is intact/);
      expect(await pageProblems(page)).toEqual([]);
    },
    browserJourneyMs,
  );

  it(
    'creates a webhook with the events picker, sees its deliveries, and replays a range of its events',
    async () => {
      await signInAs('integrations_lead');
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('link', { name: 'Create webhook' }).click();
      await page.getByLabel('Name').fill('Warehouse sync');
      await page.getByLabel('Endpoint URL').fill(receiver.url);
      await page.getByLabel('User.Created', { exact: true }).check();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByRole('heading', { name: 'Warehouse sync' }).waitFor();
      receiver.keys.push(await page.locator('code.secret').innerText());
      expect(await pageProblems(page)).toEqual([]);

      const since = new Date(Date.now() - 60_000).toISOString().slice(0, 19);
      for (const username of ['shipped_one', 'shipped_two']) await server.create('/api/users', { username });
      await deliveriesSettled(server.database.db);
      const arrived = () => receiver.received.filter(({ body }) => body?.event === 'User.Created' && /^shipped_/.test(body?.data?.username ?? '')).length;
      expect(arrived()).toBe(2);
      await page.reload();
      await page
        .getByRole('cell', { name: /User\.Created/ })
        .first()
        .waitFor();

      const replay = page.getByRole('group', { name: 'Replay a range' });
      await replay.getByLabel('From (UTC)').fill(since);
      await replay.getByRole('button', { name: 'Replay a range' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /events in the range; \d+ queued for delivery/ })
        .waitFor();
      await shoot('console-webhook');
      expect(await pageProblems(page)).toEqual([]);
      await deliveriesSettled(server.database.db);
      // At least once: each of the two events arrived again.
      expect(arrived()).toBeGreaterThanOrEqual(4);
    },
    browserJourneyMs,
  );
});
