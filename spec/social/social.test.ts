import { snapshot } from '../support/db.js';
import { TestBrowser, startAuthorization } from '../support/browser.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startForgingIdp, startGitHubLike, startUpstreamIdp, type GitHubLike, type UpstreamIdp } from '../support/upstream.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * Social sign-in as Logto's (packages/core/src/routes/connector/*, experience/verification-routes/
 * social-verification.ts): connectors through the Management API, then the Experience API's
 * authorization URI, callback and identification, against real upstream providers in this process:
 * a second oidc-provider (OpenID Connect) and an OAuth 2.0 server shaped like GitHub's.
 */
describe('social sign-in (connectors, Experience API)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let idp: UpstreamIdp;
  let github: GitHubLike;
  let clientId: string;
  let oidcConnector: string;
  let githubConnector: string;
  let callbackUrl: string;
  let ip = 30;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('social', { ...hookTestEnv, TRUST_PROXY: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,localhost' });
    await subscribe(server, receiver, ['User.Created', 'User.Data.Updated', 'PostRegister', 'PostSignIn']);
    callbackUrl = `${server.url}/interaction/social-callback`;
    idp = await startUpstreamIdp(callbackUrl);
    github = await startGitHubLike();
    const application = await server.create('/api/applications', {
      name: 'Web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    clientId = application.id;
    oidcConnector = (
      await server.create('/api/connectors', {
        connectorId: 'oidc',
        config: { issuer: `${idp.issuer}`, clientId: idp.clientId, clientSecret: idp.clientSecret },
        metadata: { target: 'acme-idp', name: 'Acme IdP' },
      })
    ).id;
    githubConnector = (
      await server.create('/api/connectors', {
        connectorId: 'github-universal',
        config: {
          clientId: github.clientId,
          clientSecret: github.clientSecret,
          authorizationEndpoint: `${github.url}/login/oauth/authorize`,
          tokenEndpoint: `${github.url}/login/oauth/access_token`,
          userInfoEndpoint: `${github.url}/user`,
          emailsEndpoint: `${github.url}/user/emails`,
        },
      })
    ).id;
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await idp.close();
    await github.close();
  });

  /** A new sign-in at our server, started as `event`. */
  async function begin(event: 'SignIn' | 'Register') {
    const browser = new TestBrowser(server.url, `198.51.100.${(ip += 1)}`);
    const authorization = await startAuthorization(browser, clientId, redirectUri);
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: event })).status).toBe(204);
    return { browser, ...authorization };
  }

  /** Asks for the provider's URL, signs in there (another browser: the provider's own cookies), answers the callback's parameters. */
  async function upstreamLeg(browser: TestBrowser, connectorId: string, state = `state-${Math.random()}`) {
    const started = await browser.json('POST', `/api/experience/verification/social/${connectorId}/authorization-uri`, { state, redirectUri: callbackUrl });
    expect(started.status).toBe(200);
    const authorizationUri = new URL(started.body.authorizationUri as string);
    const away = new TestBrowser(authorizationUri.origin);
    const { url } = await away.follow(authorizationUri, callbackUrl);
    return { verificationId: started.body.verificationId as string, authorizationUri, connectorData: Object.fromEntries(url.searchParams) };
  }

  /** Hands the callback's parameters to the Experience API. */
  const verifyLeg = (browser: TestBrowser, connectorId: string, leg: { verificationId: string; connectorData: Record<string, string> }) =>
    browser.json('POST', `/api/experience/verification/social/${connectorId}/verify`, { verificationId: leg.verificationId, connectorData: leg.connectorData });

  /** Submits, and follows the browser back through oidc-provider to the application (where the sign-in events are announced). */
  async function submit(browser: TestBrowser) {
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    const { url } = await browser.follow(submitted.body.redirectTo as string, redirectUri);
    expect(url.searchParams.get('code')).toEqual(expect.any(String));
  }

  it('the Management API lists the factories, keeps the client secret write-only, and refuses a bad configuration', async () => {
    const factories = (await server.api('GET', '/api/connector-factories')).body as Array<{ id: string; type: string }>;
    expect(factories.map(({ id }) => id)).toEqual(['oidc', 'oauth2', 'google-universal', 'github-universal']);
    const listed = (await server.api('GET', '/api/connectors')).body as Array<Record<string, unknown>>;
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(idp.clientSecret);
    expect(JSON.stringify(listed)).not.toContain(github.clientSecret);
    expect(listed[0]).toMatchObject({ id: oidcConnector, connectorId: 'oidc', target: 'acme-idp', config: { issuer: idp.issuer, clientId: idp.clientId } });

    const before = await snapshot(server.database.db);
    const bad = await server.api('POST', '/api/connectors', { body: { connectorId: 'oidc', config: { clientId: 'x', clientSecret: 'y' } } });
    expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 400, code: 'connector.invalid_config' });
    expect((await server.api('POST', '/api/connectors', { body: { connectorId: 'no-such', config: {} } })).body.code).toBe('connector.not_found');
    const twice = await server.api('POST', '/api/connectors', {
      body: { connectorId: 'oidc', config: { issuer: idp.issuer, clientId: 'a', clientSecret: 'b' }, metadata: { target: 'acme-idp' } },
    });
    expect({ status: twice.status, code: twice.body.code }).toEqual({ status: 422, code: 'connector.multiple_target_with_same_platform' });
    expect(await snapshot(server.database.db)).toBe(before);
    // A PATCH without a secret keeps the stored one (the flows below still sign in).
    expect((await server.api('PATCH', `/api/connectors/${oidcConnector}`, { body: { config: { scope: 'openid email profile' } } })).status).toBe(200);
  });

  it("refuses a registration whose provider-verified email the sign-in experience's email policy refuses, creating no account (Logto email-blocklist.test.ts)", async () => {
    await server.api('PATCH', '/api/sign-in-exp', { body: { emailBlocklistPolicy: { customBlocklist: ['@blocked.example'] } } });
    try {
      idp.signInAs({ sub: 'upstream-blocked', email: 'someone@blocked.example', email_verified: true });
      const register = await begin('Register');
      const leg = await upstreamLeg(register.browser, oidcConnector);
      expect((await verifyLeg(register.browser, oidcConnector, leg)).status).toBe(200);
      const identified = await register.browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId });
      expect({ status: identified.status, code: identified.body.code }).toEqual({ status: 422, code: 'session.email_blocklist.email_not_allowed' });
      expect(await server.database.db.collection('users').countDocuments({ primaryEmail: 'someone@blocked.example' })).toBe(0);
    } finally {
      await server.api('PATCH', '/api/sign-in-exp', { body: { emailBlocklistPolicy: {} } });
    }
  });

  it("takes Logto's OpenID Connect connector configured by hand (endpoints and keys, no discovery), with its optional and custom parameters; the ID token's issuer is required and checked (Logto connector-oidc types.ts)", async () => {
    const discovered = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    const byHand = {
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scope: 'profile email',
      authorizationEndpoint: discovered.authorization_endpoint!,
      tokenEndpoint: discovered.token_endpoint!,
      responseType: 'code',
      grantType: 'authorization_code',
      tokenEndpointAuthMethod: 'client_secret_post',
    };
    const create = (config: Record<string, unknown>) =>
      server.api('POST', '/api/connectors', { body: { connectorId: 'oidc', config, metadata: { target: 'acme-by-hand' } } });
    const before = await snapshot(server.database.db);
    // Logto takes an ID token's issuer on trust without one; here it is required (OpenID Connect Core §3.1.3.7).
    const noIssuer = await create({ ...byHand, idTokenVerificationConfig: { jwksUri: discovered.jwks_uri } });
    expect(noIssuer).toMatchObject({ status: 400, body: { code: 'connector.invalid_config', message: expect.stringContaining('issuer') } });
    const neither = await create({ clientId: 'x', clientSecret: 'y' });
    expect(neither).toMatchObject({ status: 400, body: { code: 'connector.invalid_config', message: expect.stringContaining('idTokenVerificationConfig') } });
    // A configuration may not set what each sign-in sets.
    const reserved = await create({
      ...byHand,
      idTokenVerificationConfig: { jwksUri: discovered.jwks_uri, issuer: idp.issuer },
      customConfig: { state: 'fixed' },
    });
    expect(reserved).toMatchObject({ status: 400, body: { code: 'connector.invalid_config' } });
    // Nor a request object, which would stand for them all (OpenID Connect Core §6.1).
    const requestObject = await create({
      ...byHand,
      idTokenVerificationConfig: { jwksUri: discovered.jwks_uri, issuer: idp.issuer },
      customConfig: { request_uri: 'https://x.example/r' },
    });
    expect(requestObject).toMatchObject({ status: 400, body: { code: 'connector.invalid_config' } });
    expect(await snapshot(server.database.db)).toBe(before);

    const made = await create({
      ...byHand,
      idTokenVerificationConfig: { jwksUri: discovered.jwks_uri, issuer: idp.issuer },
      authRequestOptionalConfig: { prompt: 'login', loginHint: 'hand@example.com' },
      customConfig: { resource_hint: 'tenant-a' },
    });
    expect(made.status).toBe(200);
    const connectorId = made.body.id as string;
    try {
      idp.signInAs({ sub: 'upstream-by-hand', email: 'hand@example.com', email_verified: true, name: 'By Hand' });
      const register = await begin('Register');
      const leg = await upstreamLeg(register.browser, connectorId);
      const sent = leg.authorizationUri.searchParams;
      expect([sent.get('prompt'), sent.get('login_hint'), sent.get('resource_hint')]).toEqual(['login', 'hand@example.com', 'tenant-a']);
      // `openid` added to the scope, as Logto adds it; PKCE and nonce as ever.
      expect(sent.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['openid', 'profile', 'email']));
      expect([sent.get('code_challenge_method'), typeof sent.get('nonce')]).toEqual(['S256', 'string']);
      expect((await verifyLeg(register.browser, connectorId, leg)).status).toBe(200);
      expect((await register.browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(201);

      // Another issuer configured: the provider's ID token no longer passes.
      const patched = await server.api('PATCH', `/api/connectors/${connectorId}`, {
        body: { config: { idTokenVerificationConfig: { jwksUri: discovered.jwks_uri, issuer: 'https://not-the-issuer.example' } } },
      });
      expect(patched.status).toBe(200);
      const again = await begin('Register');
      const second = await upstreamLeg(again.browser, connectorId);
      const refused = await verifyLeg(again.browser, connectorId, second);
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 'connector.general' });
      expect(refused.body.message).toMatch(/iss/);
    } finally {
      await server.api('DELETE', `/api/connectors/${connectorId}`);
    }
  });

  it('registers through the OpenID Connect provider (User.Created, PostRegister; the verified email taken), then signs in again (PostSignIn)', async () => {
    idp.signInAs({ sub: 'upstream-ada', email: 'ada.upstream@example.com', email_verified: true, name: 'Ada Upstream' });
    const register = await begin('Register');
    const leg = await upstreamLeg(register.browser, oidcConnector);
    // PKCE, state and nonce, always.
    expect(leg.authorizationUri.searchParams.get('code_challenge_method')).toBe('S256');
    expect(leg.authorizationUri.searchParams.get('nonce')).toEqual(expect.any(String));
    expect((await verifyLeg(register.browser, oidcConnector, leg)).status).toBe(200);
    const created = await eventsDuring(server, receiver, async () => {
      expect((await register.browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(201);
      await submit(register.browser);
    });
    expect(created.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    expect(created[0]!.body.data).toMatchObject({
      primaryEmail: 'ada.upstream@example.com',
      name: 'Ada Upstream',
      identities: { 'acme-idp': { userId: 'upstream-ada', details: { id: 'upstream-ada', email: 'ada.upstream@example.com' } } },
    });
    for (const { raw } of created) expect(raw).not.toMatch(/access_token|id_token|refresh_token/);
    const userId = created[0]!.body.data.id as string;

    const signIn = await begin('SignIn');
    const again = await upstreamLeg(signIn.browser, oidcConnector);
    await signIn.browser.json('POST', `/api/experience/verification/social/${oidcConnector}/verify`, {
      verificationId: again.verificationId,
      connectorData: again.connectorData,
    });
    const events = await eventsDuring(server, receiver, async () => {
      expect((await signIn.browser.json('POST', '/api/experience/identification', { verificationId: again.verificationId })).status).toBe(204);
      await submit(signIn.browser);
    });
    expect(events.map(({ body }) => [body.event, body.userId])).toEqual([['PostSignIn', userId]]);
  });

  it('refuses a wrong state, a callback used twice, a replayed code, a forged issuer, and another nonce', async () => {
    idp.signInAs({ sub: 'upstream-refusals', email: 'refusals@example.com', email_verified: true });
    const { browser } = await begin('SignIn');
    const verify = (verificationId: string, connectorData: Record<string, string>) =>
      browser.json('POST', `/api/experience/verification/social/${oidcConnector}/verify`, { verificationId, connectorData });

    const wrongState = await upstreamLeg(browser, oidcConnector);
    const refused = await verify(wrongState.verificationId, { ...wrongState.connectorData, state: 'not-the-state' });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 'connector.general' });
    expect(refused.body.message).toMatch(/state/);

    const forged = await upstreamLeg(browser, oidcConnector);
    expect((await verify(forged.verificationId, { ...forged.connectorData, iss: 'https://evil.example' })).body).toMatchObject({
      code: 'connector.general',
      message: expect.stringMatching(/iss/),
    });

    const good = await upstreamLeg(browser, oidcConnector, 'the-same-state-twice');
    expect((await verify(good.verificationId, good.connectorData)).status).toBe(200);
    expect((await verify(good.verificationId, good.connectorData)).body).toMatchObject({
      code: 'connector.general',
      message: expect.stringMatching(/completed already/),
    });
    // The same code under a new verification with the same state: the provider redeemed it already.
    const replay = await browser.json('POST', `/api/experience/verification/social/${oidcConnector}/authorization-uri`, {
      state: 'the-same-state-twice',
      redirectUri: callbackUrl,
    });
    expect((await verify(replay.body.verificationId as string, good.connectorData)).body).toMatchObject({
      code: 'connector.general',
      message: expect.stringMatching(/grant/),
    });

    // The provider signs the nonce it was sent; a different one in the request (a forged authorization URL) fails the ID token's check.
    const started = await browser.json('POST', `/api/experience/verification/social/${oidcConnector}/authorization-uri`, {
      state: 'nonce-test',
      redirectUri: callbackUrl,
    });
    const tampered = new URL(started.body.authorizationUri as string);
    tampered.searchParams.set('nonce', 'someone-elses-nonce');
    const { url } = await new TestBrowser(tampered.origin).follow(tampered, callbackUrl);
    expect((await verify(started.body.verificationId as string, Object.fromEntries(url.searchParams))).body).toMatchObject({
      code: 'connector.general',
      message: expect.stringMatching(/nonce/),
    });

    // Only our own pages may receive the code.
    const elsewhere = await browser.json('POST', `/api/experience/verification/social/${oidcConnector}/authorization-uri`, {
      state: 'elsewhere',
      redirectUri: 'https://evil.example/cb',
    });
    expect(elsewhere.status).toBe(400);
  });

  it('refuses an ID token for another audience or from another issuer (OIDC Core §3.1.3.7), though signed by the provider’s key', async () => {
    const forger = await startForgingIdp();
    try {
      const forgedConnector = (
        await server.create('/api/connectors', {
          connectorId: 'oidc',
          config: { issuer: forger.issuer, clientId: forger.clientId, clientSecret: forger.clientSecret },
          metadata: { target: 'forger', name: 'Forger' },
        })
      ).id;
      const { browser } = await begin('SignIn');
      const attempt = async () => {
        const leg = await upstreamLeg(browser, forgedConnector);
        return browser.json('POST', `/api/experience/verification/social/${forgedConnector}/verify`, {
          verificationId: leg.verificationId,
          connectorData: leg.connectorData,
        });
      };
      // The honest token passes: the refusals below are the claims', not the provider's.
      forger.forge({});
      expect((await attempt()).status).toBe(200);
      forger.forge({ aud: 'some-other-client' });
      expect((await attempt()).body).toMatchObject({ code: 'connector.general', message: expect.stringMatching(/aud/) });
      forger.forge({ iss: 'https://evil.example' });
      expect((await attempt()).body).toMatchObject({ code: 'connector.general', message: expect.stringMatching(/iss/) });
    } finally {
      await forger.close();
    }
  });

  it('links to an account with the same verified email only on request, announced with identities.<target> and the interaction', async () => {
    const user = await server.create('/api/users', { username: 'links_social', primaryEmail: 'linker@example.com', password });
    idp.signInAs({ sub: 'upstream-linker', email: 'linker@example.com', email_verified: true });
    const { browser } = await begin('SignIn');
    const leg = await upstreamLeg(browser, oidcConnector);
    await browser.json('POST', `/api/experience/verification/social/${oidcConnector}/verify`, {
      verificationId: leg.verificationId,
      connectorData: leg.connectorData,
    });
    const unasked = await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId });
    expect({ status: unasked.status, code: unasked.body.code, data: unasked.body.data }).toEqual({
      status: 404,
      code: 'user.identity_not_exist',
      data: { relatedUser: 'linker@example.com' },
    });
    const events = await eventsDuring(server, receiver, async () => {
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId, linkSocialIdentity: true })).status).toBe(204);
      await submit(browser);
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['identities.acme-idp', 'lastSignInAt']],
      ['PostSignIn', undefined],
    ]);
    expect(events[0]!.body).toMatchObject({ interactionEvent: 'SignIn', applicationId: clientId, data: { id: user.id } });

    // The upstream account is now that user's: registering another account with it is refused.
    const register = await begin('Register');
    const again = await upstreamLeg(register.browser, oidcConnector);
    await register.browser.json('POST', `/api/experience/verification/social/${oidcConnector}/verify`, {
      verificationId: again.verificationId,
      connectorData: again.connectorData,
    });
    const taken = await register.browser.json('POST', '/api/experience/identification', { verificationId: again.verificationId });
    expect({ status: taken.status, code: taken.body.code }).toEqual({ status: 422, code: 'user.identity_already_in_use' });
  });

  it('takes an email and its verification from one source: an ID token’s unverified address with a UserInfo verifying another links nobody', async () => {
    // The outside attack's fifth finding: `email` came from the ID token and `email_verified` from UserInfo.
    await server.create('/api/users', { username: 'mixed_sources_victim', primaryEmail: 'mixed.victim@example.com', password });
    idp.signInAs({
      sub: 'upstream-mixer',
      email: 'mixer.own@example.com',
      email_verified: true,
      idToken: { email: 'mixed.victim@example.com' },
    });
    const { browser } = await begin('SignIn');
    const leg = await upstreamLeg(browser, oidcConnector);
    expect((await verifyLeg(browser, oidcConnector, leg)).status).toBe(200);
    for (const linkSocialIdentity of [false, true]) {
      const refused = await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId, linkSocialIdentity });
      // No verified email at all: nobody to suggest, nobody to link.
      expect({ status: refused.status, code: refused.body.code, data: refused.body.data }).toEqual({
        status: 404,
        code: 'user.identity_not_exist',
        data: undefined,
      });
    }
  });

  it('trusts an unverified email only with the connector’s trustUnverifiedEmail (Logto’s field, off by default)', async () => {
    const trusting = await server.create('/api/connectors', {
      connectorId: 'oidc',
      config: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, trustUnverifiedEmail: true },
      metadata: { target: 'trusting-idp', name: 'Trusting IdP' },
    });
    expect((await server.api('GET', `/api/connectors/${trusting.id}`)).body.config).toMatchObject({ trustUnverifiedEmail: true });
    await server.create('/api/users', { username: 'trusted_unverified', primaryEmail: 'trusted.unverified@example.com', password });
    idp.signInAs({ sub: 'upstream-unverified', email: 'trusted.unverified@example.com' });
    for (const [connector, expected] of [
      [oidcConnector, undefined],
      [trusting.id, { relatedUser: 'trusted.unverified@example.com' }],
    ] as const) {
      const { browser } = await begin('SignIn');
      const leg = await upstreamLeg(browser, connector);
      expect((await verifyLeg(browser, connector, leg)).status).toBe(200);
      const refused = await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId });
      expect({ code: refused.body.code, data: refused.body.data }).toEqual({ code: 'user.identity_not_exist', data: expected });
    }
    await server.api('DELETE', `/api/connectors/${trusting.id}`);
  });

  it('answers a redirect URI that is no URL, or not ours, with 400 naming it (the outside attack’s ninth finding: it was a 500)', async () => {
    const { browser } = await begin('SignIn');
    for (const redirectUri of ['http://localhost:3001.evil.example/cb', 'https://evil.example/interaction/social-callback']) {
      const refused = await browser.json('POST', `/api/experience/verification/social/${oidcConnector}/authorization-uri`, {
        state: 'state-12345678',
        redirectUri,
      });
      expect({ status: refused.status, code: refused.body.code, field: refused.body.data?.field }).toEqual({
        status: 400,
        code: 'guard.invalid_input',
        field: 'body.redirectUri',
      });
    }
    const user = await server.create('/api/users', { username: 'identity_bad_redirect' });
    const linked = await server.api('POST', `/api/users/${user.id}/identities`, {
      body: { connectorId: oidcConnector, connectorData: { code: 'a-code', redirectUri: 'http://localhost:3001.evil.example/cb' } },
    });
    expect({ status: linked.status, field: linked.body.data?.field }).toEqual({ status: 400, field: 'body.connectorData.redirectUri' });
    // A connector's endpoints are URLs when saved.
    const malformed = await server.api('POST', '/api/connectors', {
      body: {
        connectorId: 'oauth2',
        config: {
          clientId: 'a',
          clientSecret: 'b',
          authorizationEndpoint: 'https://oauth.example:99999/authorize',
          tokenEndpoint: 'https://oauth.example/token',
          userInfoEndpoint: 'https://oauth.example/user',
        },
        metadata: { target: 'malformed' },
      },
    });
    expect({ status: malformed.status, code: malformed.body.code }).toEqual({ status: 400, code: 'connector.invalid_config' });
  });

  it('registers through the GitHub-shaped OAuth 2.0 provider, with the verified primary email from /user/emails', async () => {
    github.signInAs({ id: 583231, login: 'octo', name: 'Octo Cat' }, [
      { email: 'octo.unverified@example.com', primary: false, verified: false },
      { email: 'octo@example.com', primary: true, verified: true },
    ]);
    const register = await begin('Register');
    const leg = await upstreamLeg(register.browser, githubConnector);
    expect(leg.authorizationUri.searchParams.get('code_challenge')).toEqual(expect.any(String));
    expect((await verifyLeg(register.browser, githubConnector, leg)).status).toBe(200);
    const created = await eventsDuring(server, receiver, async () => {
      expect((await register.browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(201);
      await submit(register.browser);
    });
    expect(created[0]!.body.data).toMatchObject({
      primaryEmail: 'octo@example.com',
      avatar: 'https://avatars.example/583231',
      identities: { github: { userId: '583231' } },
    });
  });

  it("takes Logto's OAuth 2.0 connector fields: HTTP Basic at the token endpoint, a form-encoded token answer read as Logto's tokenEndpointResponseType says, custom parameters (Logto connector-oauth2)", async () => {
    const config = {
      clientId: github.clientId,
      clientSecret: github.clientSecret,
      authorizationEndpoint: `${github.url}/login/oauth/authorize`,
      tokenEndpoint: `${github.url}/login/oauth/access_token`,
      userInfoEndpoint: `${github.url}/user`,
      scope: 'read:user',
      responseType: 'code',
      grantType: 'authorization_code',
      tokenEndpointAuthMethod: 'client_secret_basic',
      tokenEndpointResponseType: 'query-string',
      profileMap: { id: 'id', name: 'name', avatar: 'avatar_url' },
      customConfig: { allow_signup: 'false' },
    };
    const made = await server.create('/api/connectors', { connectorId: 'oauth2', config, metadata: { target: 'octo-logto', name: 'Octo' } });
    github.answerTokensAs('form');
    try {
      github.signInAs({ id: 77, login: 'formal', name: 'Form Al' }, []);
      const register = await begin('Register');
      const leg = await upstreamLeg(register.browser, made.id);
      expect(leg.authorizationUri.searchParams.get('allow_signup')).toBe('false');
      expect((await verifyLeg(register.browser, made.id, leg)).status).toBe(200);
      expect((await register.browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(201);
      // Told to expect JSON, the form-encoded answer fails the sign-in (400), as it would at any provider that answers otherwise.
      await server.api('PATCH', `/api/connectors/${made.id}`, { body: { config: { tokenEndpointResponseType: 'json' } } });
      const again = await begin('Register');
      const second = await upstreamLeg(again.browser, made.id);
      expect((await verifyLeg(again.browser, made.id, second)).body.code).toBe('connector.general');
    } finally {
      github.answerTokensAs('json');
      await server.api('DELETE', `/api/connectors/${made.id}`);
    }
  });

  it('offers on the sign-in page each connector as soon as it is made, and none once it is deleted (the page reads them from a cache the changes clear)', async () => {
    const page = async () => (await startAuthorization(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), clientId, redirectUri)).html;
    const before = await page();
    expect(before).toContain('Continue with Acme IdP');
    expect(before).not.toContain('Continue with Initech');
    expect(before).not.toContain('/sso"');
    const made = await server.create('/api/connectors', {
      connectorId: 'oidc',
      config: { issuer: `${idp.issuer}`, clientId: idp.clientId, clientSecret: idp.clientSecret },
      metadata: { target: 'initech', name: 'Initech' },
    });
    const withConnector = await page();
    expect(withConnector).toContain('Continue with Initech');
    expect(withConnector).not.toContain('/sso"');
    const sso = await server.create('/api/sso-connectors', {
      providerName: 'OIDC',
      connectorName: 'Initech SSO',
      config: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
      domains: ['initech.test'],
    });
    expect(await page()).toContain('/sso"');
    expect((await server.api('PATCH', `/api/connectors/${made.id}`, { body: { metadata: { target: 'initech', name: 'Initech Corp' } } })).status).toBe(200);
    expect(await page()).toContain('Continue with Initech Corp');
    expect((await server.api('DELETE', `/api/connectors/${made.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/sso-connectors/${sso.id}`)).status).toBe(204);
    const after = await page();
    expect(after).not.toContain('Continue with Initech');
    expect(after).not.toContain('/sso"');
    expect(after).toContain('Continue with Acme IdP');
  });

  it('refuses (400 session.verification_failed) a sign-in by an upstream account unlinked from the user before it was submitted, and signs no one in', async () => {
    const { id } = await server.create('/api/users', { username: 'unlinked_midway' });
    expect((await server.api('PUT', `/api/users/${id}/identities/acme-idp`, { body: { userId: 'upstream-unlinked-midway' } })).status).toBe(201);
    idp.signInAs({ sub: 'upstream-unlinked-midway', email: 'unlinked.midway@example.com', email_verified: true });
    const { browser } = await begin('SignIn');
    const leg = await upstreamLeg(browser, oidcConnector);
    expect((await verifyLeg(browser, oidcConnector, leg)).status).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(204);

    expect((await server.api('DELETE', `/api/users/${id}/identities/acme-idp`)).status).toBe(200);
    expect(await browser.json('POST', '/api/experience/submit')).toMatchObject({ status: 400, body: { code: 'session.verification_failed' } });
    expect(await server.database.db.collection('oidc_Session').countDocuments({ 'payload.accountId': id })).toBe(0);
  });
});
