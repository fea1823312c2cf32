import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import * as oauth from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

import { startTestServer, type TestServer } from '../support/server.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const password = 'correct horse battery staple';

export interface BasicOpWorld {
  server: TestServer;
  browser: Browser;
  callbackServer: Server;
  callback: string;
  signedOut: string;
  web: { id: string; secret: string };
  spa: { id: string };
  ada: { id: string };
  grace: { id: string };
}

/**
 * The world of the Basic OP tests: a server with two applications (a confidential web app and
 * an SPA) and two users, the relying party's own pages, and Chromium; with the helpers that
 * drive a sign-in through the real pages and redeem it with openid-client.
 */
export function basicOpWorld() {
  const world = {} as BasicOpWorld;
  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: install Debian's package (apt-get install chromium), as .ci/run does`);
    // The relying party's own pages: where the browser is sent back to.
    world.callbackServer = createServer((_req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end('relying party');
    });
    await new Promise<void>((resolve) => world.callbackServer.listen(0, '127.0.0.1', resolve));
    const rp = `http://127.0.0.1:${(world.callbackServer.address() as AddressInfo).port}`;
    [world.callback, world.signedOut] = [`${rp}/callback`, `${rp}/signed-out`];

    world.server = await startTestServer('basic-op');
    world.web = await world.server.create('/api/applications', {
      name: 'Certified web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [world.callback], postLogoutRedirectUris: [world.signedOut] },
    });
    world.spa = await world.server.create('/api/applications', {
      name: 'Certified SPA',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: [world.callback], postLogoutRedirectUris: [world.signedOut] },
    });
    world.ada = await world.server.create('/api/users', {
      username: 'ada',
      password,
      name: 'Ada Lovelace',
      primaryEmail: 'ada@example.com',
      primaryPhone: '441632960001',
      profile: { givenName: 'Ada', familyName: 'Lovelace', address: { formatted: "12 St James's Square, London", country: 'GB' } },
    });
    world.grace = await world.server.create('/api/users', { username: 'grace', password });
    world.browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await world.browser?.close();
    await world.server?.close();
    await new Promise((resolve) => world.callbackServer?.close(resolve));
  });

  /** A user agent of its own: its own cookies, so its own session at the provider. */
  const userAgent = async (): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await world.browser.newContext();
    return { context, page: await context.newPage() };
  };
  const webClient = () => world.server.discover(world.web.id, world.web.secret);
  const atCallback = (url: URL) => url.href.startsWith(world.callback);

  /**
   * Sends the browser to the authorization endpoint with `parameters`; if the sign-in page comes,
   * signs in there as `username`. Answers where the browser was sent back, and whether it was
   * shown the sign-in page on the way.
   */
  async function authorize(page: Page, config: oauth.Configuration, parameters: Record<string, string>, username = 'ada') {
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: world.callback, scope: 'openid', ...parameters });
    await page.goto(url.href);
    await page.waitForURL((at) => atCallback(at) || at.pathname.startsWith('/interaction/'));
    let signInShown = false;
    if (!atCallback(new URL(page.url()))) {
      signInShown = true;
      await page.getByLabel('Username, email or phone').fill(username);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    // A consent page, if any: a first-party application is consented without asking (as in Logto), even with prompt=consent.
    await page.waitForURL((at) => atCallback(at) || at.pathname.startsWith('/interaction/'));
    if (!atCallback(new URL(page.url()))) {
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(atCallback);
    }
    return { returned: new URL(page.url()), signInShown };
  }

  /** A whole sign-in: authorization request with state and nonce, then the code redeemed and checked. */
  async function signIn(page: Page, parameters: Record<string, string> = {}, username = 'ada', checks: { maxAge?: number } = {}) {
    const config = await webClient();
    const [state, nonce] = [oauth.randomState(), oauth.randomNonce()];
    const { returned, signInShown } = await authorize(page, config, { state, nonce, ...parameters }, username);
    const tokens = await oauth.authorizationCodeGrant(config, returned, { expectedState: state, expectedNonce: nonce, ...checks });
    return { config, tokens, claims: tokens.claims()!, signInShown, returned };
  }

  /** A sign-in with state but no nonce: the tokens, and what it took to get them. */
  async function signInWithoutNonce(page: Page) {
    const config = await webClient();
    const state = oauth.randomState();
    const { returned } = await authorize(page, config, { state });
    const tokens = await oauth.authorizationCodeGrant(config, returned, { expectedState: state });
    return { config, state, returned, tokens };
  }

  return { world, userAgent, webClient, atCallback, authorize, signIn, signInWithoutNonce };
}
