import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'openid-client';

import { basicOpWorld, type BasicOpWorld } from './basic-op-world.js';

/**
 * The happy paths of the OpenID Foundation's Basic OP and RP-Initiated Logout test plans, each
 * written from the text of the section it names: a real browser (Chromium) on the real sign-in
 * pages, and openid-client as the relying party, which checks every ID token it is given
 * (signature against the JWKS, iss, aud, exp, iat, nonce, auth_time against max_age).
 */
describe('Basic OP: discovery, the code flow, UserInfo and prompts, in Chromium with openid-client', () => {
  const { world, userAgent, webClient, authorize, signIn, signInWithoutNonce } = basicOpWorld();
  let server: BasicOpWorld['server'];
  let callback: BasicOpWorld['callback'];
  let web: BasicOpWorld['web'];
  let ada: BasicOpWorld['ada'];
  let grace: BasicOpWorld['grace'];
  beforeAll(() => {
    ({ server, callback, web, ada, grace } = world);
  });

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
    await expect(page.getByLabel('Username, email or phone').inputValue()).resolves.toBe('ada@example.com');
    await context.close();
  });
});
