import { snapshot } from '../support/db.js';
import type { TestServer } from '../support/server.js';
import type { SmsCatcher } from '../support/sms.js';
import type { TestBrowser } from '../support/browser.js';
import { experienceWorld, strong } from './world.js';

const method = (identifier: string, password: boolean, verificationCode: boolean) => ({ identifier, password, verificationCode, isPasswordPrimary: password });

/**
 * Logto's sign-in experience settings (packages/core/src/routes/sign-in-experience/index.ts, the
 * `signUp` and `signIn` fields): stored, validated so that every way in works, and followed by the
 * Experience API: sign-up and sign-in methods that are off are refused, and passwordless sign-up and
 * sign-in by code work when they are on.
 */
describe('sign-in experience settings (GET/PATCH /api/sign-in-exp)', () => {
  const { world, newSignIn, createUser, codeFrom, idTokenClaims, signInWithApi } = experienceWorld('sign-in-settings');
  let server: TestServer;
  let sms: SmsCatcher;
  beforeAll(() => {
    ({ server, sms } = world);
  });

  it('answers the defaults: a username, an email or a phone, with a password', async () => {
    expect((await server.api('GET', '/api/sign-in-exp')).body).toEqual({
      signUp: { identifiers: ['username', 'email', 'phone'], password: true, verify: true },
      signIn: { methods: ['username', 'email', 'phone'].map((identifier) => method(identifier, true, false)) },
      mfa: { factors: [], policy: 'UserControlled' },
      passkeySignIn: { enabled: false },
      emailBlocklistPolicy: {},
      sentinelPolicy: {},
    });
  });

  it.each([
    [
      'a username without a password',
      { signUp: { identifiers: ['username'], password: false, verify: false } },
      'sign_in_experiences.username_requires_password',
    ],
    ['a username signing in by code', { signIn: { methods: [method('username', true, true)] } }, 'sign_in_experiences.username_requires_password'],
    ['an email not verified', { signUp: { identifiers: ['email'], password: true, verify: false } }, 'sign_in_experiences.passwordless_requires_verify'],
    [
      'a sign-up identifier without its sign-in method',
      { signIn: { methods: [method('username', true, false)] } },
      'sign_in_experiences.miss_sign_up_identifier_in_sign_in',
    ],
    [
      'passwordless sign-up without code sign-in',
      { signUp: { identifiers: ['phone'], password: false, verify: true }, signIn: { methods: [method('phone', true, false)] } },
      'sign_in_experiences.code_sign_in_must_be_enabled',
    ],
    [
      'password sign-up without password sign-in',
      { signUp: { identifiers: ['email'], password: true, verify: true }, signIn: { methods: [method('email', false, true)] } },
      'sign_in_experiences.password_sign_in_must_be_enabled',
    ],
    ['a method with neither factor', { signIn: { methods: [method('email', false, false)] } }, 'sign_in_experiences.at_least_one_authn_factor'],
    [
      'one identifier twice',
      { signIn: { methods: [method('email', true, false), method('email', false, true)] } },
      'sign_in_experiences.duplicated_sign_in_method',
    ],
    ['no sign-up identifier', { signUp: { identifiers: [], password: true, verify: true } }, 'sign_in_experiences.empty_sign_up_identifiers'],
  ])('refuses %s with 400, writing nothing', async (_name, body, code) => {
    const before = await snapshot(server.database.db);
    const answer = await server.api('PATCH', '/api/sign-in-exp', { body });
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code });
    expect(await snapshot(server.database.db)).toBe(before);
    expect(await server.database.db.collection('configs').countDocuments({ _id: 'sign-in-exp' as never })).toBe(0);
  });

  describe('passwordless with a phone, and nothing else', () => {
    beforeAll(async () => {
      await createUser({ username: 'password_person', password: strong });
      await createUser({ username: 'phone_person', primaryPhone: '+61 412 345 690' });
      const patched = await server.api('PATCH', '/api/sign-in-exp', {
        body: { signUp: { identifiers: ['phone'], password: false, verify: true }, signIn: { methods: [method('phone', false, true)] } },
      });
      expect(patched.status).toBe(200);
    });
    afterAll(async () => {
      const defaults = { signUp: { identifiers: ['username', 'email', 'phone'], password: true, verify: true }, signIn: { methods: [] as unknown[] } };
      defaults.signIn.methods = ['username', 'email', 'phone'].map((identifier) => method(identifier, true, false));
      expect((await server.api('PATCH', '/api/sign-in-exp', { body: defaults })).status).toBe(200);
    });

    const askCode = (browser: TestBrowser, value: string, interactionEvent: string) =>
      browser.json('POST', '/api/experience/verification/verification-code', { identifier: { type: 'phone', value }, interactionEvent });

    it('refuses the ways in that are off: a username sign-up, an email code, a password sign-in (422, Logto’s codes)', async () => {
      const { browser } = await newSignIn();
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      const username = await browser.json('POST', '/api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: 'not_allowed' },
        password: strong,
      });
      expect({ status: username.status, code: username.body.code }).toEqual({ status: 422, code: 'user.sign_up_method_not_enabled' });
      // A code may be sent (it could be for the profile); identifying a new account by it is what is refused, as Logto decides it.
      const email = await browser.json('POST', '/api/experience/verification/verification-code', {
        identifier: { type: 'email', value: 'not.allowed@example.com' },
        interactionEvent: 'Register',
      });
      const identifier = { type: 'email', value: 'not.allowed@example.com' };
      const code = await world.mail.nextCode('not.allowed@example.com');
      await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: email.body.verificationId, code });
      const identified = await browser.json('POST', '/api/experience/identification', { verificationId: email.body.verificationId });
      expect({ status: identified.status, code: identified.body.code }).toEqual({ status: 422, code: 'user.sign_up_method_not_enabled' });

      const signIn = await newSignIn();
      const password = await signInWithApi(signIn.browser, { type: 'username', value: 'password_person' }, strong);
      expect({ status: password.status, code: password.body.code }).toEqual({ status: 422, code: 'user.sign_in_method_not_enabled' });
    });

    it('signs up with a phone and a code alone, and signs in again by code', async () => {
      const { browser } = await newSignIn();
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      const sent = await askCode(browser, '+61 412 345 691', 'Register');
      const code = await sms.nextCode('+61412345691');
      const verified = await browser.json('POST', '/api/experience/verification/verification-code/verify', {
        identifier: { type: 'phone', value: '+61 412 345 691' },
        verificationId: sent.body.verificationId,
        code,
      });
      expect(verified.status).toBe(200);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId })).status).toBe(201);
      expect(await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo)).toEqual(expect.any(String));
      const [user] = (await server.api('GET', '/api/users?search.primaryPhone=61412345691&mode=exact')).body;
      expect(user).toMatchObject({ primaryPhone: '61412345691', hasPassword: false });

      const again = await newSignIn();
      await again.browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
      const signInCode = await askCode(again.browser, '61412345691', 'SignIn');
      expect(signInCode.status).toBe(200);
      await again.browser.json('POST', '/api/experience/verification/verification-code/verify', {
        identifier: { type: 'phone', value: '61412345691' },
        verificationId: signInCode.body.verificationId,
        code: await sms.nextCode('+61412345691'),
      });
      expect((await again.browser.json('POST', '/api/experience/identification', { verificationId: signInCode.body.verificationId })).status).toBe(204);
      const submitted = await again.browser.json('POST', '/api/experience/submit');
      // The ID token says how the user proved it: a one-time code (RFC 8176 `otp`), not a password.
      expect(await idTokenClaims(again, submitted.body.redirectTo)).toMatchObject({ sub: user.id, amr: ['otp'] });
    });

    it('a sign-in code for a number without an account is answered alike, and identifies nobody', async () => {
      const { browser } = await newSignIn();
      await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
      const unknown = await askCode(browser, '+61 412 345 699', 'SignIn');
      const known = await askCode(browser, '+61 412 345 690', 'SignIn');
      expect(unknown.status).toBe(known.status);
      await browser.json('POST', '/api/experience/verification/verification-code/verify', {
        identifier: { type: 'phone', value: '+61 412 345 699' },
        verificationId: unknown.body.verificationId,
        code: await sms.nextCode('+61412345699'),
      });
      const identified = await browser.json('POST', '/api/experience/identification', { verificationId: unknown.body.verificationId });
      // Logto's answer (its code-verification.ts): 404 user.user_not_exist, naming the address the code proved.
      expect(identified).toMatchObject({ status: 404, body: { code: 'user.user_not_exist', data: { identifier: '61412345699' } } });
    });
  });
});
