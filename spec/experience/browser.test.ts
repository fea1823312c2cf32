import type { Browser, Page } from 'playwright-core';

import type { RelyingParty } from '../../examples/relying-party.js';
import { accessibilityViolations, browserJourneyMs, launchChromium, screenshotsOf, startExampleApp } from '../support/chromium.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { startSmsCatcher, type SmsCatcher } from '../support/sms.js';

describe('sign-in experience in a real browser (Chromium), through the example web app', () => {
  let server: TestServer;
  let receiver: Receiver;
  let mail: MailCatcher;
  let sms: SmsCatcher;
  let rp: RelyingParty;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    receiver = await startReceiver();
    mail = await startMailCatcher();
    sms = await startSmsCatcher();
    server = await startTestServer('browser', {
      ...hookTestEnv,
      ...sms.env,
      SMTP_URL: mail.url,
      EMAIL_FROM: 'Acme <no-reply@acme.test>',
      BRAND_NAME: 'Acme',
      BRAND_COLOR: '#0b6e4f',
    });
    await subscribe(server, receiver, ['User.Created', 'User.Data.Updated', 'PostRegister', 'PostSignIn', 'PostResetPassword']);
    rp = await startExampleApp(server);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 900, height: 760 } });
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await server?.close();
    await receiver?.close();
    await mail?.close();
    await sms?.close();
  });

  const screenshot = screenshotsOf(() => page);
  /** Each page state the tests reach: its screenshot, and what axe-core finds wrong with it. */
  const audited = new Map<string, Awaited<ReturnType<typeof accessibilityViolations>>>();
  const shoot = async (name: string) => {
    await screenshot(name);
    audited.set(name, await accessibilityViolations(page));
  };

  /** What the example app shows after a sign-in: the name it greets and the ID token's claims. */
  async function signedInAs() {
    await page.waitForURL(`${rp.url}/`);
    const claims = JSON.parse(await page.locator('#claims').innerText()) as Record<string, unknown>;
    const profile = JSON.parse(await page.locator('#profile').innerText()) as Record<string, unknown>;
    return { who: await page.locator('#who').innerText(), claims, profile };
  }

  async function signOut() {
    await page.getByRole('link', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await shoot('sign-out');
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByText('You are not signed in.').waitFor();
  }

  it(
    'signs up with an emailed code, signs out, signs in, and resets a forgotten password',
    async () => {
      // Sign up.
      const signUp = await eventsDuring(server, receiver, async () => {
        await page.goto(rp.url);
        await page.getByRole('link', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        // The page says which application the person signs in to.
        expect(await page.locator('p.application').innerText()).toBe('to continue to Example web app');
        await shoot('sign-in');
        await page.getByRole('link', { name: 'Create an account' }).click();
        await page.getByLabel('Username').fill('ada_lovelace');
        await page.getByLabel('Email').fill('ada@example.com');
        await page.getByLabel('Password').fill('analytical engine 1843');
        await shoot('sign-up');
        await page.getByRole('button', { name: 'Create account' }).click();
        await page.getByRole('heading', { name: 'Check your email' }).waitFor();
        await page.getByLabel('Verification code').fill(await mail.nextCode('ada@example.com'));
        await shoot('verify-email');
        await page.getByRole('button', { name: 'Verify and create account' }).click();
        const { who, claims, profile } = await signedInAs();
        expect(who).toBe('ada_lovelace');
        const [user] = (await server.api('GET', '/api/users?search.username=ada_lovelace')).body;
        // openid-client checked the ID token (signature, iss, aud, nonce); here is what it said.
        expect(claims).toMatchObject({ sub: user.id, iss: server.issuer, aud: expect.anything(), nonce: expect.any(String) });
        expect(profile).toMatchObject({ sub: user.id, username: 'ada_lovelace', email: 'ada@example.com' });
        await shoot('signed-in');
      });
      expect(signUp.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
      // A data event caused by an interaction names the interaction, not a request (Logto's
      // packages/core/src/libraries/hook/context-manager.ts, HookMetadata: InteractionApiMetadata).
      const applicationId = signUp[1]!.body.applicationId;
      expect(signUp[0]!.body).toMatchObject({
        interactionEvent: 'Register',
        sessionId: expect.any(String),
        applicationId,
        application: { id: applicationId, name: expect.any(String) },
        data: { username: 'ada_lovelace' },
      });
      expect(signUp[0]!.body).not.toHaveProperty('matchedRoute');

      await signOut();

      // Sign in with the email and password.
      const signIn = await eventsDuring(server, receiver, async () => {
        await page.getByRole('link', { name: 'Sign in' }).click();
        await page.getByLabel('Username, email or phone').fill('ada@example.com');
        await page.getByLabel('Password').fill('analytical engine 1843');
        await page.getByRole('button', { name: 'Sign in' }).click();
        expect((await signedInAs()).who).toBe('ada_lovelace');
      });
      expect(signIn.map(({ body }) => [body.event, body.user?.username])).toEqual([['PostSignIn', 'ada_lovelace']]);

      await signOut();

      // A wrong password is refused with a generic message, said beside the password field, which is
      // marked invalid, described by it, and given the focus (WCAG 2.2 3.3.1, 4.1.2; 2.4.3).
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Username, email or phone').fill('ada_lovelace');
      await page.getByLabel('Password').fill('difference engine');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#password[aria-invalid="true"]').waitFor();
      expect(await page.locator('#password').getAttribute('aria-describedby')).toBe('password-error');
      expect(await page.locator('#password-error').innerText()).toBe('The identifier or the password is wrong.');
      await page.waitForFunction("document.activeElement && document.activeElement.id === 'password'");
      expect(await page.getByLabel('Username, email or phone').inputValue()).toBe('ada_lovelace');
      await shoot('sign-in-error');

      // Forgot password.
      const reset = await eventsDuring(server, receiver, async () => {
        await page.getByRole('link', { name: 'Forgot your password?' }).click();
        await page.getByLabel('Email').fill('ada@example.com');
        await shoot('forgot-password');
        await page.getByRole('button', { name: 'Send code' }).click();
        await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
        await page.getByLabel('Verification code').fill(await mail.nextCode('ada@example.com'));
        await page.getByLabel('New password').fill('a note on the engine');
        await shoot('reset-password');
        await page.getByRole('button', { name: 'Set password' }).click();
        // The reset signs nobody in: the sign-in page says so, with the address filled in.
        await page.getByRole('status').getByText('Your password has been changed. Sign in with it to continue.').waitFor();
        expect(await page.getByLabel('Username, email or phone').inputValue()).toBe('ada@example.com');
        await page.getByLabel('Password').fill('a note on the engine');
        await page.getByRole('button', { name: 'Sign in' }).click();
        expect((await signedInAs()).who).toBe('ada_lovelace');
      });
      expect(reset.map(({ body }) => body.event)).toEqual(['User.Data.Updated', 'PostResetPassword', 'PostSignIn']);
      expect(reset[0]!.body).toMatchObject({ interactionEvent: 'ForgotPassword', applicationId, sessionId: expect.any(String) });
      for (const { raw } of [...signUp, ...signIn, ...reset]) expect(raw).not.toMatch(/passwordHash|analytical engine|a note on the engine/);
    },
    browserJourneyMs,
  );

  it('asks the signed-in user to consent to a third-party application', async () => {
    const partnerCallback = 'http://127.0.0.1:9/callback';
    const partner = await server.create('/api/applications', {
      name: 'Partner analytics',
      type: 'Traditional',
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: [partnerCallback], postLogoutRedirectUris: [] },
    });
    // Nothing listens there; the browser is answered in its place.
    await page.route(`${partnerCallback}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'partner callback' }));
    const authorize = new URL(`${server.issuer}/auth`);
    authorize.search = new URLSearchParams({
      client_id: partner.id,
      response_type: 'code',
      scope: 'openid profile email',
      redirect_uri: partnerCallback,
      state: 'partner-state',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    await page.goto(authorize.href);
    await page.getByRole('heading', { name: 'Allow Partner analytics?' }).waitFor();
    // Each permission by what it lets the application do, not by its scope name.
    expect(await page.locator('ul.scopes').first().innerText()).toMatch(/Your name, username and picture[\s\S]*Your email address/);
    await shoot('consent');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(partnerCallback) && url.searchParams.has('code'));
  });

  // Logto's sign-in experience settings decide the forms: a phone and a code to sign up, a code to sign in,
  // and, once the settings require an email (`secondaryIdentifiers`), the email asked for at the next sign-in.
  it(
    'signs up with a phone and a texted code, signs in by code, and adds the email the settings then require',
    async () => {
      const method = (identifier: string, password: boolean, verificationCode: boolean) => ({
        identifier,
        password,
        verificationCode,
        isPasswordPrimary: password,
      });
      const settings = (secondaryIdentifiers: unknown[]) =>
        server.api('PATCH', '/api/sign-in-exp', {
          body: {
            signUp: { identifiers: ['phone'], password: false, verify: true, secondaryIdentifiers },
            signIn: { methods: [method('username', true, false), method('email', true, false), method('phone', false, true)] },
          },
        });
      expect((await settings([])).status).toBe(200);
      try {
        // The first test leaves Ada signed in to the example app.
        await page.goto(rp.url);
        if ((await page.getByRole('link', { name: 'Sign out' }).count()) > 0) await signOut();
        const signUp = await eventsDuring(server, receiver, async () => {
          await page.getByRole('link', { name: 'Sign in' }).click();
          await page.getByRole('link', { name: 'Create an account' }).click();
          // Only what the settings ask for: a phone number, no username, email or password.
          expect(await page.getByLabel('Username').count()).toBe(0);
          expect(await page.getByLabel('Password').count()).toBe(0);
          await page.getByLabel('Phone').fill('+61 412 345 730');
          await shoot('sign-up-phone');
          await page.getByRole('button', { name: 'Create account' }).click();
          await page.getByRole('heading', { name: 'Check your phone' }).waitFor();
          await page.getByLabel('Verification code').fill(await sms.nextCode('+61412345730'));
          await page.getByRole('button', { name: 'Verify and create account' }).click();
          const { claims } = await signedInAs();
          expect(claims).toMatchObject({ amr: ['otp'] });
        });
        expect(signUp.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
        expect(signUp[0]!.body).toMatchObject({ interactionEvent: 'Register', data: { primaryPhone: '61412345730', primaryEmail: null, username: null } });
        const userId = signUp[0]!.body.data.id as string;

        await signOut();
        const signIn = await eventsDuring(server, receiver, async () => {
          await page.getByRole('link', { name: 'Sign in' }).click();
          await page.getByLabel('Phone', { exact: true }).fill('+61412345730');
          await shoot('sign-in-code');
          await page.getByRole('button', { name: 'Send me a code' }).click();
          await page.getByRole('heading', { name: 'Check your phone' }).waitFor();
          await page.getByLabel('Verification code').fill(await sms.nextCode('+61412345730'));
          await page.getByRole('button', { name: 'Verify and sign in' }).click();
          expect((await signedInAs()).claims).toMatchObject({ sub: userId, amr: ['otp'] });
        });
        expect(signIn.map(({ body }) => [body.event, body.userId])).toEqual([['PostSignIn', userId]]);

        await signOut();
        expect((await settings([{ identifier: 'email', verify: true }])).status).toBe(200);
        const fulfilled = await eventsDuring(server, receiver, async () => {
          await page.getByRole('link', { name: 'Sign in' }).click();
          await page.getByLabel('Phone', { exact: true }).fill('+61 412 345 730');
          await page.getByRole('button', { name: 'Send me a code' }).click();
          await page.getByLabel('Verification code').fill(await sms.nextCode('+61412345730'));
          await page.getByRole('button', { name: 'Verify and sign in' }).click();
          // The account has no email, which the settings now require: asked for before the sign-in completes.
          await page.getByRole('heading', { name: 'Add your email' }).waitFor();
          await shoot('add-email');
          await page.getByLabel('Email').fill('phone.person@example.com');
          await page.getByRole('button', { name: 'Send code' }).click();
          await page.getByRole('heading', { name: 'Check your email' }).waitFor();
          await page.getByLabel('Verification code').fill(await mail.nextCode('phone.person@example.com'));
          await page.getByRole('button', { name: 'Verify and continue' }).click();
          expect((await signedInAs()).profile).toMatchObject({ sub: userId, email: 'phone.person@example.com' });
        });
        expect(fulfilled.map(({ body }) => [body.event, body.changes])).toEqual([
          ['User.Data.Updated', ['lastSignInAt', 'primaryEmail']],
          ['PostSignIn', undefined],
        ]);
        const applicationId = fulfilled[1]!.body.applicationId;
        expect(fulfilled[0]!.body).toMatchObject({
          interactionEvent: 'SignIn',
          sessionId: expect.any(String),
          applicationId,
          application: { id: applicationId, name: 'Example web app' },
          data: { id: userId, primaryEmail: 'phone.person@example.com', primaryPhone: '61412345730' },
        });
        await signOut();
      } finally {
        await server.api('PATCH', '/api/sign-in-exp', {
          body: {
            signUp: { identifiers: ['username', 'email', 'phone'], password: true, verify: true },
            signIn: { methods: ['username', 'email', 'phone'].map((identifier) => method(identifier, true, false)) },
          },
        });
      }
    },
    browserJourneyMs,
  );

  it('keeps fields and the focus ring at 3:1 against the card (WCAG 1.4.11, 2.4.13), in the light and the dark scheme', async () => {
    /** The WCAG contrast ratio of two `rgb(...)` colours. */
    const contrast = (a: string, b: string) => {
      const luminance = (color: string) => {
        const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
          const channel = Number(part) / 255;
          return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
      };
      const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (light! + 0.05) / (dark! + 0.05);
    };
    const signedIn = page;
    for (const colorScheme of ['light', 'dark'] as const) {
      // A browser of its own (no session: the sign-in page shows), in the scheme asked for.
      const context = await browser.newContext({ colorScheme, viewport: { width: 900, height: 760 } });
      page = await context.newPage();
      await page.goto(rp.url);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const field = page.locator('#identifier');
      await field.focus();
      // Focus through the keyboard, as :focus-visible draws the ring for it.
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      const colors = await page.evaluate(
        `(() => { const element = document.querySelector('#identifier'); const style = getComputedStyle(element);
          return { border: style.borderTopColor, ring: style.outlineColor, ringWidth: style.outlineWidth, card: getComputedStyle(element.closest('main')).backgroundColor }; })()`,
      );
      const { border, ring, ringWidth, card } = colors as { border: string; ring: string; ringWidth: string; card: string };
      expect([colorScheme, contrast(border, card) >= 3, contrast(ring, card) >= 3, parseFloat(ringWidth) >= 2]).toEqual([colorScheme, true, true, true]);
      // Shot (and audited) in the dark scheme; the light one is `sign-in` above.
      if (colorScheme === 'dark') await shoot('sign-in-dark');
      else audited.set('sign-in-light', await accessibilityViolations(page));
      await context.close();
    }
    page = signedIn;
  });

  // Last: every page state the tests above reached was audited when it was shot.
  it('finds no accessibility violation in any page state it reached (axe-core: WCAG 2.0 to 2.2, A and AA)', () => {
    expect([...audited.keys()]).toEqual(
      expect.arrayContaining(['sign-in', 'sign-up', 'verify-email', 'sign-in-error', 'forgot-password', 'reset-password', 'consent', 'add-email']),
    );
    expect([...audited].filter(([, found]) => found.length > 0)).toEqual([]);
  });
});
