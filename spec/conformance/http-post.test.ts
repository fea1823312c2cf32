import * as oauth from 'openid-client';
import { decodeJwt } from 'jose';
import { createHash, randomBytes } from 'node:crypto';

import { TestBrowser, csrfOf } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const logoutUri = 'http://127.0.0.1:9/signed-out';
const password = 'correct horse battery staple';

/** OIDC Core §3.1.2.1 and RP-Initiated Logout §2: both endpoints accept POST as well as GET. */
describe('POST at the authorization and end-session endpoints', () => {
  let server: TestServer;
  let app: { id: string; secret: string };
  beforeAll(async () => {
    server = await startTestServer('http-post');
    app = await server.create('/api/applications', {
      name: 'Posting RP',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [logoutUri] },
    });
    await server.create('/api/users', { username: 'poster', password });
  });
  afterAll(async () => {
    await server.close();
  });

  const form = (browser: TestBrowser, path: string, fields: Record<string, string>) =>
    browser.go(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });

  it('OIDC Core §3.1.2.1: an authorization request sent by POST (form-encoded) signs in and returns a code, as by GET', async () => {
    const browser = new TestBrowser(server.url);
    const verifier = randomBytes(32).toString('base64url');
    const posted = await form(browser, '/oidc/auth', {
      client_id: app.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: redirectUri,
      state: 'posted-state',
      nonce: 'posted-nonce',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    expect(posted.status).toBe(303);
    const { response, url } = await browser.follow(new URL(posted.headers.get('location')!, `${server.url}/oidc/auth`), redirectUri);
    expect(url.pathname).toMatch(/^\/interaction\//);
    const html = await response.text();
    const signedIn = await browser.form(`${url.pathname}/sign-in`, { csrf: csrfOf(html), identifier: 'poster', password });
    const { url: callback } = await browser.follow(signedIn.headers.get('location')!, redirectUri);
    expect(callback.searchParams.get('state')).toBe('posted-state');

    const config = await server.discover(app.id, app.secret);
    const tokens = await oauth.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'posted-state',
      expectedNonce: 'posted-nonce',
    });
    expect(decodeJwt(tokens.id_token!).nonce).toBe('posted-nonce');

    // RP-Initiated Logout §2: the end-session request by POST too, then the confirmation page.
    const ended = await form(browser, '/oidc/session/end', { id_token_hint: tokens.id_token!, post_logout_redirect_uri: logoutUri, state: 'bye' });
    expect(ended.status).toBe(303);
    const { response: page, url: at } = await browser.follow(new URL(ended.headers.get('location')!, `${server.url}/oidc/session/end`), logoutUri);
    expect(page.status).toBe(200);
    const confirm = await page.text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirm)?.[1];
    const action = /action="([^"]+)"/.exec(confirm)?.[1];
    expect([xsrf, action]).toEqual([expect.any(String), expect.stringContaining('/session/end/confirm')]);
    const confirmed = await browser.form(new URL(action!, at).pathname, { xsrf: xsrf!, logout: 'yes' });
    const { url: done } = await browser.follow(confirmed.headers.get('location')!, logoutUri);
    expect(done.href).toBe(`${logoutUri}?state=bye`);
  });

  it('answers a POST that is not a form with 400, and an oversized one with 413', async () => {
    const browser = new TestBrowser(server.url);
    const json = await browser.go('/oidc/auth', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
    const huge = await form(browser, '/oidc/auth', { client_id: app.id, filler: 'x'.repeat(40 * 1024) });
    expect(huge.status).toBe(413);
  });
});
