import type { Browser, Page } from 'playwright-core';

import type { RelyingParty } from '../../examples/relying-party.js';
import { launchChromium, pageProblems, screenshotsOf, startExampleApp } from '../support/chromium.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startSamlIdp, type SamlIdp } from '../support/saml-idp.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Enterprise SSO on the pages, in Chromium: "Use your company account", the work email whose
 * domain finds the SAML connector, the IdP's page (samlify, in this process) posting a signed
 * response to our assertion consumer, and back through the callback to the example web app.
 */
describe('SAML single sign-on on the pages in a real browser (Chromium)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let idp: SamlIdp;
  let rp: RelyingParty;
  let browser: Browser;
  let page: Page;
  const shoot = screenshotsOf(() => page);
  /** Each page state reached: what axe-core and the layout checks find at both widths and in both schemes. */
  const problems = new Map<string, string[]>();

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('sso-browser', { ...hookTestEnv, BRAND_NAME: 'Acme', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,localhost' });
    await subscribe(server, receiver, ['User.Created', 'PostRegister', 'PostSignIn']);
    idp = await startSamlIdp();
    await server.create('/api/sso-connectors', {
      providerName: 'SAML',
      connectorName: 'Initech Okta',
      config: { metadata: idp.metadata },
      domains: ['initech.test'],
    });
    rp = await startExampleApp(server);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 900, height: 760 } });
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await server?.close();
    await receiver?.close();
    await idp?.close();
  });

  async function companySignIn(email: string) {
    await page.goto(rp.url);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Use your company account' }).click();
    await page.getByLabel('Work email').fill(email);
    await shoot('sso-email');
    if (!problems.has('sso-email')) problems.set('sso-email', await pageProblems(page));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('link', { name: 'Continue with Initech Okta' }).waitFor();
    if (!problems.has('sso-choice')) problems.set('sso-choice', await pageProblems(page));
    await page.getByRole('link', { name: 'Continue with Initech Okta' }).click();
  }
  async function signedIn() {
    await page.waitForURL(`${rp.url}/`);
    return JSON.parse(await page.locator('#claims').innerText()) as Record<string, unknown>;
  }

  it('finds the IdP by the email’s domain, registers through SAML, signs out, and signs in again', async () => {
    idp.signInAs({ nameId: 'peter@initech.test', email: 'peter@initech.test', name: 'Peter Gibbons' });
    // An email of a domain no connector claims is told so, on the same page, beside the field.
    await page.goto(rp.url);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Use your company account' }).click();
    await page.getByLabel('Work email').fill('someone@example.com');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#email-error').filter({ hasText: 'No company sign-in' }).waitFor();
    expect(await page.locator('#email').getAttribute('aria-invalid')).toBe('true');
    problems.set('sso-email-error', await pageProblems(page));

    const registered = await eventsDuring(server, receiver, async () => {
      await companySignIn('peter@initech.test');
      // Through a connector: none of RFC 8176's methods was proved here, so no `amr`.
      expect(await signedIn()).not.toHaveProperty('amr');
    });
    expect(registered.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    expect(registered[0]!.body.data).toMatchObject({ primaryEmail: 'peter@initech.test', name: 'Peter Gibbons' });
    const userId = registered[0]!.body.data.id as string;
    await page.getByRole('link', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByText('You are not signed in.').waitFor();

    const again = await eventsDuring(server, receiver, async () => {
      await companySignIn('peter@initech.test');
      expect(await signedIn()).toMatchObject({ sub: userId });
    });
    expect(again.map(({ body }) => [body.event, body.userId])).toEqual([['PostSignIn', userId]]);
  });

  // Last: every page state the tests above reached, at 1280 and 390 px, light and dark.
  it('finds no accessibility violation or layout problem in any page state it reached', () => {
    expect(problems.size).toBeGreaterThanOrEqual(2);
    expect([...problems].filter(([, found]) => found.length > 0)).toEqual([]);
  });
});
