import { deliveriesSettled, eventsDuring } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import type { MailCatcher } from '../support/smtp.js';
import { TestBrowser, csrfOf, startAuthorization } from '../support/browser.js';
import { experienceWorld, redirectUri, strong } from './world.js';

describe('sign-in experience: codes, resets, cross-site requests and pages (Experience API and pages, over HTTP)', () => {
  const { world, nextAddress, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('experience-codes');
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  beforeAll(() => {
    ({ server, receiver, mail } = world);
  });

  it('resets a password with an emailed code: revokes the other sessions, announces User.Data.Updated and PostResetPassword, signs nobody in', async () => {
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
      // Used once: the same code again is refused (Logto's code for a code it consumed).
      expect(
        (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code }))
          .body.code,
      ).toBe('verification_code.not_found');
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).status).toBe(204);
      expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'forgetful1234' })).body.code).toBe('password.rejected');
      expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'a brand new secret' })).status).toBe(204);
      // As Logto's: the reset answers no redirect and signs nobody in; the interaction starts over.
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(204);
      expect(await sessions.countDocuments({ accountId: user.id })).toBe(0);
    });
    expect(events.map(({ body }) => body.event)).toEqual(['User.Data.Updated', 'PostResetPassword']);
    expect(events[1]!.body).toMatchObject({
      interactionEvent: 'ForgotPassword',
      userId: user.id,
      applicationId: world.clientId,
      sessionId: expect.any(String),
    });
    // What the reset changed, by name (beyond Logto), with the interaction behind it: nobody signed in.
    expect(events[0]!.body).toMatchObject({ changes: ['password'], interactionEvent: 'ForgotPassword' });
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: 'a brand new secret' } })).status).toBe(204);
    // The same interaction goes on as a sign-in with the new password.
    const again = await signInWithApi(browser, { type: 'username', value: 'forgetful' }, 'a brand new secret');
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: again.body.verificationId })).status).toBe(204);
    const signedIn = await browser.json('POST', '/api/experience/submit');
    expect(signedIn.status).toBe(200);
    expect(await codeFrom(browser, signedIn.body.redirectTo)).toEqual(expect.any(String));
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
    expect(guess.body.code).toBe('verification_code.code_mismatch');
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
    ).toMatchObject({ code: 'verification_code.expired' });

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
        ).body.code,
      ).toBe('verification_code.code_mismatch');
    }
    // Logto's libraries/passcode.ts: past the tries, the right code too is refused, with its own code.
    expect(
      (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: guessed.body.verificationId, code }))
        .body.code,
    ).toBe('verification_code.exceed_max_try');
    // A made-up id is no verification of this interaction (404, Logto's code).
    expect(
      await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: 'made-up-id', code }),
    ).toMatchObject({ status: 404, body: { code: 'session.verification_session_not_found' } });
  });

  it('keeps one live code per address, as Logto keeps one verification per identifier: a new code replaces the one before, verified or not', async () => {
    const identifier = { type: 'email', value: 'one.code@example.com' };
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const send = async () => {
      const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'Register' });
      return { verificationId: sent.body.verificationId as string, code: await mail.nextCode(identifier.value) };
    };
    const verify = (verificationId: string, code: string) =>
      browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId, code });
    const first = await send();
    const second = await send();
    // The first, right as it is, no longer counts; so guesses cannot be multiplied by asking again.
    expect(await verify(first.verificationId, first.code)).toMatchObject({ status: 400, body: { code: 'verification_code.not_found' } });
    expect((await verify(second.verificationId, second.code)).status).toBe(200);
    // A verified one is replaced too: it no longer identifies.
    const third = await send();
    expect(await browser.json('POST', '/api/experience/identification', { verificationId: second.verificationId })).toMatchObject({
      status: 400,
      body: { code: 'session.verification_failed' },
    });
    expect((await verify(third.verificationId, third.code)).status).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: third.verificationId })).status).toBe(201);
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

  /** An application signing people in at `redirectUri`. */
  const webApplication = (name: string, { type = 'Traditional', isThirdParty = false } = {}) =>
    server.create('/api/applications', { name, type, isThirdParty, oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] } });

  it("asks a third-party application's user for consent, and honours allow and deny", async () => {
    await createUser({ username: 'consenting', password: strong });
    const thirdParty = await webApplication('Partner app', { isThirdParty: true });
    const consentFor = async (decision: string) => {
      const browser = new TestBrowser(server.url, nextAddress());
      const { page, csrf } = await startAuthorization(browser, thirdParty.id, redirectUri);
      const signedIn = await browser.form(`${page}/sign-in`, { csrf, identifier: 'consenting', password: strong });
      const { response, url } = await browser.follow(signedIn.headers.get('location')!, redirectUri);
      const html = await response.text();
      expect(url.pathname).toMatch(/^\/interaction\//);
      expect(html).toContain('Allow Partner app?');
      // The permission by what it lets the application see, not by its scope name.
      expect(html).toContain('<li>Your name, username and picture</li>');
      const answered = await browser.form(`${url.pathname}/consent`, { csrf: csrfOf(html), decision });
      expect(answered.status).toBe(303);
      return (await browser.follow(answered.headers.get('location')!, redirectUri)).url;
    };
    const allowed = await consentFor('allow');
    expect(allowed.searchParams.get('code')).toEqual(expect.any(String));
    const denied = await consentFor('deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
  });

  // Logto consents first-party applications without asking, even when the request says
  // prompt=consent, as its SDKs do on every sign-in (packages/core/src/routes/experience, consent).
  it('consents a first-party application without asking, even with prompt=consent; a third-party one is asked', async () => {
    await createUser({ username: 'first_party_user', password: strong });
    const firstParty = await webApplication('Our web app');
    const partner = await webApplication('Partner portal', { isThirdParty: true });
    const signIn = async (clientId: string) => {
      const browser = new TestBrowser(server.url, nextAddress());
      const { page, csrf } = await startAuthorization(browser, clientId, redirectUri, 'openid profile offline_access', { prompt: 'consent' });
      const signedIn = await browser.form(`${page}/sign-in`, { csrf, identifier: 'first_party_user', password: strong });
      return browser.follow(signedIn.headers.get('location')!, redirectUri);
    };
    const ours = await signIn(firstParty.id);
    expect(ours.url.href.startsWith(redirectUri)).toBe(true);
    expect(ours.url.searchParams.get('code')).toEqual(expect.any(String));

    const theirs = await signIn(partner.id);
    expect(theirs.url.pathname).toMatch(/^\/interaction\//);
    expect(await theirs.response.text()).toContain('Allow Partner portal?');

    // A third party's single-page application (Logto allows SPA and Native ones) is asked too.
    const partnerSpa = await webApplication('Partner SPA', { type: 'SPA', isThirdParty: true });
    expect(partnerSpa.isThirdParty).toBe(true);
    const spa = await signIn(partnerSpa.id);
    expect(await spa.response.text()).toContain('Allow Partner SPA?');
  });
});
