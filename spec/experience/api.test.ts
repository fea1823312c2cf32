import { deliveriesSettled, eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { TestBrowser, csrfOf, startAuthorization } from '../support/browser.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const strong = 'correct horse battery staple';

describe('sign-in experience (Experience API and pages, over HTTP)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  let clientId: string;
  let ipCounter = 10;

  beforeAll(async () => {
    receiver = await startReceiver();
    mail = await startMailCatcher();
    server = await startTestServer('experience', { ...hookTestEnv, TRUST_PROXY: 'true', SMTP_URL: mail.url, EMAIL_FROM: 'Identity <no-reply@id.test>' });
    await subscribe(server, receiver, ['User.Created', 'User.Data.Updated', 'PostRegister', 'PostSignIn', 'PostResetPassword']);
    const application = await server.create('/api/applications', {
      name: 'Web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    clientId = application.id;
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await mail.close();
  });

  /** A new browser, from an address of its own (limits count per address), on the sign-in page. */
  async function newSignIn() {
    const browser = new TestBrowser(server.url, `198.51.100.${(ipCounter += 1)}`);
    const authorization = await startAuthorization(browser, clientId, redirectUri);
    return { browser, ...authorization };
  }

  async function createUser(body: Record<string, unknown>) {
    return server.create('/api/users', body) as Promise<{ id: string }>;
  }

  /** Follows a submit's redirect back to the application; answers the authorization code. */
  async function codeFrom(browser: TestBrowser, redirectTo: string) {
    const { url } = await browser.follow(redirectTo, redirectUri);
    expect(url.href.startsWith(redirectUri)).toBe(true);
    return url.searchParams.get('code');
  }

  async function signInWithApi(browser: TestBrowser, identifier: { type: string; value: string }, password: string) {
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    return browser.json('POST', '/api/experience/verification/password', { identifier, password });
  }

  it('registers with a username and password, signs in, and announces User.Created and PostRegister (not PostSignIn)', async () => {
    const { browser } = await newSignIn();
    let redirectTo = '';
    const events = await eventsDuring(server, receiver, async () => {
      expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' })).status).toBe(204);
      const verified = await browser.json('POST', '/api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: 'new_person' },
        password: strong,
      });
      expect(verified).toMatchObject({ status: 200, body: { verificationId: expect.any(String) } });
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      redirectTo = submitted.body.redirectTo;
      // The same interaction cannot be submitted twice.
      expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('session.already_submitted');
      expect(await codeFrom(browser, redirectTo)).toEqual(expect.any(String));
    });
    expect(events.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    const [created, registered] = events.map(({ body }) => body);
    expect(created.data).toMatchObject({ username: 'new_person', hasPassword: true, lastSignInAt: expect.any(Number) });
    expect(registered).toMatchObject({
      interactionEvent: 'Register',
      userId: created.data.id,
      applicationId: clientId,
      userAgent: 'experience-test-browser',
      sessionId: expect.any(String),
    });
    expect(JSON.stringify(events.map(({ raw }) => raw))).not.toMatch(/passwordHash|correct horse/);
    // Once the provider has the result, the interaction is over.
    expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('session.not_found');
  });

  it('signs in with a password, announces PostSignIn once and updates lastSignInAt', async () => {
    const user = await createUser({ username: 'signs_in', primaryEmail: 'Signs.In@example.com', password: strong });
    const { browser } = await newSignIn();
    const events = await eventsDuring(server, receiver, async () => {
      // The email is matched whatever its case.
      const verified = await signInWithApi(browser, { type: 'email', value: 'signs.in@EXAMPLE.com' }, strong);
      expect(verified.status).toBe(200);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
      await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo);
    });
    expect(events.map(({ body }) => [body.event, body.userId])).toEqual([['PostSignIn', user.id]]);
    const stored = await server.api('GET', `/api/users/${user.id}`);
    expect(stored.body.lastSignInAt).toBeGreaterThan(Date.now() - 60_000);
  });

  it('answers a wrong password and an unknown identifier alike, and a suspended user cannot sign in', async () => {
    const user = await createUser({ username: 'careful', password: strong });
    const { browser } = await newSignIn();
    const wrong = await signInWithApi(browser, { type: 'username', value: 'careful' }, 'not the password');
    const unknown = await signInWithApi(browser, { type: 'username', value: 'nobody_here' }, 'not the password');
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({ code: 'session.invalid_credentials', message: 'the identifier or the password is wrong' });
    expect(unknown).toMatchObject({ status: wrong.status, body: wrong.body });

    await server.api('PATCH', `/api/users/${user.id}/is-suspended`, { body: { isSuspended: true } });
    const suspended = await signInWithApi(browser, { type: 'username', value: 'careful' }, strong);
    expect(suspended).toMatchObject({ status: 422, body: { code: 'user.suspended' } });
    // Identification with no verification of this interaction gets nowhere either.
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: 'made-up' })).body.code).toBe('session.verification_not_found');
  });

  it('does not sign in a user suspended between the password check and the submit', async () => {
    const user = await createUser({ username: 'late_suspension', password: strong });
    const { browser } = await newSignIn();
    const verified = await signInWithApi(browser, { type: 'username', value: 'late_suspension' }, strong);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
    await server.api('PATCH', `/api/users/${user.id}/is-suspended`, { body: { isSuspended: true } });
    expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('user.suspended');
    expect((await server.api('GET', `/api/users/${user.id}`)).body.lastSignInAt).toBeNull();
  });

  it('does not reset the password of a suspended user, even with the emailed code', async () => {
    const user = await createUser({ primaryEmail: 'suspended@example.com', password: strong });
    await server.api('PATCH', `/api/users/${user.id}/is-suspended`, { body: { isSuspended: true } });
    const identifier = { type: 'email', value: 'suspended@example.com' };
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'ForgotPassword' });
    const code = await mail.nextCode('suspended@example.com');
    expect(
      (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code }))
        .status,
    ).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).body.code).toBe('user.suspended');
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: strong } })).status).toBe(204);
  });

  it('locks an identifier after five wrong passwords from one address, but not from another address', async () => {
    await createUser({ username: 'targeted', password: strong });
    const { browser } = await newSignIn();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      statuses.push((await signInWithApi(browser, { type: 'username', value: 'targeted' }, `guess number ${attempt}`)).status);
    }
    expect(statuses).toEqual([422, 422, 422, 422, 429]);
    const locked = await signInWithApi(browser, { type: 'username', value: 'targeted' }, strong);
    expect(locked).toMatchObject({ status: 429, body: { code: 'session.too_many_attempts' } });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);

    // The owner, elsewhere, still signs in.
    const { browser: elsewhere } = await newSignIn();
    expect((await signInWithApi(elsewhere, { type: 'username', value: 'targeted' }, strong)).status).toBe(200);
  });

  it('refuses passwords that break the policy, naming the rule', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const attempts = [
      ['short1!', 'at least 8 characters'],
      ['password123', 'too common'],
      ['my_handle_is_long', 'must not contain your username'],
    ] as const;
    for (const [password, reason] of attempts) {
      const answer = await browser.json('POST', '/api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: 'my_handle' },
        password,
      });
      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({ code: 'password.rejected', data: { field: 'password' } });
      expect(answer.body.message).toContain(reason);
    }
    expect(await server.database.db.collection('users').countDocuments({ username: 'my_handle' })).toBe(0);
  });

  it('resets a password with an emailed code: revokes the other sessions, announces User.Data.Updated and PostResetPassword', async () => {
    const user = await createUser({ username: 'forgetful', primaryEmail: 'forgetful@example.com', password: strong });
    // An earlier sign-in, whose session the reset must end.
    const earlier = await newSignIn();
    const first = await signInWithApi(earlier.browser, { type: 'username', value: 'forgetful' }, strong);
    await earlier.browser.json('POST', '/api/experience/identification', { verificationId: first.body.verificationId });
    await codeFrom(earlier.browser, (await earlier.browser.json('POST', '/api/experience/submit')).body.redirectTo);
    const sessions = server.database.db.collection('oidc_Session');
    expect(await sessions.countDocuments({ accountId: user.id })).toBe(1);

    const { browser } = await newSignIn();
    const events = await eventsDuring(server, receiver, async () => {
      await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
      const sent = await browser.json('POST', '/api/experience/verification/verification-code', {
        identifier: { type: 'email', value: 'forgetful@example.com' },
        interactionEvent: 'ForgotPassword',
      });
      expect(sent.status).toBe(200);
      const code = await mail.nextCode('forgetful@example.com');
      const identifier = { type: 'email', value: 'forgetful@example.com' };
      expect(
        (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code }))
          .status,
      ).toBe(200);
      // Used once: the same code again is refused.
      expect(
        (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code }))
          .body.code,
      ).toBe('verification_code.invalid');
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).status).toBe(204);
      expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'forgetful1234' })).body.code).toBe('password.rejected');
      expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'a brand new secret' })).status).toBe(204);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await sessions.countDocuments({ accountId: user.id })).toBe(0);
      await codeFrom(browser, submitted.body.redirectTo);
    });
    expect(events.map(({ body }) => body.event)).toEqual(['User.Data.Updated', 'PostResetPassword']);
    expect(events[1]!.body).toMatchObject({ interactionEvent: 'ForgotPassword', userId: user.id });
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: 'a brand new secret' } })).status).toBe(204);
  });

  it('answers a reset request for an unknown address as for a known one, and sends nothing', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
    const before = mail.messages.length;
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', {
      identifier: { type: 'email', value: 'ghost@example.com' },
      interactionEvent: 'ForgotPassword',
    });
    expect(sent).toMatchObject({ status: 200, body: { verificationId: expect.any(String) } });
    const guess = await browser.json('POST', '/api/experience/verification/verification-code/verify', {
      identifier: { type: 'email', value: 'ghost@example.com' },
      verificationId: sent.body.verificationId,
      code: '123456',
    });
    expect(guess.body.code).toBe('verification_code.invalid');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mail.messages.length).toBe(before);
  });

  it('refuses an expired code, and a right code after five wrong ones', async () => {
    await createUser({ primaryEmail: 'codes@example.com', password: strong });
    const identifier = { type: 'email', value: 'codes@example.com' };
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });

    const expiring = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'ForgotPassword' });
    const expiringCode = await mail.nextCode('codes@example.com');
    await server.database.db
      .collection('verification_codes')
      .updateOne({ _id: expiring.body.verificationId }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect(
      (
        await browser.json('POST', '/api/experience/verification/verification-code/verify', {
          identifier,
          verificationId: expiring.body.verificationId,
          code: expiringCode,
        })
      ).body,
    ).toEqual({ code: 'verification_code.invalid', message: 'the verification code is wrong or has expired' });

    const guessed = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'ForgotPassword' });
    const code = await mail.nextCode('codes@example.com');
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect(
        (
          await browser.json('POST', '/api/experience/verification/verification-code/verify', {
            identifier,
            verificationId: guessed.body.verificationId,
            code: wrong,
          })
        ).status,
      ).toBe(422);
    }
    expect(
      (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: guessed.body.verificationId, code }))
        .body.code,
    ).toBe('verification_code.invalid');
  });

  it('limits how many codes one address can be sent', async () => {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const answer = await browser.json('POST', '/api/experience/verification/verification-code', {
        identifier: { type: 'email', value: 'flooded@example.com' },
        interactionEvent: 'Register',
      });
      statuses.push(answer.status);
      if (answer.status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('refuses cross-site requests: another origin, a form body, a page form without its token', async () => {
    const user = await createUser({ username: 'csrf_target', password: strong });
    const { browser, page, csrf } = await newSignIn();
    const foreign = await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' }, { origin: 'https://evil.example' });
    expect(foreign).toMatchObject({ status: 403, body: { code: 'session.csrf_failed' } });
    const formBody = await browser.go('/api/experience', {
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'interactionEvent=SignIn',
    });
    expect(formBody.status).toBe(415);

    const forged = await browser.form(`${page}/sign-in`, { identifier: 'csrf_target', password: strong });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('This form has expired');
    const stored = await server.api('GET', `/api/users/${user.id}`);
    expect(stored.body.lastSignInAt).toBeNull();
    // With its token the same form signs in.
    const signedIn = await browser.form(`${page}/sign-in`, { csrf, identifier: 'csrf_target', password: strong });
    expect(signedIn.status).toBe(303);
  });

  it('without the interaction cookie the API answers 401, and an unknown interaction page says it expired', async () => {
    const stranger = new TestBrowser(server.url);
    expect(await stranger.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).toMatchObject({ status: 401, body: { code: 'session.not_found' } });
    const page = await stranger.go('/interaction/not-a-real-one');
    expect(page.status).toBe(400);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('This sign-in has expired');
  });

  it('pages: sign up with an emailed code, then the application gets an ID token for the new user', async () => {
    const { browser, page, csrf } = await newSignIn();
    const signUp = await browser.go(`${page}/sign-up`);
    expect(signUp.headers.get('content-security-policy')).toMatch(/form-action 'self' http:\/\/127\.0\.0\.1:9/);
    const codePage = await browser.form(`${page}/sign-up`, { csrf, username: 'page_person', email: 'page.person@example.com', password: strong });
    expect(codePage.status).toBe(200);
    const html = await codePage.text();
    const verificationId = /name="verificationId" value="([^"]+)"/.exec(html)![1]!;
    const code = await mail.nextCode('page.person@example.com');
    const done = await browser.form(`${page}/sign-up/code`, { csrf: csrfOf(html), email: 'page.person@example.com', verificationId, code });
    expect(done.status).toBe(303);
    const authorizationCode = await codeFrom(browser, done.headers.get('location')!);
    await deliveriesSettled(server.database.db);

    const user = (await server.api('GET', '/api/users?search.username=page_person')).body[0];
    expect(user).toMatchObject({ username: 'page_person', primaryEmail: 'page.person@example.com' });
    expect(authorizationCode).toEqual(expect.any(String));
  });

  it("asks a third-party application's user for consent, and honours allow and deny", async () => {
    await createUser({ username: 'consenting', password: strong });
    const thirdParty = await server.create('/api/applications', {
      name: 'Partner app',
      type: 'Traditional',
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const consentFor = async (decision: string) => {
      const browser = new TestBrowser(server.url, `198.51.100.${(ipCounter += 1)}`);
      const { page, csrf } = await startAuthorization(browser, thirdParty.id, redirectUri);
      const signedIn = await browser.form(`${page}/sign-in`, { csrf, identifier: 'consenting', password: strong });
      const { response, url } = await browser.follow(signedIn.headers.get('location')!, redirectUri);
      const html = await response.text();
      expect(url.pathname).toMatch(/^\/interaction\//);
      expect(html).toContain('Allow Partner app?');
      expect(html).toContain('<li>profile</li>');
      const answered = await browser.form(`${url.pathname}/consent`, { csrf: csrfOf(html), decision });
      expect(answered.status).toBe(303);
      return (await browser.follow(answered.headers.get('location')!, redirectUri)).url;
    };
    const allowed = await consentFor('allow');
    expect(allowed.searchParams.get('code')).toEqual(expect.any(String));
    const denied = await consentFor('deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
  });
});
