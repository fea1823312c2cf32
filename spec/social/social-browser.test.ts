import type { Browser, Page } from 'playwright-core';

import type { RelyingParty } from '../../examples/relying-party.js';
import { launchChromium, pageProblems, screenshotsOf, startExampleApp } from '../support/chromium.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startUpstreamIdp, type UpstreamIdp } from '../support/upstream.js';

/**
 * Social sign-in on the pages, in Chromium: "Continue with …" leads to a real OpenID Connect
 * provider (a second oidc-provider in this process), back to our callback, and on to the example
 * web app: a new account registered, signed in again, and an existing password account linked
 * after the person confirms it.
 */
describe('social sign-in on the pages in a real browser (Chromium)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let idp: UpstreamIdp;
  let rp: RelyingParty;
  let browser: Browser;
  let page: Page;
  let connectorId = '';
  const shoot = screenshotsOf(() => page);
  /** Each page state reached: what axe-core and the layout checks find at both widths and in both schemes. */
  const problems = new Map<string, string[]>();

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('social-browser', { ...hookTestEnv, BRAND_NAME: 'Acme', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,localhost' });
    await subscribe(server, receiver, ['User.Created', 'User.Data.Updated', 'PostRegister', 'PostSignIn']);
    // The callback names the connector, so the provider learns it once the connector exists.
    idp = await startUpstreamIdp(() => [`${server.url}/interaction/callback/${connectorId}`]);
    connectorId = (
      await server.create('/api/connectors', {
        connectorId: 'oidc',
        config: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
        metadata: { target: 'acme-idp', name: 'Acme IdP' },
      })
    ).id;
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

  async function signedIn() {
    await page.waitForURL(`${rp.url}/`);
    return JSON.parse(await page.locator('#claims').innerText()) as Record<string, unknown>;
  }
  async function signOut() {
    await page.getByRole('link', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByText('You are not signed in.').waitFor();
  }
  async function continueWithIdp() {
    await page.goto(rp.url);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Continue with Acme IdP' }).click();
  }

  it('registers with the provider, signs out, and signs in with it again', async () => {
    idp.signInAs({ sub: 'upstream-lin', email: 'lin@example.com', email_verified: true, name: 'Lin Upstream' });
    const registered = await eventsDuring(server, receiver, async () => {
      await page.goto(rp.url);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await shoot('sign-in-social');
      problems.set('sign-in-social', await pageProblems(page));
      await page.getByRole('link', { name: 'Continue with Acme IdP' }).click();
      await signedIn();
    });
    expect(registered.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    expect(registered[0]!.body.data).toMatchObject({ primaryEmail: 'lin@example.com', identities: { 'acme-idp': { userId: 'upstream-lin' } } });
    const userId = registered[0]!.body.data.id as string;
    await signOut();

    const again = await eventsDuring(server, receiver, async () => {
      await continueWithIdp();
      expect(await signedIn()).toMatchObject({ sub: userId });
    });
    expect(again.map(({ body }) => [body.event, body.userId])).toEqual([['PostSignIn', userId]]);
    await signOut();
  });

  it('links the provider to the password account with the same email once the person confirms it', async () => {
    const user = await server.create('/api/users', { username: 'grace_password', primaryEmail: 'grace@example.com', password: 'correct horse battery staple' });
    idp.signInAs({ sub: 'upstream-grace', email: 'grace@example.com', email_verified: true });
    const linked = await eventsDuring(server, receiver, async () => {
      await continueWithIdp();
      await page.getByRole('heading', { name: 'Link your account?' }).waitFor();
      await shoot('link-social');
      problems.set('link-social', await pageProblems(page));
      await page.getByRole('button', { name: 'Link and sign in' }).click();
      expect(await signedIn()).toMatchObject({ sub: user.id });
    });
    expect(linked.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['identities.acme-idp', 'lastSignInAt']],
      ['PostSignIn', undefined],
    ]);
    expect(linked[0]!.body).toMatchObject({ interactionEvent: 'SignIn', data: { id: user.id, identities: { 'acme-idp': { userId: 'upstream-grace' } } } });
    await signOut();
  });

  // Last: every page state the tests above reached, at 1280 and 390 px, light and dark.
  it('finds no accessibility violation or layout problem in any page state it reached', () => {
    expect(problems.size).toBeGreaterThanOrEqual(2);
    expect([...problems].filter(([, found]) => found.length > 0)).toEqual([]);
  });
});
