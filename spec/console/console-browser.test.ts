import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';

import { consoleBuiltIn } from '../../console/built-in.js';
import { browserJourneyMs, launchChromium, pageProblems, screenshotsOf } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/server.js';

const password = 'console browser password 42';
const totp = (secret: string, at = Date.now()) => generate({ secret, epoch: Math.floor(at / 1000) });

/**
 * The console's workflows in Chromium (issue 42): an administrator's first sign-in enrols a second
 * factor; then they find a user and suspend them. Every console page is checked by axe-core (WCAG
 * 2.0–2.2 A/AA) at 1280 and 390 px, in the light and the dark scheme.
 */
describe('the admin console in a real browser (Chromium, axe-core)', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer('console-browser', { BRAND_NAME: 'Acme' });
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    browser = await launchChromium();
  });
  // Each test in a browser context of its own: its own cookies, so its own sign-in.
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterEach(async () => {
    await page?.context().close();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  const shoot = screenshotsOf(() => page);

  it(
    'a first sign-in enrols an authenticator app; the administrator finds a user and suspends them after confirming, and creates an application and sees its secret once',
    async () => {
      const admin = await server.create('/api/users', { username: 'root_admin', password });
      await server.create(`/api/users/${admin.id}/roles`, { roleIds: [consoleBuiltIn.roleId] });
      const target = await server.create('/api/users', { username: 'noisy_neighbour', primaryEmail: 'noisy@example.com', password });

      await page.goto(`${server.url}/console`);
      await page.getByLabel('Username, email or phone').fill('root_admin');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // The console asks for a second factor, though the policy asks for none: enrolled now, with no skip.
      await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor();
      expect(await page.getByRole('button', { name: 'Skip for now' }).count()).toBe(0);
      const secret = await page.locator('#totp-secret').innerText();
      await page.getByLabel('The code it shows').fill(await totp(secret));
      await page.getByRole('button', { name: 'Verify and continue' }).click();
      // A factor set up in this sign-in proves nothing yet (whoever had the password set it up): one more sign-in uses it.
      await page.getByRole('heading', { name: 'One more sign-in' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Username, email or phone').fill('root_admin');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // The next window's code: the one just used is spent.
      await page.getByLabel('Code from your authenticator app').fill(await totp(secret, Date.now() + 30_000));
      await page.getByRole('button', { name: 'Verify' }).click();

      await page.getByRole('heading', { name: 'Users' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/console/users');
      await shoot('console-users');
      expect(await pageProblems(page)).toEqual([]);

      await page.getByLabel('Search').fill('noisy');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: 'noisy_neighbour' }).click();
      await page.getByRole('heading', { name: 'noisy_neighbour' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);

      await page.getByRole('link', { name: 'Suspend' }).click();
      await page.getByRole('heading', { name: 'Suspend noisy_neighbour?' }).waitFor();
      await shoot('console-confirm');
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Suspend' }).click();
      await page.getByRole('status').filter({ hasText: 'The user is suspended.' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      expect((await server.api('GET', `/api/users/${target.id}`)).body.isSuspended).toBe(true);

      await page.getByRole('link', { name: 'Change log' }).click();
      await page.getByRole('cell', { name: 'User.suspension.updated' }).first().waitFor();
      expect(await pageProblems(page)).toEqual([]);

      // Create an application and see its secret, once.
      await page.getByRole('link', { name: 'Applications' }).click();
      await page.getByRole('heading', { name: 'Applications' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('link', { name: 'Create application' }).click();
      await page.getByLabel('Name').fill('Billing portal');
      await page.getByLabel('Type').selectOption('Traditional');
      await page.getByLabel('Redirect URIs').fill('https://billing.example/callback');
      expect(await pageProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Create application' }).click();
      await page.getByRole('heading', { name: 'Billing portal' }).waitFor();
      const applicationSecret = await page.locator('code.secret').innerText();
      expect(applicationSecret.length).toBeGreaterThan(20);
      await shoot('console-application-secret');
      expect(await pageProblems(page)).toEqual([]);
      // The form posted, then redirected: a reload shows the application, not its secret again, and makes nothing twice.
      await page.reload();
      await page.getByRole('heading', { name: 'Billing portal' }).waitFor();
      expect(await page.locator('code.secret').count()).toBe(0);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'You left the console' }).waitFor();
      expect(await pageProblems(page)).toEqual([]);
      // Nine pages, each checked four ways: a bound like the pages matrix's, for a machine with a load of 8.
    },
    browserJourneyMs,
  );

  it('a user without the console permission is told why, on an accessible page', async () => {
    const user = await server.create('/api/users', { username: 'just_a_user', password });
    const secret = (await server.create(`/api/users/${user.id}/mfa-verifications`, { type: 'Totp' })).secret as string;
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Username, email or phone').fill('just_a_user');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code from your authenticator app').fill(await totp(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'You cannot enter the console' }).waitFor();
    expect(await pageProblems(page)).toEqual([]);
  });
});
