import { csrfOf, type TestBrowser } from '../support/browser.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * Logto's MFA policies, as its integration tests expect them
 * (packages/integration-tests/src/tests/api/experience-api/bind-mfa/happpy-path.test.ts, and
 * packages/core/src/routes/experience/classes/mfa.ts for the rules): which submits ask an account
 * without a factor to enrol (422 `user.missing_mfa`), which let it skip
 * (`POST /api/experience/profile/mfa/mfa-skipped`), and a skip kept on the account
 * (`/api/users/:id/logto-configs`). MFA is offered with TOTP alone.
 */
describe('sign-in experience: the MFA policies Logto clients send', () => {
  const { world, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('mfa-policies');
  let server: TestServer;
  beforeAll(() => {
    server = world.server;
  });
  const policy = async (name: string, factors = ['Totp']) =>
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors, policy: name } } })).status).toBe(200);

  /** A registration through the Experience API, up to (not including) the submit. */
  async function registering(username: string) {
    const signUp = await newSignIn();
    const { browser } = signUp;
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' })).status).toBe(204);
    const made = await browser.json('POST', '/api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: username },
      password: strong,
    });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: made.body.verificationId })).status).toBe(201);
    return browser;
  }
  /** A sign-in through the Experience API, identified, up to the submit. */
  async function signingIn(username: string) {
    const signIn = await newSignIn();
    const verified = await signInWithApi(signIn.browser, { type: 'username', value: username }, strong);
    expect((await signIn.browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
    return signIn.browser;
  }
  const submit = (browser: TestBrowser) => browser.json('POST', '/api/experience/submit');
  /** Submits and follows the redirect: the sign-in is complete. */
  async function completes(browser: TestBrowser) {
    const submitted = await submit(browser);
    expect(submitted.status).toBe(200);
    expect(await codeFrom(browser, submitted.body.redirectTo)).toEqual(expect.any(String));
  }
  const idOf = async (username: string) =>
    ((await server.api('GET', '/api/users?page_size=100')).body as Array<{ id: string; username: string }>).find((user) => user.username === username)!.id;
  const skip = (browser: TestBrowser) => browser.json('POST', '/api/experience/profile/mfa/mfa-skipped');
  const missing = (skippable: boolean) => ({
    status: 422,
    body: expect.objectContaining({ code: 'user.missing_mfa', data: { availableFactors: ['Totp'], ...(skippable && { skippable: true }) } }),
  });

  /** The submit asks (skippably), the skip is taken, and the submit then completes. */
  async function askedThenSkips(browser: TestBrowser) {
    expect(await submit(browser)).toMatchObject(missing(true));
    expect((await skip(browser)).status).toBe(204);
    await completes(browser);
  }

  it('accepts every policy Logto defines, and stores it as given', async () => {
    for (const name of [
      'UserControlled',
      'Mandatory',
      'PromptAtSignInAndSignUp',
      'PromptOnlyAtSignIn',
      'NoPrompt',
      'PromptAtSignInAndSignUpMandatory',
      'PromptOnlyAtSignInMandatory',
    ]) {
      await policy(name);
      expect((await server.api('GET', '/api/sign-in-exp')).body.mfa.policy).toBe(name);
    }
    const unknown = await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'Sometimes' } } });
    expect(unknown.status).toBe(400);
    // A policy that cannot be skipped needs a factor to enrol.
    const empty = await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: [], policy: 'PromptOnlyAtSignInMandatory' } } });
    expect(empty.body.code).toBe('sign_in_experiences.empty_mfa_factors');
  });

  it('PromptAtSignInAndSignUp (happpy-path.test.ts): asked at registration, skippable; the skip is kept on the account until the Management API clears it', async () => {
    await policy('PromptAtSignInAndSignUp');
    const browser = await registering('prompted_newcomer');
    expect(await submit(browser)).toMatchObject(missing(true));
    expect((await skip(browser)).status).toBe(204);
    const submitted = await submit(browser);
    expect(submitted.status).toBe(200);
    await codeFrom(browser, submitted.body.redirectTo);
    const userId = await idOf('prompted_newcomer');
    expect((await server.api('GET', `/api/users/${userId}/logto-configs`)).body).toEqual({ mfa: { skipped: true } });

    // Not asked again: the skip is the account's.
    await completes(await signingIn('prompted_newcomer'));
    // Cleared by an operator: asked again at the next sign-in.
    expect((await server.api('PATCH', `/api/users/${userId}/logto-configs`, { body: { mfa: { skipped: false } } })).body).toEqual({ mfa: { skipped: false } });
    expect(await submit(await signingIn('prompted_newcomer'))).toMatchObject(missing(true));
  });

  it('UserControlled (Logto’s older name for PromptAtSignInAndSignUp) asks at sign-in, skippable', async () => {
    await policy('UserControlled');
    await createUser({ username: 'controlled_one', password: strong });
    await askedThenSkips(await signingIn('controlled_one'));
  });

  it('PromptOnlyAtSignIn: a registration is not asked; the first sign-in is, and may skip', async () => {
    await policy('PromptOnlyAtSignIn');
    await completes(await registering('later_prompted'));
    await askedThenSkips(await signingIn('later_prompted'));
  });

  it('NoPrompt: neither a registration nor a sign-in is asked', async () => {
    await policy('NoPrompt');
    await completes(await registering('never_prompted'));
    await completes(await signingIn('never_prompted'));
  });

  it('Mandatory and the adaptive policies cannot be skipped (422 session.mfa.mfa_policy_not_user_controlled), and an earlier skip does not count under them', async () => {
    await policy('PromptAtSignInAndSignUp');
    await createUser({ username: 'skipped_before', password: strong });
    const first = await signingIn('skipped_before');
    expect((await skip(first)).status).toBe(204);
    await completes(first);

    for (const name of ['Mandatory', 'PromptAtSignInAndSignUpMandatory', 'PromptOnlyAtSignInMandatory']) {
      await policy(name);
      const browser = await signingIn('skipped_before');
      expect(await submit(browser)).toMatchObject(missing(false));
      expect(await skip(browser)).toMatchObject({ status: 422, body: { code: 'session.mfa.mfa_policy_not_user_controlled' } });
      expect(await submit(browser)).toMatchObject(missing(false));
    }
    // PromptOnlyAtSignInMandatory asks nothing at registration.
    await completes(await registering('adaptive_newcomer'));
  });

  it('a skip counts only for the account it was made for: identified as another account afterwards, the interaction asks again', async () => {
    await policy('PromptAtSignInAndSignUp');
    await createUser({ username: 'skipper_a', password: strong });
    await createUser({ username: 'skipper_b', password: strong });
    const browser = await signingIn('skipper_a');
    expect((await skip(browser)).status).toBe(204);
    // The same interaction now proves another account's password and names it.
    const other = await browser.json('POST', '/api/experience/verification/password', {
      identifier: { type: 'username', value: 'skipper_b' },
      password: strong,
    });
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: other.body.verificationId })).status).toBe(204);
    expect(await submit(browser)).toMatchObject(missing(true));
    expect((await server.api('GET', `/api/users/${await idOf('skipper_b')}/logto-configs`)).body).toEqual({ mfa: { skipped: false } });
  });

  it('before identification the skip is 404 session.identifier_not_found, and the logto-configs routes refuse bad input', async () => {
    await policy('PromptAtSignInAndSignUp');
    const { browser } = await newSignIn();
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);
    expect(await skip(browser)).toMatchObject({ status: 404, body: { code: 'session.identifier_not_found' } });
    const bind = await browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: 'dummy_verification_id' });
    expect({ status: bind.status, code: bind.body.code }).toEqual({ status: 404, code: 'session.identifier_not_found' });
    // In a password reset there is nothing to add or skip (Logto's sad-path.test.ts).
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' })).status).toBe(204);
    expect(await skip(browser)).toMatchObject({ status: 400, body: { code: 'session.not_supported_for_forgot_password' } });
    const inReset = await browser.json('POST', '/api/experience/profile/mfa', { type: 'Totp', verificationId: 'dummy_verification_id' });
    expect({ status: inReset.status, code: inReset.body.code }).toEqual({ status: 400, code: 'session.not_supported_for_forgot_password' });
    const user = await createUser({ username: 'configured', password: strong });
    const bad = await server.api('PATCH', `/api/users/${user.id}/logto-configs`, { body: { mfa: { skipped: 'yes' } } });
    expect(bad.status).toBe(400);
    expect((await server.api('GET', `/api/users/${user.id}/logto-configs`)).body).toEqual({ mfa: { skipped: false } });
    expect((await server.api('GET', '/api/users/nobody/logto-configs')).status).toBe(404);
  });

  it('makes backup codes and a passkey registration for a factor the settings do not offer, and refuses to bind them (400 session.mfa.mfa_factor_not_enabled), as Logto (its experience-api/bind-mfa/sad-path.test.ts)', async () => {
    await policy('NoPrompt');
    await createUser({ username: 'early_enroller', password: strong });
    const browser = await signingIn('early_enroller');
    const codes = await browser.json('POST', '/api/experience/verification/backup-code/generate');
    expect(codes).toMatchObject({ status: 200, body: { verificationId: expect.any(String), codes: expect.any(Array) } });
    expect((await browser.json('POST', '/api/experience/verification/web-authn/registration')).status).toBe(200);
    const bound = await browser.json('POST', '/api/experience/profile/mfa', { type: 'BackupCode', verificationId: codes.body.verificationId });
    expect({ status: bound.status, code: bound.body.code }).toEqual({ status: 400, code: 'session.mfa.mfa_factor_not_enabled' });
    await completes(browser);
    expect((await server.api('GET', `/api/users/${await idOf('early_enroller')}/mfa-verifications`)).body).toEqual([]);
  });

  it('the pages offer the skip only where the policy allows it, and skipping completes the sign-in', async () => {
    await policy('PromptAtSignInAndSignUp');
    await createUser({ username: 'page_skipper', password: strong });
    const { browser, page, csrf } = await newSignIn();
    const signedIn = await browser.form(`${page}/sign-in`, { csrf, identifier: 'page_skipper', password: strong });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(`${page}/mfa/enrol`);
    const enrol = await (await browser.go(`${page}/mfa/enrol`)).text();
    expect(enrol).toContain(`action="${page}/mfa/enrol/skip"`);
    const skipped = await browser.form(`${page}/mfa/enrol/skip`, { csrf: csrfOf(enrol) });
    expect(skipped.status).toBe(303);
    expect(await codeFrom(browser, skipped.headers.get('location')!)).toEqual(expect.any(String));

    await policy('Mandatory');
    await createUser({ username: 'page_mandatory', password: strong });
    const second = await newSignIn();
    await second.browser.form(`${second.page}/sign-in`, { csrf: second.csrf, identifier: 'page_mandatory', password: strong });
    const mandatory = await (await second.browser.go(`${second.page}/mfa/enrol`)).text();
    expect(mandatory).not.toContain('/mfa/enrol/skip');
    // Posted anyway, the skip is refused at the field of the page, and nothing is signed in.
    const forced = await second.browser.form(`${second.page}/mfa/enrol/skip`, { csrf: csrfOf(mandatory) });
    expect(forced.status).toBe(422);
  });
});
