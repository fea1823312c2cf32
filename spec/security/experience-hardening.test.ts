import { createCounters } from '../../sign-in/counters.js';
import { createHashGate } from '../../sign-in/hash-gate.js';
import { sha256 } from '../../lib/ids.js';
import { TestBrowser, startAuthorization } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const strong = 'correct horse battery staple';

/** The sign-in experience against an attacker: stolen uids, guessing, spraying, hash floods, look-alike addresses. */
describe('sign-in experience hardening', () => {
  let server: TestServer;
  let mail: MailCatcher;
  let clientId: string;
  let ip = 0;
  const nextIp = () => `192.0.2.${(ip += 1)}`;

  beforeAll(async () => {
    mail = await startMailCatcher();
    server = await startTestServer('hardening', { TRUST_PROXY: '1', SMTP_URL: mail.url, EMAIL_FROM: 'Identity <no-reply@id.test>' });
    clientId = (
      await server.create('/api/applications', {
        name: 'Web',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      })
    ).id;
  });
  afterAll(async () => {
    await server.close();
    await mail.close();
  });

  const onSignInPage = async (address = nextIp()) => {
    const browser = new TestBrowser(server.url, address);
    const authorization = await startAuthorization(browser, clientId, redirectUri);
    return { browser, ...authorization };
  };
  const passwordAttempt = async (browser: TestBrowser, identifier: { type: string; value: string }, password: string) => {
    await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' });
    return browser.json('POST', '/api/experience/verification/password', { identifier, password });
  };

  describe('the Experience API is bound to the browser that holds the interaction', () => {
    it('refuses a request that names the interaction by its uid alone, or with a forged signature (401 session.not_found)', async () => {
      const { browser, page } = await onSignInPage();
      const uid = page.split('/').pop()!;
      expect((await browser.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(204);

      const attacker = new TestBrowser(server.url, nextIp());
      attacker.cookies.set('_experience', uid);
      expect(await attacker.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' })).toMatchObject({
        status: 401,
        body: { code: 'session.not_found' },
      });
      attacker.cookies.set('_experience.sig', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA');
      expect(await attacker.json('POST', '/api/experience/submit')).toMatchObject({ status: 401, body: { code: 'session.not_found' } });
      // Another interaction's signed cookie does not name this one.
      const other = await onSignInPage();
      attacker.cookies.set('_experience', uid);
      attacker.cookies.set('_experience.sig', other.browser.cookies.get('_experience.sig')!);
      expect((await attacker.json('PUT', '/api/experience', { interactionEvent: 'SignIn' })).status).toBe(401);
    });
  });

  describe('lockout is keyed by account and client address', () => {
    it('counts the username and email forms of one account together, and leaves the owner at another address alone', async () => {
      await server.create('/api/users', { username: 'two_forms', primaryEmail: 'two.forms@example.com', password: strong });
      const { browser } = await onSignInPage();
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1)
        statuses.push((await passwordAttempt(browser, { type: 'username', value: 'two_forms' }, `wrong ${attempt}`)).status);
      for (let attempt = 0; attempt < 3; attempt += 1)
        statuses.push((await passwordAttempt(browser, { type: 'email', value: 'TWO.FORMS@example.com' }, `wrong ${attempt}`)).status);
      expect(statuses).toEqual([422, 422, 422, 422, 400, 400]);
      const refused = await passwordAttempt(browser, { type: 'username', value: 'two_forms' }, strong);
      expect(refused).toMatchObject({ status: 400, body: { code: 'session.verification_blocked_too_many_attempts' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

      const owner = await onSignInPage();
      expect((await passwordAttempt(owner.browser, { type: 'email', value: 'two.forms@example.com' }, strong)).status).toBe(200);
    });

    it("follows the sign-in settings' sentinelPolicy (Logto's maxAttempts and lockoutDuration)", async () => {
      await server.create('/api/users', { username: 'sentinel_target', password: strong });
      expect((await server.api('PATCH', '/api/sign-in-exp', { body: { sentinelPolicy: { maxAttempts: 2, lockoutDuration: 30 } } })).status).toBe(200);
      try {
        const { browser } = await onSignInPage();
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 3; attempt += 1)
          statuses.push((await passwordAttempt(browser, { type: 'username', value: 'sentinel_target' }, `wrong ${attempt}`)).status);
        expect(statuses).toEqual([422, 400, 400]);
        const refused = await passwordAttempt(browser, { type: 'username', value: 'sentinel_target' }, strong);
        expect(refused.status).toBe(400);
        // Locked for the 30 minutes (and at most a tenth more: the window is counted in tenths), not the default 15.
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(15 * 60);
        expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(33 * 60);
        // Out of range: 400, and the policy stays.
        for (const sentinelPolicy of [{ maxAttempts: 0 }, { lockoutDuration: 2000 }, { maxAttempts: 'five' }]) {
          expect((await server.api('PATCH', '/api/sign-in-exp', { body: { sentinelPolicy } })).status).toBe(400);
        }
        expect((await server.api('GET', '/api/sign-in-exp')).body.sentinelPolicy).toEqual({ maxAttempts: 2, lockoutDuration: 30 });
      } finally {
        await server.api('PATCH', '/api/sign-in-exp', { body: { sentinelPolicy: {} } });
      }
    });

    it('counts IPv6 clients per /64: changing the last 64 bits does not reset the count', async () => {
      await server.create('/api/users', { username: 'v6_target', password: strong });
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 6; attempt += 1) {
        const { browser } = await onSignInPage(`2001:db8:77:1::${attempt + 1}`);
        statuses.push((await passwordAttempt(browser, { type: 'username', value: 'v6_target' }, `wrong ${attempt}`)).status);
      }
      expect(statuses).toEqual([422, 422, 422, 422, 400, 400]);
      const { browser } = await onSignInPage('2001:db8:77:2::1');
      expect((await passwordAttempt(browser, { type: 'username', value: 'v6_target' }, strong)).status).toBe(200);
    });

    it('limits one address trying passwords across many accounts (password spraying)', async () => {
      const { browser } = await onSignInPage();
      const statuses: number[] = [];
      for (let account = 0; account < 31; account += 1) {
        statuses.push((await passwordAttempt(browser, { type: 'username', value: `sprayed_${account}` }, 'Summer2026!')).status);
      }
      expect(statuses.slice(0, 30).every((status) => status === 422)).toBe(true);
      expect(statuses[30]).toBe(429);
    });

    it('slides its window: five failures at the end of one window still count at the start of the next', async () => {
      let now = Date.UTC(2026, 10, 23, 10, 14);
      const counters = createCounters(server.database.db, { now: () => now });
      for (let attempt = 0; attempt < 5; attempt += 1) await counters.hit('failedPassword', 'sliding-key');
      now = Date.UTC(2026, 10, 23, 10, 16);
      const next = await counters.hit('failedPassword', 'sliding-key');
      expect(next.over).toBe(true);
      // Once the previous window has slid by, the attempts are forgotten.
      now = Date.UTC(2026, 10, 23, 10, 45, 30);
      expect((await counters.hit('failedPassword', 'sliding-key')).over).toBe(false);
    });

    it('counts every attempt of a burst astride a window boundary, however the burst is split', async () => {
      const minute = Date.UTC(2026, 10, 23, 11, 0);
      for (const before of [1, 15, 29]) {
        let now = minute - 2_000;
        const counters = createCounters(server.database.db, { now: () => now });
        const key = `astride-${before}`;
        for (let attempt = 0; attempt < before; attempt += 1) expect((await counters.hit('passwordHash', key)).over).toBe(false);
        now = minute + 8_000;
        for (let attempt = before; attempt < 30; attempt += 1) expect((await counters.hit('passwordHash', key)).over).toBe(false);
        const refused = await counters.hit('passwordHash', key);
        expect(refused.over).toBe(true);
        // Room again once the burst's first bucket has left the window: within a minute and a tenth.
        expect(refused.retryAfter).toBeGreaterThan(0);
        expect(refused.retryAfter).toBeLessThanOrEqual(66);
      }
    });
  });

  describe('password hashing cannot be flooded', () => {
    it("refuses sign-ups past the client address's hash budget with 429 and Retry-After, before hashing", async () => {
      const { browser } = await onSignInPage();
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      const statuses: number[] = [];
      let last: Awaited<ReturnType<TestBrowser['json']>> | undefined;
      for (let attempt = 0; attempt < 31; attempt += 1) {
        last = await browser.json('POST', '/api/experience/verification/new-password-identity', {
          identifier: { type: 'username', value: `flood_${attempt}` },
          password: strong,
        });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 30).every((status) => status === 200)).toBe(true);
      expect(last).toMatchObject({ status: 429, body: { code: 'session.too_many_attempts' } });
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address is not affected.
      const other = await onSignInPage();
      await other.browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      expect(
        (
          await other.browser.json('POST', '/api/experience/verification/new-password-identity', {
            identifier: { type: 'username', value: 'not_flooding' },
            password: strong,
          })
        ).status,
      ).toBe(200);
    });

    it("does not count toward an account's lockout a sign-in refused before hashing (its address's hash budget spent)", async () => {
      const { id } = await server.create('/api/users', { username: 'budget_victim', password: strong });
      const address = nextIp();
      const { browser } = await onSignInPage(address);
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      for (let attempt = 0; attempt < 30; attempt += 1) {
        await browser.json('POST', '/api/experience/verification/new-password-identity', {
          identifier: { type: 'username', value: `spender_${attempt}` },
          password: strong,
        });
      }
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await passwordAttempt(browser, { type: 'username', value: 'budget_victim' }, `guess ${attempt}`)).status).toBe(429);
      }
      const lockoutCounts = await server.database.db
        .collection<{ _id: string; count: number }>('attempt_counters')
        .find({ _id: { $regex: `^failedPassword:${sha256(`account:${id}|${address}`)}:` } })
        .toArray();
      expect(lockoutCounts.reduce((sum, { count }) => sum + count, 0)).toBe(0);
    });

    it('caps concurrent hashes in the process, in all and per client address, and refuses past a cap at once (429, Retry-After 1)', async () => {
      const gate = createHashGate(3, 2);
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const running = [gate('a', () => held), gate('a', () => held)];
      // One address holds its two; another address still gets the third slot, and then none is left.
      await expect(gate('a', async () => 'third of a')).rejects.toMatchObject({ status: 429, data: { retryAfter: 1 } });
      running.push(gate('b', () => held));
      await expect(gate('c', async () => 'fourth')).rejects.toMatchObject({ status: 429, data: { retryAfter: 1 } });
      release();
      await Promise.all(running);
      await expect(gate('a', async () => 'after')).resolves.toBe('after');
    });
  });

  describe('codes go to the stored address, and addresses compare under one normalization', () => {
    it("mails a reset code to the account's stored primaryEmail, not to the address as typed", async () => {
      await server.create('/api/users', { primaryEmail: 'Reset.Owner@example.com', password: strong });
      const { browser } = await onSignInPage();
      await browser.json('PUT', '/api/experience', { interactionEvent: 'ForgotPassword' });
      const before = mail.messages.length;
      // Full-width letters: NFKC makes them the stored address's.
      const typed = 'ｒeset.owner@EXAMPLE.com';
      expect(
        (
          await browser.json('POST', '/api/experience/verification/verification-code', {
            identifier: { type: 'email', value: typed },
            interactionEvent: 'ForgotPassword',
          })
        ).status,
      ).toBe(200);
      const code = await mail.nextCode('reset.owner@example.com');
      expect(code).toMatch(/^\d{6}$/);
      const sent = mail.messages.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.raw).toContain('To: Reset.Owner@example.com');
      expect(sent[0]!.raw).not.toContain(typed);
    });

    it('refuses a sign-up whose address differs from a taken one only by Unicode compatibility form or case', async () => {
      await server.create('/api/users', { primaryEmail: 'strasse@example.com' });
      const created = await server.api('POST', '/api/users', { body: { primaryEmail: 'STRASSE@ｅxample.com' } });
      expect(created).toMatchObject({ status: 422, body: { code: 'user.email_already_in_use' } });
      expect((await server.api('POST', '/api/users', { body: { primaryEmail: 'straße@example.com' } })).body.code).toBe('user.email_already_in_use');
    });
  });
});
