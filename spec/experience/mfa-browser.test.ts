import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';

import type { RelyingParty } from '../../examples/relying-party.js';
import { accessibilityViolations, browserJourneyMs, launchChromium, screenshotsOf, startExampleApp } from '../support/chromium.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';

const password = 'correct horse battery staple';
/** A TOTP code as an authenticator app shows it (otplib), for the time `at` (now unless pinned). */
const totp = (secret: string, at = Date.now()) => generate({ secret, epoch: Math.floor(at / 1000) });

/**
 * MFA on the sign-in pages, in Chromium, with a CDP virtual authenticator (WebAuthn.addVirtualAuthenticator)
 * standing in for a phone's or laptop's passkey store: mandatory MFA enrols a passkey or an authenticator
 * app and a set of backup codes at sign-in; the next sign-in asks for one; a passkey alone signs in.
 */
describe('MFA on the sign-in pages in a real browser (Chromium, virtual authenticator)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let rp: RelyingParty;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('mfa-browser', { ...hookTestEnv, BRAND_NAME: 'Acme' });
    await subscribe(server, receiver, ['User.Data.Updated', 'PostSignIn']);
    const patched = await server.api('PATCH', '/api/sign-in-exp', {
      body: { mfa: { factors: ['Totp', 'WebAuthn', 'BackupCode'], policy: 'Mandatory' }, passkeySignIn: { enabled: true } },
    });
    expect(patched.status).toBe(200);
    rp = await startExampleApp(server);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 900, height: 800 } });
    // A platform authenticator that keeps discoverable credentials and verifies the user without asking.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await server?.close();
    await receiver?.close();
  });

  const screenshot = screenshotsOf(() => page);
  /** Each page state the tests reach: its screenshot, and what axe-core finds wrong with it. */
  const audited = new Map<string, Awaited<ReturnType<typeof accessibilityViolations>>>();
  const shoot = async (name: string) => {
    await screenshot(name);
    audited.set(name, await accessibilityViolations(page));
  };

  async function signedIn() {
    await page.waitForURL(`${rp.url}/`);
    return JSON.parse(await page.locator('#claims').innerText()) as Record<string, unknown>;
  }
  async function signOut() {
    await page.getByRole('link', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByText('You are not signed in.').waitFor();
  }
  async function signInWithPassword(username: string) {
    await page.goto(rp.url);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Username, email or phone').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }
  /** The backup codes page: reads the codes shown, and saves them. */
  async function saveBackupCodes() {
    await page.getByRole('heading', { name: 'Save your backup codes' }).waitFor();
    const codes = await page.locator('ul.codes code').allInnerTexts();
    expect(codes).toHaveLength(10);
    await shoot('mfa-backup-codes');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    return codes;
  }

  it(
    'enrols a passkey and backup codes at sign-in, is challenged by the passkey next time, and signs in with the passkey alone',
    async () => {
      const user = await server.create('/api/users', { username: 'pat_passkey', password });
      const enrolled = await eventsDuring(server, receiver, async () => {
        await signInWithPassword('pat_passkey');
        await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor();
        await page.getByRole('button', { name: 'Create a passkey' }).click();
        const codes = await saveBackupCodes();
        expect(await signedIn()).toMatchObject({ sub: user.id, amr: ['pwd'] });
        for (const code of codes) expect(JSON.stringify(await server.api('GET', `/api/users/${user.id}`))).not.toContain(code);
      });
      expect(enrolled.map(({ body }) => [body.event, body.changes])).toEqual([
        ['User.Data.Updated', ['lastSignInAt', 'mfaVerifications']],
        ['PostSignIn', undefined],
      ]);
      expect(((await server.api('GET', `/api/users/${user.id}/mfa-verifications`)).body as Array<{ type: string }>).map(({ type }) => type)).toEqual([
        'WebAuthn',
        'BackupCode',
      ]);
      await signOut();

      await signInWithPassword('pat_passkey');
      await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
      await page.getByRole('button', { name: 'Use your passkey' }).click();
      expect(await signedIn()).toMatchObject({ sub: user.id, amr: ['pwd', 'hwk', 'mfa'] });
      await signOut();

      // The passkey alone: a discoverable credential names its user.
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      expect(await signedIn()).toMatchObject({ sub: user.id, amr: ['hwk'] });
      await signOut();
    },
    browserJourneyMs,
  );

  it(
    'enrols an authenticator app at sign-in, is challenged by it next time, and a backup code signs in once',
    async () => {
      const user = await server.create('/api/users', { username: 'tom_totp', password });
      await signInWithPassword('tom_totp');
      await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor();
      const secret = await page.locator('#totp-secret').innerText();
      await shoot('mfa-enrol');
      expect(await page.locator('.qr svg').count()).toBe(1);
      await page.getByLabel('The code it shows').fill(await totp(secret));
      await page.getByRole('button', { name: 'Verify and continue' }).click();
      const codes = await saveBackupCodes();
      expect(await signedIn()).toMatchObject({ sub: user.id, amr: ['pwd'] });
      await signOut();

      await signInWithPassword('tom_totp');
      await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
      await shoot('mfa-challenge');
      await page.getByLabel('Code from your authenticator app').fill(await totp(secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      expect(await signedIn()).toMatchObject({ sub: user.id, amr: ['pwd', 'otp', 'mfa'] });
      await signOut();

      await signInWithPassword('tom_totp');
      await page.getByLabel('A backup code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Use a backup code' }).click();
      expect(await signedIn()).toMatchObject({ sub: user.id, amr: ['pwd', 'otp', 'mfa'] });
      await signOut();

      // The same backup code again: refused, on the page.
      await signInWithPassword('tom_totp');
      await page.getByLabel('A backup code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Use a backup code' }).click();
      await page.locator('#backup-code[aria-invalid="true"]').waitFor();
      expect(await page.locator('#backup-code-error').innerText()).toBe('The backup code is wrong or used already.');
    },
    browserJourneyMs,
  );

  // Through the Experience API from the page, with the same authenticator: what an attacker holding one
  // signed assertion could try. Runs after the first test, which gave pat_passkey its passkey.
  it('refuses a passkey assertion for another challenge, and the same assertion twice', async () => {
    await page.goto(rp.url);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    const outcome = await page.evaluate(async () => {
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`/api/experience${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
        return { status: response.status, body: response.status === 204 ? {} : ((await response.json()) as Record<string, any>) }; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      await api('PUT', '', { interactionEvent: 'SignIn' });
      const one = await api('POST', '/verification/web-authn/authentication');
      const two = await api('POST', '/verification/web-authn/authentication');
      const webauthn = (globalThis as unknown as { SimpleWebAuthnBrowser: { startAuthentication(options: unknown): Promise<unknown> } }).SimpleWebAuthnBrowser;
      const payload = await webauthn.startAuthentication({ optionsJSON: one.body.authenticationOptions });
      const crossed = await api('POST', '/verification/web-authn/authentication/verify', { verificationId: two.body.verificationId, payload });
      const first = await api('POST', '/verification/web-authn/authentication/verify', { verificationId: one.body.verificationId, payload });
      const replayed = await api('POST', '/verification/web-authn/authentication/verify', { verificationId: one.body.verificationId, payload });
      return { crossed: [crossed.status, crossed.body.code], first: first.status, replayed: [replayed.status, replayed.body.code] };
    });
    expect(outcome).toEqual({
      crossed: [400, 'session.mfa.webauthn_verification_failed'],
      first: 200,
      replayed: [400, 'session.mfa.webauthn_verification_failed'],
    });
  });

  // Logto's Account API registers a passkey too: options and answer through /api/verifications/web-authn/registration
  // (bound to the user and application), then POST /api/my-account/mfa-verifications behind a step-up.
  it('registers a passkey through the Account API, and names it', async () => {
    const policy = (value: string) =>
      server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp', 'WebAuthn', 'BackupCode'], policy: value } } });
    const user = await server.create('/api/users', { username: 'ada_account', password });
    const application = await server.create('/api/applications', {
      name: 'Account app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['http://127.0.0.1:9/callback'], postLogoutRedirectUris: [] },
    });
    const client = { clientId: application.id, clientSecret: application.secret };
    // A sign-in without enrolment, to hold the user's own token.
    await policy('NoPrompt');
    let token: string;
    try {
      const flow = await codeFlow(new TestBrowser(server.url, '198.51.100.80'), {
        clientId: client.clientId,
        redirectUri: 'http://127.0.0.1:9/callback',
        scope: 'openid identities',
        identifier: 'ada_account',
        password,
      });
      token = (await redeem(server, client, flow)).access_token;
    } finally {
      await policy('Mandatory');
    }
    await page.goto(`${server.issuer}/.well-known/openid-configuration`);
    await page.addScriptTag({ url: `${server.url}/interaction-assets/simplewebauthn-browser.js` });
    const ceremony = await page.evaluate(async (bearer) => {
      const call = async (path: string, body: unknown) => {
        const response = await fetch(path, {
          method: 'POST',
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const made = await call('/api/verifications/web-authn/registration', {});
      const webauthn = (globalThis as unknown as { SimpleWebAuthnBrowser: { startRegistration(options: unknown): Promise<unknown> } }).SimpleWebAuthnBrowser;
      const payload = await webauthn.startRegistration({ optionsJSON: made.body.registrationOptions });
      const verified = await call('/api/verifications/web-authn/registration/verify', { verificationRecordId: made.body.verificationRecordId, payload });
      const replayed = await call('/api/verifications/web-authn/registration/verify', { verificationRecordId: made.body.verificationRecordId, payload });
      return { made: made.status, verified: verified.status, replayed: [replayed.status, replayed.body.code], id: made.body.verificationRecordId as string };
    }, token);
    expect(ceremony).toMatchObject({ made: 201, verified: 200, replayed: [400, 'session.mfa.webauthn_verification_failed'] });

    const stepUp = async () => (await server.api('POST', '/api/verifications/password', { token, body: { password } })).body.verificationRecordId as string;
    const add = async (record: string) =>
      server.api('POST', '/api/my-account/mfa-verifications', {
        token,
        body: { type: 'WebAuthn', newIdentifierVerificationRecordId: record, name: 'Laptop' },
        headers: { 'logto-verification-id': await stepUp() },
      });
    expect((await add(ceremony.id)).status).toBe(204);
    // Spent: the same registration adds nothing more.
    expect((await add(ceremony.id)).body.code).toBe('verification_record.not_found');
    const [passkey] = (await server.api('GET', `/api/users/${user.id}/mfa-verifications`)).body as Array<{ id: string; type: string; name?: string }>;
    expect(passkey).toMatchObject({ type: 'WebAuthn', name: 'Laptop' });
    const renamed = await server.api('PATCH', `/api/my-account/mfa-verifications/${passkey!.id}/name`, {
      token,
      body: { name: 'Work laptop' },
      headers: { 'logto-verification-id': await stepUp() },
    });
    expect(renamed.body).toMatchObject({ id: passkey!.id, type: 'WebAuthn', name: 'Work laptop' });
  });

  // Last: every page state the tests above reached was audited when it was shot.
  it('finds no accessibility violation in any page state it reached (axe-core: WCAG 2.0 to 2.2, A and AA)', () => {
    expect(audited.size).toBeGreaterThan(0);
    expect([...audited].filter(([, found]) => found.length > 0)).toEqual([]);
  });
});
