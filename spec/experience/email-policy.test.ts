import { snapshot } from '../support/db.js';
import type { MailCatcher } from '../support/smtp.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * Logto's `emailBlocklistPolicy` (core libraries/sign-in-experience/email-blocklist-policy.ts; its
 * integration-tests api/experience-api/register-interaction/email-blocklist.test.ts): which email
 * addresses may become an account's. A registration code is not sent to one it refuses, a social
 * registration does not take one, and existing accounts still sign in with theirs.
 */
describe("the sign-in experience's email policy", () => {
  const { world, newSignIn, createUser, signInWithApi } = experienceWorld('email-policy');
  let server: TestServer;
  let mail: MailCatcher;
  beforeAll(() => {
    ({ server, mail } = world);
  });
  const setPolicy = (emailBlocklistPolicy: Record<string, unknown>) => server.api('PATCH', '/api/sign-in-exp', { body: { emailBlocklistPolicy } });
  afterEach(async () => {
    await setPolicy({});
  });

  /** Asks for a registration code for `email` in a new interaction: the answer's status and code. */
  async function registrationCode(email: string) {
    const { browser } = await newSignIn();
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', {
      identifier: { type: 'email', value: email },
      interactionEvent: 'Register',
    });
    return { status: sent.status, code: sent.body?.code as string | undefined, browser, verificationId: sent.body?.verificationId as string | undefined };
  }
  const refused = { status: 422, code: 'session.email_blocklist.email_not_allowed' };
  const sent = { status: 200, code: undefined };
  const outcome = async (email: string) => {
    const { status, code } = await registrationCode(email);
    return { status, code };
  };

  it('is kept and answered by /api/sign-in-exp; a malformed one is 400, naming the field, and changes nothing', async () => {
    const policy = { blockSubaddressing: true, customBlocklist: ['@block.test', 'exact@example.com'], customAllowlist: [], blockDisposableAddresses: false };
    expect((await setPolicy(policy)).status).toBe(200);
    expect((await server.api('GET', '/api/sign-in-exp')).body.emailBlocklistPolicy).toEqual(policy);
    const before = await snapshot(server.database.db);
    for (const bad of [{ customBlocklist: ['no at sign'] }, { customBlocklist: 'x@y.z' }, { blockSubaddressing: 'yes' }]) {
      const answer = await setPolicy(bad);
      expect(answer).toMatchObject({
        status: 400,
        body: { code: 'guard.invalid_input', data: { field: expect.stringMatching(/^body\.emailBlocklistPolicy/) } },
      });
    }
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('refuses a registration code to a +tag address, a blocked domain or address (any case), and to what a wildcard entry names', async () => {
    await setPolicy({ blockSubaddressing: true, customBlocklist: ['@BLOCK.TEST', 'Exact@Example.com', 'foo*@example.com', '@spam.*', '@*.evil.test'] });
    expect(await outcome('ada+shop@example.com')).toEqual({ status: 422, code: 'session.email_blocklist.email_subaddressing_not_allowed' });
    for (const email of ['someone@block.test', 'EXACT@example.com', 'foobar@example.com', 'x@spam.dev', 'x@mail.evil.test']) {
      expect({ email, ...(await outcome(email)) }).toEqual({ email, ...refused });
    }
    // Nothing was sent for any of them; what no entry names gets its code.
    expect(await outcome('bar@example.com')).toEqual(sent);
    expect(await mail.nextCode('bar@example.com')).toMatch(/^\d{6}$/);
    expect(await outcome('x@evil.test')).toEqual(sent);
  });

  it('with an allowlist, allows only what it names, and the blocklist and the +tag rule still refuse within it', async () => {
    await setPolicy({
      customAllowlist: ['@allowed.test', 'one@exact.test', '@*.corp.test'],
      customBlocklist: ['blocked@allowed.test'],
      blockSubaddressing: true,
    });
    expect(await outcome('x@elsewhere.test')).toEqual(refused);
    for (const email of ['a@allowed.test', 'one@exact.test', 'b@eu.corp.test']) expect({ email, ...(await outcome(email)) }).toEqual({ email, ...sent });
    expect(await outcome('blocked@allowed.test')).toEqual(refused);
    expect((await outcome('a+b@allowed.test')).code).toBe('session.email_blocklist.email_subaddressing_not_allowed');
  });

  it('refuses the domains of disposable mail services, and their subdomains, when asked to', async () => {
    expect(await outcome('someone@mailinator.com')).toEqual(sent);
    await setPolicy({ blockDisposableAddresses: true });
    expect(await outcome('someone@mailinator.com')).toEqual(refused);
    expect(await outcome('someone@MAILINATOR.COM')).toEqual(refused);
    // A domain the list names with its subdomains.
    expect(await outcome('someone@inbox.0x01.gq')).toEqual(refused);
    expect(await outcome('someone@example.com')).toEqual(sent);
  });

  it('still lets an existing account sign in with an address the policy now refuses', async () => {
    await createUser({ username: 'old_timer', primaryEmail: 'old@block.test', password: strong });
    await setPolicy({ customBlocklist: ['@block.test'] });
    const { browser } = await newSignIn();
    const verified = await signInWithApi(browser, { type: 'email', value: 'old@block.test' }, strong);
    expect(verified.status).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(204);
  });

  it('says the refusal at the email field of the sign-up page (422), creating nothing', async () => {
    await setPolicy({ customBlocklist: ['@block.test'] });
    const { browser, page, csrf } = await newSignIn();
    const answered = await browser.form(`${page}/sign-up`, { csrf, username: 'page_blocked', email: 'someone@block.test', password: strong });
    const html = await answered.text();
    expect(answered.status).toBe(422);
    expect(html).toMatch(/<input[^>]*id="email"[^>]*aria-invalid="true"|<input[^>]*aria-invalid="true"[^>]*id="email"/);
    expect(html).toContain('This email address cannot be used here. Choose another.');
    expect(await server.database.db.collection('users').countDocuments({ username: 'page_blocked' })).toBe(0);
  });

  it('refuses at identification a registration whose code was sent before the address was blocked, creating no account', async () => {
    const early = await registrationCode('late@block.test');
    expect(early.status).toBe(200);
    const code = await mail.nextCode('late@block.test');
    const identifier = { type: 'email', value: 'late@block.test' };
    await early.browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: early.verificationId, code });
    await setPolicy({ customBlocklist: ['@block.test'] });
    const identified = await early.browser.json('POST', '/api/experience/identification', { verificationId: early.verificationId });
    expect({ status: identified.status, code: identified.body.code }).toEqual(refused);
    expect(await server.database.db.collection('users').countDocuments({ primaryEmail: 'late@block.test' })).toBe(0);
  });
});
