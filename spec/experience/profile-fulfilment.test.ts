import { snapshot } from '../support/db.js';
import { eventsDuring } from '../support/hooks.js';
import type { Receiver } from '../support/receiver.js';
import type { TestServer } from '../support/server.js';
import { csrfOf, type TestBrowser } from '../support/browser.js';
import { experienceWorld, strong } from './world.js';

const method = (identifier: string, password: boolean, verificationCode: boolean) => ({ identifier, password, verificationCode, isPasswordPrimary: password });
const defaults = {
  signUp: { identifiers: ['username', 'email', 'phone'], password: true, verify: true },
  signIn: { methods: ['username', 'email', 'phone'].map((identifier) => method(identifier, true, false)) },
};

/**
 * Logto's profile fulfilment (packages/core/src/routes/experience/classes/libraries/profile-validator.ts,
 * sign-in-experience-validator.ts `getMandatoryUserProfileBySignUpMethods`): what the settings require
 * and an account lacks (a secondary identifier, a password) is asked for before the submit goes ahead,
 * with 422 `user.missing_profile` naming it in `missingProfile`; the person adds it through
 * `POST /api/experience/profile`, and it joins the account at submit, announced once.
 */
describe('sign-in experience: profile fulfilment (user.missing_profile)', () => {
  const { world, newSignIn, createUser, codeFrom, signInWithApi } = experienceWorld('profile-fulfilment');
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(() => {
    ({ server, receiver } = world);
  });
  const settle = async (body: unknown) => expect((await server.api('PATCH', '/api/sign-in-exp', { body })).status).toBe(200);
  afterEach(() => settle(defaults));

  /** A verified code of this interaction for `identifier`; answers its verification id. */
  async function proved(browser: TestBrowser, identifier: { type: 'email' | 'phone'; value: string }, interactionEvent: string) {
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent });
    expect(sent.status).toBe(200);
    const code =
      identifier.type === 'email' ? await world.mail.nextCode(identifier.value) : await world.sms.nextCode(`+${identifier.value.replace(/\D/g, '')}`);
    const verify = { identifier, verificationId: sent.body.verificationId, code };
    expect((await browser.json('POST', '/api/experience/verification/verification-code/verify', verify)).status).toBe(200);
    return sent.body.verificationId as string;
  }

  it('asks an account without the required email for one before signing it in, then links it, announced once', async () => {
    await settle({ signUp: { ...defaults.signUp, identifiers: ['username'], secondaryIdentifiers: [{ identifier: 'email', verify: true }] } });
    const user = await createUser({ username: 'needs_email', password: strong });
    const { browser } = await newSignIn();
    const verified = await signInWithApi(browser, { type: 'username', value: 'needs_email' }, strong);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);

    const before = await snapshot(server.database.db);
    const refused = await browser.json('POST', '/api/experience/submit');
    expect({ status: refused.status, code: refused.body.code, data: refused.body.data }).toEqual({
      status: 422,
      code: 'user.missing_profile',
      data: { missingProfile: ['email'] },
    });
    // A refused submit writes nothing, and may be tried again.
    expect(await snapshot(server.database.db)).toBe(before);

    const events = await eventsDuring(server, receiver, async () => {
      const verificationId = await proved(browser, { type: 'email', value: 'needs.email@example.com' }, 'SignIn');
      expect((await browser.json('POST', '/api/experience/profile', { type: 'email', verificationId })).status).toBe(204);
      await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo);
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['lastSignInAt', 'primaryEmail']],
      ['PostSignIn', undefined],
    ]);
    expect(events[0]!.body).toMatchObject({ data: { id: user.id, primaryEmail: 'needs.email@example.com' }, interactionEvent: 'SignIn' });
  });

  it('asks a passwordless account for a password when sign-up sets one, and takes only what the account lacks', async () => {
    await settle({
      signUp: defaults.signUp,
      signIn: { methods: [method('username', true, false), method('email', true, false), method('phone', true, true)] },
    });
    const user = await createUser({ username: 'no_password_yet', primaryPhone: '+61 412 345 710' });
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
    const verificationId = await proved(browser, { type: 'phone', value: '61412345710' }, 'SignIn');
    expect((await browser.json('POST', '/api/experience/identification', { verificationId })).status).toBe(204);
    expect((await browser.json('POST', '/api/experience/submit')).body.data).toEqual({ missingProfile: ['password'] });

    // What the account has already cannot be replaced here (Logto's `user.*_exists_in_profile`).
    const username = await browser.json('POST', '/api/experience/profile', { type: 'username', value: 'another_name' });
    expect({ status: username.status, code: username.body.code }).toEqual({ status: 422, code: 'user.username_exists_in_profile' });
    const phone = await proved(browser, { type: 'phone', value: '61412345711' }, 'SignIn');
    expect((await browser.json('POST', '/api/experience/profile', { type: 'phone', verificationId: phone })).body.code).toBe('user.phone_exists_in_profile');
    // The password policy holds here too.
    expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: 'short' })).body.code).toBe('password.rejected');

    const events = await eventsDuring(server, receiver, async () => {
      expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong })).status).toBe(204);
      await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo);
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['lastSignInAt', 'password']],
      ['PostSignIn', undefined],
    ]);
    expect(events[0]!.raw).not.toContain(strong);
    expect((await server.api('POST', `/api/users/${user.id}/password/verify`, { body: { password: strong } })).status).toBe(204);
  });

  it('registers with a phone and then the required email, creating the account with both', async () => {
    await settle({
      signUp: { identifiers: ['phone'], password: false, verify: true, secondaryIdentifiers: [{ identifier: 'email' }] },
      signIn: { methods: [method('phone', false, true)] },
    });
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const phone = await proved(browser, { type: 'phone', value: '+61 412 345 720' }, 'Register');
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: phone })).status).toBe(201);
    expect((await browser.json('POST', '/api/experience/submit')).body).toMatchObject({ code: 'user.missing_profile', data: { missingProfile: ['email'] } });
    expect((await server.api('GET', '/api/users?search.primaryPhone=61412345720&mode=exact')).body).toHaveLength(0);

    const events = await eventsDuring(server, receiver, async () => {
      const email = await proved(browser, { type: 'email', value: 'phone.first@example.com' }, 'Register');
      expect((await browser.json('POST', '/api/experience/profile', { type: 'email', verificationId: email })).status).toBe(204);
      await codeFrom(browser, (await browser.json('POST', '/api/experience/submit')).body.redirectTo);
    });
    expect(events.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    expect(events[0]!.body.data).toMatchObject({ primaryPhone: '61412345720', primaryEmail: 'phone.first@example.com' });
  });

  it.each([
    ['a secondary identifier twice', [{ identifier: 'email' }, { identifier: 'email' }], 'sign_in_experiences.duplicated_sign_up_identifiers'],
    ['an unverified secondary email', [{ identifier: 'email', verify: false }], 'sign_in_experiences.passwordless_requires_verify'],
  ])('refuses settings with %s (400), writing nothing', async (_name, secondaryIdentifiers, code) => {
    const before = await snapshot(server.database.db);
    const answer = await server.api('PATCH', '/api/sign-in-exp', { body: { signUp: { ...defaults.signUp, secondaryIdentifiers } } });
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code });
    expect(await snapshot(server.database.db)).toBe(before);
  });

  // The pages run the same steps: sign in by an emailed code, then the profile page asks, one at a time, for
  // what is missing (here a password: the account's email satisfies emailOrPhone), and the sign-in completes.
  it('pages: sign in by an emailed code, then set the password the settings require; a code sign-in they do not allow is refused', async () => {
    await settle({
      signUp: { ...defaults.signUp, secondaryIdentifiers: [{ identifier: 'emailOrPhone' }] },
      signIn: { methods: [method('username', true, false), method('email', true, true), method('phone', true, false)] },
    });
    const user = await createUser({ username: 'page_fulfils', primaryEmail: 'page.fulfils@example.com' });
    // This account has an email, so `emailOrPhone` is satisfied: only the password is asked for.
    const { browser, page, csrf, html: signInHtml } = await newSignIn();
    expect(signInHtml).toContain('action="' + page + '/sign-in/code"');
    const codePage = await browser.form(`${page}/sign-in/code`, { csrf, identifier: 'page.fulfils@example.com' });
    const codeHtml = await codePage.text();
    expect(codeHtml).toContain('Check your email');
    const verificationId = /name="verificationId" value="([^"]+)"/.exec(codeHtml)![1]!;
    const code = await world.mail.nextCode('page.fulfils@example.com');
    const verified = await browser.form(`${page}/sign-in/code/verify`, { csrf: csrfOf(codeHtml), email: 'page.fulfils@example.com', verificationId, code });
    expect({ status: verified.status, location: verified.headers.get('location') }).toEqual({ status: 303, location: `${page}/profile` });

    const profilePage = await browser.go(`${page}/profile`);
    const profileHtml = await profilePage.text();
    expect(profileHtml).toContain('Set a password');
    const weak = await browser.form(`${page}/profile`, { csrf: csrfOf(profileHtml), step: 'password', password: 'short' });
    expect(weak.status).toBe(422);
    const events = await eventsDuring(server, receiver, async () => {
      const done = await browser.form(`${page}/profile`, { csrf: csrfOf(profileHtml), step: 'password', password: strong });
      expect(done.status).toBe(303);
      expect(await codeFrom(browser, done.headers.get('location')!)).toEqual(expect.any(String));
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['lastSignInAt', 'password']],
      ['PostSignIn', undefined],
    ]);

    // A code sign-in the settings do not allow (phone) is refused before any code is sent.
    const other = await newSignIn();
    const refused = await other.browser.form(`${other.page}/sign-in/code`, { csrf: other.csrf, identifier: '+61 412 345 740' });
    expect(refused.status).toBe(422);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain('Signing in with a code is not enabled for this identifier.');
    // Said at the code form's field, which takes the focus (WCAG 3.3.1).
    expect(refusedPage).toMatch(/id="code-identifier"[^>]*aria-invalid="true" aria-describedby="code-identifier-error" autofocus/);
    expect(world.sms.texts.some(({ to }) => to === '+61412345740')).toBe(false);
    // An address that is no address, on the forgotten-password form: said at its one field too.
    const forgot = await newSignIn();
    const malformed = await forgot.browser.form(`${forgot.page}/forgot-password`, { csrf: forgot.csrf, identifier: 'not@an address' });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toMatch(/id="identifier"[^>]*aria-invalid="true" aria-describedby="identifier-error"/);
    expect((await server.api('GET', `/api/users/${user.id}`)).body).toMatchObject({ primaryEmail: 'page.fulfils@example.com' });
  });
});
