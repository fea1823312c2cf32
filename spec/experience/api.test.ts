import { eventsDuring, logtoUserFields } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import { bodyOf, type MailCatcher } from '../support/smtp.js';
import { experienceWorld, strong } from './world.js';

describe('sign-in experience: sign-up and password sign-in (Experience API and pages, over HTTP)', () => {
  const { world, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('experience');
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  let clientId: string;
  beforeAll(() => {
    ({ server, receiver, mail, clientId } = world);
  });

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
      // 201 for a registration, as Logto's (packages/core/src/routes/experience/index.ts).
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(201);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      redirectTo = submitted.body.redirectTo;
      // The same interaction cannot be submitted twice.
      expect((await browser.json('POST', '/api/experience/submit')).body.code).toBe('session.already_submitted');
      expect(await codeFrom(browser, redirectTo)).toEqual(expect.any(String));
    });
    expect(events.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    const [created, registered] = events.map(({ body }) => body);
    expect(created.data).toMatchObject({ username: 'new_person', lastSignInAt: expect.any(Number) });
    expect(Object.keys(created.data).sort()).toEqual(logtoUserFields);
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
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: 'made-up' })).body.code).toBe(
      'session.verification_session_not_found',
    );
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

  it('writes the code the Experience API sends in the language the authorization request asked for (ui_locales)', async () => {
    await createUser({ primaryEmail: 'japanese@example.com', password: strong });
    const { browser } = await newSignIn({ ui_locales: 'ja en' });
    await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
    const identifier = { type: 'email', value: 'japanese@example.com' };
    expect((await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'ForgotPassword' })).status).toBe(200);
    const code = await mail.nextCode('japanese@example.com');
    const message = mail.messages.findLast(({ to }) => to.includes('japanese@example.com'))!;
    expect(bodyOf(message.raw)).toContain(`の確認コードは ${code} です。10 分間有効です。`);
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
    expect(statuses).toEqual([422, 422, 422, 422, 400]);
    const locked = await signInWithApi(browser, { type: 'username', value: 'targeted' }, strong);
    expect(locked).toMatchObject({ status: 400, body: { code: 'session.verification_blocked_too_many_attempts' } });
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

  // Logto's POST /api/experience/identification (packages/core/src/routes/experience/index.ts):
  // a registration is identified from its profile when no verificationId is given; other
  // interactions need one (400 guard.invalid_input).
  it('identifies a registration from its profile alone, and refuses an empty identification elsewhere', async () => {
    const { browser } = await newSignIn();
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' })).status).toBe(204);
    // Logto's 422 user.missing_profile, naming what the settings still require (the defaults: an identifier and a password).
    expect((await browser.json('POST', '/api/experience/identification', {})).body).toMatchObject({
      code: 'user.missing_profile',
      data: { missingProfile: ['username', 'password'] },
    });
    expect((await browser.json('POST', '/api/experience/profile', { type: 'username', value: 'profile_only' })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/identification', {})).status).toBe(201);
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    expect((await server.api('GET', '/api/users?search.username=profile_only')).body).toHaveLength(1);

    const other = (await newSignIn()).browser;
    expect((await other.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    expect(await other.json('POST', '/api/experience/identification', {})).toMatchObject({ status: 400, body: { code: 'guard.invalid_input' } });
  });
});
