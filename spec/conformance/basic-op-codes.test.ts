import { decodeJwt } from 'jose';
import * as oauth from 'openid-client';

import { basicOpWorld, type BasicOpWorld } from './basic-op-world.js';

/**
 * The happy paths of the OpenID Foundation's Basic OP and RP-Initiated Logout test plans, each
 * written from the text of the section it names: a real browser (Chromium) on the real sign-in
 * pages, and openid-client as the relying party, which checks every ID token it is given
 * (signature against the JWKS, iss, aud, exp, iat, nonce, auth_time against max_age).
 */
describe('Basic OP: codes, PKCE, refresh and logout, in Chromium with openid-client', () => {
  const { world, userAgent, webClient, authorize, signIn, signInWithoutNonce } = basicOpWorld();
  let server: BasicOpWorld['server'];
  let callback: BasicOpWorld['callback'];
  let signedOut: BasicOpWorld['signedOut'];
  let web: BasicOpWorld['web'];
  let spa: BasicOpWorld['spa'];
  let ada: BasicOpWorld['ada'];
  beforeAll(() => {
    ({ server, callback, signedOut, web, spa, ada } = world);
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
