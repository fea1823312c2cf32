import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * The Experience API's verification steps are not tied to the interaction's event, as Logto's are
 * not (its verification records are made in any interaction; identification decides what one
 * may do): packages/integration-tests/src/tests/api/experience-api/verifications/
 * new-password-identity-verification.test.ts and verification-code.test.ts.
 */
describe('Experience API: verification steps in any interaction (Logto’s)', () => {
  const { world, newSignIn, createUser, codeFrom } = experienceWorld('logto-steps');
  let server: TestServer;
  beforeAll(() => {
    server = world.server;
  });

  /** An interaction started as a sign-in, as Logto's `initExperienceClient()` starts one. */
  async function signingIn() {
    const { browser } = await newSignIn();
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    return browser;
  }

  it('new-password-identity in a sign-in: 422 user.username_already_in_use for a taken username (before the password’s faults), 422 password.rejected, else a verification', async () => {
    await createUser({ username: 'taken_name', password: strong });
    const browser = await signingIn();
    const create = (value: string, password: string) =>
      browser.json('POST', '/api/experience/verification/new-password-identity', { identifier: { type: 'username', value }, password });
    expect(await create('taken_name', 'password')).toMatchObject({ status: 422, body: { code: 'user.username_already_in_use' } });
    expect(await create('free_name', '123')).toMatchObject({ status: 422, body: { code: 'password.rejected' } });
    const made = await create('free_name', strong);
    expect(made).toMatchObject({ status: 200, body: { verificationId: expect.any(String) } });
    // Only a registration identifies by it: switched to one, the same verification registers.
    expect((await browser.json('PUT', '/api/experience/interaction-event', { interactionEvent: 'Register' })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: made.body.verificationId })).status).toBe(201);
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    expect(await codeFrom(browser, submitted.body.redirectTo)).toEqual(expect.any(String));
  });

  it('each answer about a username costs the address a password hash: past its budget (30 a minute) the probes are 429, so taken usernames cannot be listed without limit', async () => {
    await createUser({ username: 'probed_name', password: strong });
    const browser = await signingIn();
    const probe = () =>
      browser.json('POST', '/api/experience/verification/new-password-identity', { identifier: { type: 'username', value: 'probed_name' }, password: strong });
    for (let tried = 0; tried < 30; tried += 1) expect((await probe()).body.code).toBe('user.username_already_in_use');
    expect(await probe()).toMatchObject({ status: 429, body: { code: 'session.too_many_attempts' } });
  });

  it('a password is verified in a registration too; identifying by it there names no verification a registration can use', async () => {
    await createUser({ username: 'verified_anywhere', password: strong });
    const { browser } = await newSignIn();
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' })).status).toBe(204);
    const verified = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'verified_anywhere' },
      password: strong,
    });
    expect(verified).toMatchObject({ status: 200, body: { verificationId: expect.any(String) } });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(404);
    // A wrong one is refused as at sign-in.
    const wrong = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'verified_anywhere' },
      password: 'not the password at all',
    });
    expect(wrong).toMatchObject({ status: 422, body: { code: 'session.invalid_credentials' } });
  });

  it('a code’s interactionEvent picks its message, not the interaction’s: a code sent for a registration from a sign-in registers after the switch', async () => {
    const browser = await signingIn();
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', {
      identifier: { type: 'email', value: 'switcher@example.com' },
      interactionEvent: 'Register',
    });
    expect(sent).toMatchObject({ status: 200, body: { verificationId: expect.any(String) } });
    const code = await world.mail.nextCode('switcher@example.com');
    const verified = await browser.json('POST', '/api/experience/verification/verification-code/verify', {
      identifier: { type: 'email', value: 'switcher@example.com' },
      verificationId: sent.body.verificationId,
      code,
    });
    expect(verified.status).toBe(200);
    expect((await browser.json('PUT', '/api/experience/interaction-event', { interactionEvent: 'Register' })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).status).toBe(201);
    expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong })).status).toBe(204);
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    const users = (await server.api('GET', '/api/users?page_size=100')).body as Array<{ primaryEmail: string | null }>;
    expect(users.some(({ primaryEmail }) => primaryEmail === 'switcher@example.com')).toBe(true);
  });

  /** A verified code for `email`, sent for `purpose` in this browser's interaction: its verification id. */
  async function verifiedCode(browser: Awaited<ReturnType<typeof signingIn>>, email: string, purpose: 'SignIn' | 'Register' | 'ForgotPassword') {
    const identifier = { type: 'email', value: email };
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: purpose });
    expect(sent.status).toBe(200);
    const code = await world.mail.nextCode(email);
    expect(
      (await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code }))
        .status,
    ).toBe(200);
    return sent.body.verificationId as string;
  }
  const identify = (browser: Awaited<ReturnType<typeof signingIn>>, verificationId: string) =>
    browser.json('POST', '/api/experience/identification', { verificationId });
  const switchTo = (browser: Awaited<ReturnType<typeof signingIn>>, interactionEvent: string) =>
    browser.json('PUT', '/api/experience/interaction-event', { interactionEvent });

  describe('with sign-in by email code on', () => {
    beforeAll(async () => {
      const methods = ['username', 'email', 'phone'].map((identifier) => ({
        identifier,
        password: true,
        verificationCode: identifier !== 'username',
        isPasswordPrimary: true,
      }));
      expect((await server.api('PATCH', '/api/sign-in-exp', { body: { signIn: { methods } } })).status).toBe(200);
    });

    it('a registration that finds the email taken (422, the code kept) goes on as a sign-in with the same code (Logto register-interaction tests)', async () => {
      const user = await createUser({ username: 'already_here', primaryEmail: 'already.here@example.com', password: strong });
      const { browser } = await newSignIn();
      expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' })).status).toBe(204);
      const verificationId = await verifiedCode(browser, 'already.here@example.com', 'Register');
      expect(await identify(browser, verificationId)).toMatchObject({ status: 422, body: { code: 'user.email_already_in_use' } });
      expect((await switchTo(browser, 'SignIn')).status).toBe(204);
      expect((await identify(browser, verificationId)).status).toBe(204);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await codeFrom(browser, submitted.body.redirectTo)).toEqual(expect.any(String));
      // Spent once it identified: it does not identify again.
      expect((await identify(browser, verificationId)).status).toBeGreaterThanOrEqual(400);
      expect((await server.api('GET', `/api/users/${user.id}`)).body.lastSignInAt).toEqual(expect.any(Number));
    });

    it('a sign-in that finds no account (404 user.user_not_exist, the code kept) goes on as a registration with the same code', async () => {
      const browser = await signingIn();
      const verificationId = await verifiedCode(browser, 'newcomer@example.com', 'SignIn');
      expect(await identify(browser, verificationId)).toMatchObject({
        status: 404,
        body: { code: 'user.user_not_exist', data: { identifier: 'newcomer@example.com' } },
      });
      expect((await switchTo(browser, 'Register')).status).toBe(204);
      expect((await identify(browser, verificationId)).status).toBe(201);
      expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong })).status).toBe(204);
      expect((await browser.json('POST', '/api/experience/submit')).status).toBe(200);
      expect(await server.database.db.collection('users').countDocuments({ primaryEmail: 'newcomer@example.com' })).toBe(1);
    });
  });

  it('a reset is not switched to or from (400 session.not_supported_for_forgot_password), identifies by a code only (422), and refuses the password the account has (422 user.same_password)', async () => {
    const user = await createUser({ username: 'resetter', primaryEmail: 'resetter@example.com', password: strong });
    const browser = await signingIn();
    expect(await switchTo(browser, 'ForgotPassword')).toMatchObject({ status: 400, body: { code: 'session.not_supported_for_forgot_password' } });
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' })).status).toBe(204);
    expect(await switchTo(browser, 'SignIn')).toMatchObject({ status: 400, body: { code: 'session.not_supported_for_forgot_password' } });

    const byPassword = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'resetter' },
      password: strong,
    });
    expect(byPassword.status).toBe(200);
    expect(await identify(browser, byPassword.body.verificationId)).toMatchObject({ status: 422, body: { code: 'session.not_supported_for_forgot_password' } });

    expect((await identify(browser, await verifiedCode(browser, 'resetter@example.com', 'ForgotPassword'))).status).toBe(204);
    const before = (await server.database.db.collection('users').findOne({ _id: user.id as never }))!.passwordHash;
    expect(await browser.json('PUT', '/api/experience/profile/password', { password: strong })).toMatchObject({
      status: 422,
      body: { code: 'user.same_password' },
    });
    expect((await browser.json('PUT', '/api/experience/profile/password', { password: 'an entirely new secret' })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/submit')).status).toBe(204);
    expect((await server.database.db.collection('users').findOne({ _id: user.id as never }))!.passwordHash).not.toBe(before);
  });
});
