import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

import { startTestServer, type TestServer } from '../support/server.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const password = 'correct horse battery staple';

/**
 * The happy paths of the OpenID Foundation's Basic OP and RP-Initiated Logout test plans, each
 * written from the text of the section it names: a real browser (Chromium) on the real sign-in
 * pages, and openid-client as the relying party, which checks every ID token it is given
 * (signature against the JWKS, iss, aud, exp, iat, nonce, auth_time against max_age).
 */
describe('Basic OP: the code flow in Chromium with openid-client', () => {
  let server: TestServer;
  let browser: Browser;
  let callbackServer: Server;
  let callback: string;
  let signedOut: string;
  let web: { id: string; secret: string };
  let spa: { id: string };
  let ada: { id: string };
  let grace: { id: string };

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: install Debian's package (apt-get install chromium), as .ci/run does`);
    // The relying party's own pages: where the browser is sent back to.
    callbackServer = createServer((_req, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end('relying party');
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    const rp = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
    [callback, signedOut] = [`${rp}/callback`, `${rp}/signed-out`];

    server = await startTestServer('basic-op');
    web = await server.create('/api/applications', {
      name: 'Certified web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [signedOut] },
    });
    spa = await server.create('/api/applications', {
      name: 'Certified SPA',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [signedOut] },
    });
    ada = await server.create('/api/users', {
      username: 'ada',
      password,
      name: 'Ada Lovelace',
      primaryEmail: 'ada@example.com',
      primaryPhone: '441632960001',
      profile: { givenName: 'Ada', familyName: 'Lovelace', address: { formatted: "12 St James's Square, London", country: 'GB' } },
    });
    grace = await server.create('/api/users', { username: 'grace', password });
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
  });

  /** A user agent of its own: its own cookies, so its own session at the provider. */
  const userAgent = async (): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext();
    return { context, page: await context.newPage() };
  };
  const webClient = () => server.discover(web.id, web.secret);
  const atCallback = (url: URL) => url.href.startsWith(callback);

  /**
   * Sends the browser to the authorization endpoint with `parameters`; if the sign-in page comes,
   * signs in there as `username`. Answers where the browser was sent back, and whether it was
   * shown the sign-in page on the way.
   */
  async function authorize(page: Page, config: oauth.Configuration, parameters: Record<string, string>, username = 'ada') {
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: callback, scope: 'openid', ...parameters });
    await page.goto(url.href);
    await page.waitForURL((at) => atCallback(at) || at.pathname.startsWith('/interaction/'));
    let signInShown = false;
    if (!atCallback(new URL(page.url()))) {
      signInShown = true;
      await page.getByLabel('Username or email').fill(username);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    // prompt=consent (asked with offline_access) shows the consent page even to a first-party application.
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

  it('OpenID Connect Discovery §3 and §4.3: the configuration names its own issuer, the code flow, and RS256 among the ID token algorithms', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(server.issuer);
    expect(metadata).toMatchObject({
      authorization_endpoint: `${server.issuer}/auth`,
      token_endpoint: `${server.issuer}/token`,
      userinfo_endpoint: `${server.issuer}/me`,
      jwks_uri: expect.stringMatching(/^https?:\/\//),
      end_session_endpoint: `${server.issuer}/session/end`,
      response_types_supported: expect.arrayContaining(['code']),
      subject_types_supported: expect.arrayContaining(['public']),
      id_token_signing_alg_values_supported: expect.arrayContaining(['RS256']),
      scopes_supported: expect.arrayContaining(['openid']),
    });
    const { keys } = (await (await fetch(String(metadata.jwks_uri))).json()) as { keys: Array<Record<string, unknown>> };
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(Object.keys(key)).not.toEqual(expect.arrayContaining(['d']));
  });

  it('OIDC Core §3.1.2 to §3.1.3.7: a confidential client signs the user in on the sign-in page and gets an ID token that validates', async () => {
    const { page, context } = await userAgent();
    const { tokens, claims, signInShown } = await signIn(page, { scope: 'openid' });
    expect(signInShown).toBe(true);
    expect(claims).toMatchObject({ iss: server.issuer, sub: ada.id, aud: web.id, iat: expect.any(Number), exp: expect.any(Number) });
    // §3.1.3.3: the token response is not cached.
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    // §3.1.3.7, item 6: the ID token is signed with a key of the provider's JWKS.
    const jwks = createRemoteJWKSet(new URL(`${server.issuer}/jwks`));
    await expect(jwtVerify(tokens.id_token!, jwks, { issuer: server.issuer, audience: web.id })).resolves.toBeDefined();
    await context.close();
  });

  it('OIDC Core §3.1.3.3: the token response has Cache-Control no-store', async () => {
    const { page, context } = await userAgent();
    const config = await webClient();
    const { returned } = await authorize(page, config, { state: 'cache-state' });
    const response = await fetch(`${server.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${web.id}:${web.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: returned.searchParams.get('code')!, redirect_uri: callback }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toMatch(/no-store/);
    await context.close();
  });

  it('OIDC Core §3.1.2.1: a code flow request without nonce succeeds', async () => {
    const { page, context } = await userAgent();
    const { tokens } = await signInWithoutNonce(page);
    expect(tokens.claims()).toMatchObject({ sub: ada.id });
    expect(tokens.claims()!.nonce).toBeUndefined();
    await context.close();
  });

  it('OIDC Core §5.3.1 and §5.3.2: UserInfo answers GET and POST with a bearer token (header or form body, RFC 6750 §2.1 and §2.2) with the same sub', async () => {
    const { page, context } = await userAgent();
    const { config, tokens } = await signIn(page, { scope: 'openid profile' });
    await expect(oauth.fetchUserInfo(config, tokens.access_token, ada.id)).resolves.toMatchObject({ sub: ada.id, name: 'Ada Lovelace' });
    const userinfo = `${server.issuer}/me`;
    const byHeader = await fetch(userinfo, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    const byBody = await fetch(userinfo, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: tokens.access_token }),
    });
    for (const response of [byHeader, byBody]) {
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ sub: ada.id });
    }
    // RFC 6750 §3.1: without a token, 401 with a Bearer challenge.
    const without = await fetch(userinfo);
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toMatch(/^Bearer /);
    await context.close();
  });

  it('OIDC Core §5.4: the profile, email, phone and address scopes release their claims at UserInfo, in any order', async () => {
    const { page, context } = await userAgent();
    const { config, tokens } = await signIn(page, { scope: 'address phone email profile openid' });
    const claims = await oauth.fetchUserInfo(config, tokens.access_token, ada.id);
    expect(claims).toMatchObject({
      sub: ada.id,
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      username: 'ada',
      email: 'ada@example.com',
      email_verified: true,
      phone_number: '441632960001',
      phone_number_verified: true,
      address: { formatted: "12 St James's Square, London", country: 'GB' },
    });
    // Only openid: nothing but sub.
    const bare = await signIn(page, { scope: 'openid' });
    expect(Object.keys(await oauth.fetchUserInfo(bare.config, bare.tokens.access_token, ada.id))).toEqual(['sub']);
    await context.close();
  });

  it('OIDC Core §3.1.2.1 prompt=none: a signed-in user is answered without any page; one not signed in gets login_required (§3.1.2.6) with state', async () => {
    const { page, context } = await userAgent();
    const first = await signIn(page);
    const again = await signIn(page, { prompt: 'none' });
    expect(again.signInShown).toBe(false);
    expect(again.claims.sub).toBe(first.claims.sub);
    expect(again.claims.auth_time).toBe(first.claims.auth_time);

    const stranger = await userAgent();
    const { returned } = await authorize(stranger.page, await webClient(), { prompt: 'none', state: 'not-signed-in' });
    expect(Object.fromEntries(returned.searchParams)).toMatchObject({ error: 'login_required', state: 'not-signed-in', iss: server.issuer });
    await Promise.all([context.close(), stranger.context.close()]);
  });

  it('OIDC Core §3.1.2.1 prompt=login: a signed-in user is asked to sign in again, and auth_time moves on', async () => {
    const { page, context } = await userAgent();
    // max_age makes auth_time a required claim (§2), so that the two sign-ins can be compared.
    const first = await signIn(page, { max_age: '10000' }, 'ada', { maxAge: 10000 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await signIn(page, { prompt: 'login', max_age: '10000' }, 'ada', { maxAge: 10000 });
    expect(again.signInShown).toBe(true);
    expect(again.claims.sub).toBe(ada.id);
    expect(Number(again.claims.auth_time)).toBeGreaterThan(Number(first.claims.auth_time));
    await context.close();
  });

  it('OIDC Core §3.1.2.1 max_age: a sign-in older than max_age is made again; the ID token carries auth_time (§2)', async () => {
    const { page, context } = await userAgent();
    const first = await signIn(page, { max_age: '10000' }, 'ada', { maxAge: 10000 });
    expect(first.claims.auth_time).toEqual(expect.any(Number));
    // Well within a large max_age: no page.
    const recent = await signIn(page, { max_age: '10000' }, 'ada', { maxAge: 10000 });
    expect(recent.signInShown).toBe(false);
    expect(recent.claims.auth_time).toBe(first.claims.auth_time);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const stale = await signIn(page, { max_age: '1' }, 'ada', { maxAge: 1 });
    expect(stale.signInShown).toBe(true);
    expect(Number(stale.claims.auth_time)).toBeGreaterThan(Number(first.claims.auth_time));
    await context.close();
  });

  it("OIDC Core §3.1.2.1 id_token_hint: with prompt=none, the hinted user, signed in, is answered; another user's hint is login_required", async () => {
    const { page, context } = await userAgent();
    const first = await signIn(page);
    const hinted = await signIn(page, { prompt: 'none', id_token_hint: first.tokens.id_token! });
    expect(hinted).toMatchObject({ signInShown: false, claims: { sub: ada.id } });

    const other = await userAgent();
    const graceSignIn = await signIn(other.page, {}, 'grace');
    expect(graceSignIn.claims.sub).toBe(grace.id);
    const { returned } = await authorize(page, await webClient(), { prompt: 'none', id_token_hint: graceSignIn.tokens.id_token!, state: 'wrong-user' });
    expect(returned.searchParams.get('error')).toBe('login_required');
    await Promise.all([context.close(), other.context.close()]);
  });

  it('OIDC Core §3.1.2.1 login_hint: the sign-in page starts with the hinted identifier', async () => {
    const { page, context } = await userAgent();
    const url = oauth.buildAuthorizationUrl(await webClient(), { redirect_uri: callback, scope: 'openid', state: 'hint', login_hint: 'ada@example.com' });
    await page.goto(url.href);
    await expect(page.getByLabel('Username or email').inputValue()).resolves.toBe('ada@example.com');
    await context.close();
  });

  it('RFC 6749 §4.1.2 and §10.5: a code is used once; a second redemption is invalid_grant and revokes the tokens of the first', async () => {
    const { page, context } = await userAgent();
    const { config, state, returned, tokens } = await signInWithoutNonce(page);
    await expect(oauth.fetchUserInfo(config, tokens.access_token, ada.id)).resolves.toMatchObject({ sub: ada.id });
    await expect(oauth.authorizationCodeGrant(config, returned, { expectedState: state })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oauth.fetchUserInfo(config, tokens.access_token, ada.id)).rejects.toMatchObject({ status: 401 });
    await context.close();
  });

  it('RFC 6749 §4.1.3: a code is redeemed only with the redirect_uri it was issued for, and only by its client', async () => {
    const { page, context } = await userAgent();
    const config = await webClient();
    const { returned } = await authorize(page, config, { state: 'binding' });
    const code = returned.searchParams.get('code')!;
    const redeem = (authorization: string, redirectUri: string) =>
      fetch(`${server.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(authorization).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }),
      });
    const other = await server.create('/api/applications', {
      name: 'Other web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
    });
    const byOther = await redeem(`${other.id}:${other.secret}`, callback);
    expect([byOther.status, ((await byOther.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    const elsewhere = await redeem(`${web.id}:${web.secret}`, `${callback}/elsewhere`);
    expect([elsewhere.status, ((await elsewhere.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    await context.close();
  });

  it("RFC 7636 §4.6: a public client's code is redeemed only with the verifier of its S256 challenge", async () => {
    const { page, context } = await userAgent();
    const config = await server.discover(spa.id);
    const verifier = oauth.randomPKCECodeVerifier();
    const [state, nonce] = [oauth.randomState(), oauth.randomNonce()];
    const { returned } = await authorize(page, config, {
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    await expect(
      oauth.authorizationCodeGrant(config, returned, { pkceCodeVerifier: oauth.randomPKCECodeVerifier(), expectedState: state, expectedNonce: nonce }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    // The failed attempt spent the code (§4.1.2): run the flow again, with the right verifier.
    const second = await authorize(page, config, {
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const tokens = await oauth.authorizationCodeGrant(config, second.returned, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: ada.id, aud: spa.id });
    await context.close();
  });

  it('OIDC Core §3.1.2.1 and §3.1.2.6: an unregistered redirect_uri gets an error page, never a redirect to it', async () => {
    const { page, context } = await userAgent();
    const url = oauth.buildAuthorizationUrl(await webClient(), { redirect_uri: `${callback}-not-registered`, scope: 'openid', state: 'evil' });
    const response = await page.goto(url.href);
    expect(response!.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(new URL(server.url).origin);
    expect(await page.content()).toMatch(/redirect_uri/);
    await context.close();
  });

  it('OIDC Core §12.1 and §12.2: a refresh token gives new tokens for the same sub and iss', async () => {
    const { page, context } = await userAgent();
    const { config, tokens, claims } = await signIn(page, { scope: 'openid offline_access', prompt: 'consent' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ iss: claims.iss, sub: claims.sub, aud: web.id });
    await expect(oauth.fetchUserInfo(config, refreshed.access_token, ada.id)).resolves.toMatchObject({ sub: ada.id });
    await context.close();
  });

  it("RFC 9700 §4.14.2: a public client's refresh token rotates, and reusing a rotated one is refused and ends the grant", async () => {
    const { page, context } = await userAgent();
    const config = await server.discover(spa.id);
    const verifier = oauth.randomPKCECodeVerifier();
    const { returned } = await authorize(page, config, {
      state: 'spa',
      scope: 'openid offline_access',
      prompt: 'consent',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const tokens = await oauth.authorizationCodeGrant(config, returned, { pkceCodeVerifier: verifier, expectedState: 'spa' });
    const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The reuse looks like theft: the newer token of the same grant is revoked with it.
    await expect(oauth.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await context.close();
  });

  it('RP-Initiated Logout §2 and §3: a GET with id_token_hint ends the session after the user confirms, and returns to the registered URI with state', async () => {
    const { page, context } = await userAgent();
    const { config, tokens } = await signIn(page);
    const logout = oauth.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: signedOut, state: 'see-you' });
    await page.goto(logout.href);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL((url) => url.href.startsWith(signedOut));
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ state: 'see-you' });
    // The session is gone: prompt=none now needs a sign-in.
    const { returned } = await authorize(page, config, { prompt: 'none', state: 'after-logout' });
    expect(returned.searchParams.get('error')).toBe('login_required');
    await context.close();
  });

  it('RP-Initiated Logout §3: a post_logout_redirect_uri that is not registered is not redirected to', async () => {
    const { page, context } = await userAgent();
    const { config, tokens } = await signIn(page);
    const logout = oauth.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${signedOut}-elsewhere` });
    const response = await page.goto(logout.href);
    expect(response!.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(new URL(server.url).origin);
    // The refusal changed nothing: the session still answers prompt=none.
    expect((await signIn(page, { prompt: 'none' })).claims.sub).toBe(ada.id);
    expect(decodeJwt(tokens.id_token!).sub).toBe(ada.id);
    await context.close();
  });
});
