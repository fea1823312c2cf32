import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { browserJourneyMs, launchChromium, pageProblems, screenshotsOf } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';

/**
 * Every sign-in page in every state it can be in (empty, error, locked out, code sent, code sent
 * again, code refused, consent, the pages outside an interaction), each at 1280 px and at a
 * phone's 390 px, in the light and the dark scheme, in two languages: axe-core finds no WCAG 2.2
 * A/AA violation in any, and the phone layout holds (one column, no horizontal scroll, no link
 * cut, fields and buttons 44 px tall).
 */
describe('the sign-in pages in every state, at two widths, in two languages and both colour schemes', () => {
  const callback = 'http://127.0.0.1:9/callback';
  const logoUrl = 'https://brand.example/logo.svg';
  let server: TestServer;
  let mail: MailCatcher;
  let browser: Browser;
  let firstParty: string;
  let partner: string;
  const password = 'correct horse battery';
  /** Each state visited, per language: axe-core's findings and the layout's problems, in all four renderings. */
  const findings: Array<{ state: string; problems: string[] }> = [];

  beforeAll(async () => {
    mail = await startMailCatcher();
    server = await startTestServer('pages-matrix', { SMTP_URL: mail.url, EMAIL_FROM: 'Acme <no-reply@acme.test>', BRAND_NAME: 'Acme', BRAND_COLOR: '#0b6e4f' });
    await server.api('PATCH', '/api/sign-in-exp', {
      body: {
        signUp: { identifiers: ['username', 'email'], password: true, verify: true },
        signIn: {
          methods: [
            { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
            { identifier: 'email', password: true, verificationCode: true, isPasswordPrimary: true },
          ],
        },
      },
    });
    firstParty = (
      await server.create('/api/applications', {
        name: 'Acme web',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
      })
    ).id;
    // A third party with its own look: a display name, a logo, a light brand colour (dark text on its
    // buttons, its links darkened to read), and policies to link to.
    partner = (
      await server.create('/api/applications', {
        name: 'partner-analytics',
        type: 'Traditional',
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
      })
    ).id;
    const look = await server.api('PUT', `/api/applications/${partner}/sign-in-experience`, {
      body: {
        displayName: 'Partner Analytics',
        color: { primaryColor: '#ffcc00', darkPrimaryColor: '#ffcc00' },
        branding: { logoUrl },
        termsOfUseUrl: 'https://partner.example/terms',
        privacyPolicyUrl: 'https://partner.example/privacy',
      },
    });
    expect(look.status).toBe(201);
    // An API whose permission the consent page describes, held by the users through a role.
    const reports = await server.create('/api/resources', { name: 'Reports API', indicator: 'https://reports.example/api' });
    const scope = await server.create(`/api/resources/${reports.id}/scopes`, { name: 'read:reports', description: 'Read your reports' });
    const role = await server.create('/api/roles', { name: 'reader', description: 'Reads reports', type: 'User' });
    await server.create(`/api/roles/${role.id}/scopes`, { scopeIds: [scope.id] });
    for (const language of ['en', 'de']) {
      for (const who of ['user', 'locked']) {
        const user = await server.create('/api/users', { username: `${who}_${language}`, primaryEmail: `${who}.${language}@example.com`, password });
        await server.create(`/api/users/${user.id}/roles`, { roleIds: [role.id] });
      }
    }
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await mail?.close();
  });

  const authorizeUrl = (clientId: string, language: string, extra: Record<string, string> = {}) => {
    const url = new URL(`${server.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid profile email',
      redirect_uri: callback,
      state: 'matrix',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      ui_locales: language,
      ...extra,
    }).toString();
    return url.href;
  };

  /** The page as it is, at both widths and in both schemes: axe-core's violations and the layout's problems. */
  async function audit(page: Page, state: string, language: string, shoot: (name: string) => Promise<Buffer>) {
    expect(await page.getAttribute('html', 'lang')).toBe(language);
    findings.push({ state: `${language} ${state}`, problems: await pageProblems(page) });
    // The documentation's pictures (docs/sign-in.md): a few states, the sign-in page as a phone shows it.
    const picture = pictures[`${language} ${state}`];
    if (picture) {
      await page.setViewportSize(picture.width === 390 ? { width: 390, height: 844 } : { width: 1280, height: 900 });
      await page.emulateMedia({ colorScheme: picture.scheme });
      await shoot(picture.name);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
  }
  const pictures: Record<string, { name: string; width: number; scheme: 'light' | 'dark' }> = {
    'en sign-in-error': { name: 'sign-in-field-error', width: 1280, scheme: 'light' },
    'de sign-in': { name: 'sign-in-phone-de', width: 390, scheme: 'light' },
    'en code-resent': { name: 'code-resent', width: 390, scheme: 'dark' },
    'en consent': { name: 'consent-branded', width: 1280, scheme: 'light' },
  };

  /** A browser context speaking `language` (Accept-Language), with the partner's callback and logo answered in place. */
  async function contextFor(language: string): Promise<BrowserContext> {
    const context = await browser.newContext({ locale: language === 'de' ? 'de-DE' : 'en-US', viewport: { width: 1280, height: 900 } });
    await context.route(`${callback}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'callback' }));
    await context.route(logoUrl, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'image/svg+xml',
        body: '<svg xmlns="http://www.w3.org/2000/svg" width="96" height="32"><rect width="96" height="32" rx="6" fill="#ffcc00"/></svg>',
      }),
    );
    return context;
  }

  const texts = {
    en: {
      signIn: 'Sign in',
      wrong: 'The identifier or the password is wrong.',
      createAccount: 'Create an account',
      tooMany: /Too many attempts\. Try again in \d+ minutes\./,
    },
    de: {
      signIn: 'Anmelden',
      wrong: 'Kennung oder Passwort ist falsch.',
      createAccount: 'Konto erstellen',
      tooMany: /Zu viele Versuche\. Versuchen Sie es in \d+ Minuten erneut\./,
    },
  } as const;

  for (const language of ['en', 'de'] as const) {
    it(
      `visits every page state in ${language === 'en' ? 'English' : 'German'} with no axe-core violation and a phone layout that holds`,
      async () => {
        const context = await contextFor(language);
        const page = await context.newPage();
        const shoot = screenshotsOf(() => page);
        const say = texts[language];
        /** Submits the form posting to `path` and waits for the page its answer draws. */
        const post = async (path: string, button = 'button[type=submit]') => {
          const answered = page.waitForResponse((response) => response.request().method() === 'POST' && new URL(response.url()).pathname.endsWith(path));
          await page.locator(`form[action$="${path}"] ${button}`).click();
          await answered;
          await page.waitForLoadState();
        };
        const submit = () => post('/sign-in');

        // The sign-in page, empty: in the language ui_locales asked for, naming the application.
        await page.goto(authorizeUrl(firstParty, language));
        await page.getByRole('heading', { name: say.signIn }).waitFor();
        expect(await page.locator('p.application strong').innerText()).toBe('Acme web');
        // WCAG 1.3.5: each field says what it holds.
        expect(await page.locator('#identifier').getAttribute('autocomplete')).toBe('username');
        expect(await page.locator('#password').getAttribute('autocomplete')).toBe('current-password');
        expect(await page.locator('#code-identifier').getAttribute('autocomplete')).toBe('email');
        await audit(page, 'sign-in', language, shoot);

        // A wrong password: said beside the password field, which takes the focus.
        await page.locator('#identifier').fill(`user_${language}`);
        await page.locator('#password').fill('not the password');
        await submit();
        await page.locator('#password[aria-invalid="true"]').waitFor();
        expect(await page.locator('#password-error').innerText()).toBe(say.wrong);
        await page.waitForFunction("document.activeElement && document.activeElement.id === 'password'");
        // The username typed stays in its field, not in the code form's address field.
        expect([await page.locator('#identifier').inputValue(), await page.locator('#code-identifier').inputValue()]).toEqual([`user_${language}`, '']);
        await audit(page, 'sign-in-error', language, shoot);

        // Locked out: the sixth wrong password of the window, said at the top with the wait.
        for (let attempt = 1; attempt <= 6; attempt += 1) {
          await page.locator('#identifier').fill(`locked_${language}`);
          await page.locator('#password').fill(`wrong ${attempt}`);
          await submit();
        }
        await page.getByRole('alert').waitFor();
        expect(await page.getByRole('alert').innerText()).toMatch(say.tooMany);
        await audit(page, 'locked-out', language, shoot);

        // Sign-up, empty, then refused for a username that is taken (the error at the username).
        await page.getByRole('link', { name: say.createAccount }).click();
        await page.locator('#username').waitFor();
        expect(await page.locator('#password').getAttribute('autocomplete')).toBe('new-password');
        await audit(page, 'sign-up', language, shoot);
        await page.locator('#username').fill(`user_${language}`);
        await page.locator('#password').fill('a long enough password');
        await page.locator('form[action$="/sign-up"] button[type=submit]').click();
        await page.locator('#username[aria-invalid="true"]').waitFor();
        await page.waitForFunction("document.activeElement && document.activeElement.id === 'username'");
        await audit(page, 'sign-up-error', language, shoot);

        // A code sent to sign in with, a wrong one, and one sent again.
        await page.goto(authorizeUrl(firstParty, language));
        const email = `user.${language}@example.com`;
        await page.locator('#code-identifier').fill(email);
        await page.locator('form[action$="/sign-in/code"] button[type=submit]').click();
        await page.locator('#code').waitFor();
        expect([await page.locator('#code').getAttribute('autocomplete'), await page.locator('#code').getAttribute('inputmode')]).toEqual([
          'one-time-code',
          'numeric',
        ]);
        const first = await mail.nextCode(email);
        await audit(page, 'code-sent', language, shoot);
        await page.locator('#code').fill(first === '000000' ? '111111' : '000000');
        await page.locator('form[action$="/sign-in/code/verify"] button[type=submit]').click();
        await page.locator('#code[aria-invalid="true"]').waitFor();
        await audit(page, 'code-error', language, shoot);
        await post('/code/resend', 'button');
        await page.getByRole('status').waitFor();
        expect(await page.getByRole('status').innerText()).toContain(email);
        const second = await mail.nextCode(email);
        await audit(page, 'code-resent', language, shoot);

        if (language === 'de') {
          // Asking again and again: the send limit (five an hour to one address) says how long to wait.
          for (let sent = 2; sent < 5; sent += 1) {
            await post('/code/resend', 'button');
            await page.getByRole('status').waitFor();
            await mail.nextCode(email);
          }
          await post('/code/resend', 'button');
          await page.getByRole('alert').waitFor();
          expect(await page.getByRole('alert').innerText()).toMatch(/Einen neuen können Sie in \d+ Minuten anfordern\./);
          await audit(page, 'code-refused', language, shoot);
        } else {
          // The whole code pasted as a mail shows it ("123 456") is taken.
          await page.locator('#code').fill('');
          await page.locator('#code').focus();
          await page.keyboard.insertText(`${second.slice(0, 3)} ${second.slice(3)}`);
          await page.locator('form[action$="/sign-in/code/verify"] button[type=submit]').click();
          await page.waitForURL((url) => url.href.startsWith(callback) && url.searchParams.has('code'));
        }

        // A forgotten password: the form, then the code sent with the new password's field.
        await page.goto(authorizeUrl(firstParty, language, { prompt: 'login' }));
        await page.locator('nav a[href$="/forgot-password"]').click();
        await page.locator('#identifier').waitFor();
        await audit(page, 'forgot-password', language, shoot);
        await page.locator('#identifier').fill(`locked.${language}@example.com`);
        await page.locator('form[action$="/forgot-password"] button[type=submit]').click();
        await page.locator('#code').waitFor();
        await audit(page, 'reset-password', language, shoot);

        // Single sign-on's first step.
        const base = new URL(page.url()).pathname.split('/').slice(0, 3).join('/');
        await page.goto(`${new URL(page.url()).origin}${base}/sso`);
        await page.locator('#email').waitFor();
        await audit(page, 'sso', language, shoot);

        // Consent to the third party, in its own look: signed in first (password), then asked.
        await page.goto(
          authorizeUrl(partner, language, { scope: 'openid profile email read:reports', resource: 'https://reports.example/api', prompt: 'login consent' }),
        );
        await page.locator('#identifier').fill(`user_${language}`);
        await page.locator('#password').fill(password);
        await submit();
        await page.locator('form[action$="/consent"]').waitFor();
        expect(await page.locator('p.application strong').innerText()).toBe('Partner Analytics');
        expect(await page.locator('header img').getAttribute('src')).toBe(logoUrl);
        expect(await page.locator('section h2').allInnerTexts()).toEqual([language === 'en' ? 'Your account' : 'Ihr Konto', 'Reports API']);
        expect(await page.locator('section').nth(1).innerText()).toContain('Read your reports');
        expect(await page.locator('p.policies a').evaluateAll((links) => links.map((link) => (link as unknown as { href: string }).href))).toEqual([
          'https://partner.example/terms',
          'https://partner.example/privacy',
        ]);
        await audit(page, 'consent', language, shoot);
        await page.locator('button[value=allow]').click();
        await page.waitForURL((url) => url.href.startsWith(callback) && url.searchParams.has('code'));

        // Outside an interaction: signing out, and an expired sign-in (Accept-Language decides).
        await page.goto(`${server.issuer}/session/end`);
        await page.locator('button[value=yes]').waitFor();
        await audit(page, 'sign-out', language, shoot);
        await page.goto(`${new URL(server.issuer).origin}/interaction/no-such-interaction`);
        await audit(page, 'expired', language, shoot);

        await context.close();
        const states = findings.filter(({ state }) => state.startsWith(`${language} `));
        expect(states.length).toBe(language === 'de' ? 15 : 14);
        expect(states.filter(({ problems }) => problems.length > 0)).toEqual([]);
      },
      browserJourneyMs,
    );
  }

  it(
    'visits the pages an account’s missing pieces lead to (a second factor to enrol, backup codes, the challenge, a profile field), in German',
    async () => {
      const settings = (body: unknown) => server.api('PATCH', '/api/sign-in-exp', { body });
      await server.create('/api/users', { username: 'mfa_de', password });
      const context = await contextFor('de');
      const page = await context.newPage();
      const shoot = screenshotsOf(() => page);
      const totp = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
      const signIn = async () => {
        await page.goto(authorizeUrl(firstParty, 'de', { prompt: 'login' }));
        await page.locator('#identifier').fill('mfa_de');
        await page.locator('#password').fill(password);
        await page.locator('form[action$="/sign-in"] button[type=submit]').click();
      };
      try {
        expect((await settings({ mfa: { factors: ['Totp', 'BackupCode'], policy: 'Mandatory' } })).status).toBe(200);
        await signIn();
        await page.locator('#totp-secret').waitFor();
        await audit(page, 'mfa-enrol', 'de', shoot);
        await page.locator('#totp').fill('000000');
        await page.locator('form[action$="/mfa/enrol/totp"] button[type=submit]').click();
        await page.locator('#totp[aria-invalid="true"]').waitFor();
        await audit(page, 'mfa-enrol-error', 'de', shoot);
        await page.locator('#totp').fill(await totp(await page.locator('#totp-secret').innerText()));
        await page.locator('form[action$="/mfa/enrol/totp"] button[type=submit]').click();
        await page.locator('ul.codes').waitFor();
        await audit(page, 'backup-codes', 'de', shoot);
        await page.locator('form[action$="/mfa/backup-codes"] button[type=submit]').click();
        await page.waitForURL((url) => url.href.startsWith(callback));

        await signIn();
        await page.locator('form[action$="/mfa/totp"]').waitFor();
        await audit(page, 'mfa-challenge', 'de', shoot);
        await page.locator('#backup-code').fill('not-a-code');
        await page.locator('form[action$="/mfa/backup-code"] button[type=submit]').click();
        await page.locator('#backup-code[aria-invalid="true"]').waitFor();
        await audit(page, 'mfa-challenge-error', 'de', shoot);

        // A phone the settings now require of every account: asked for before the sign-in ends.
        expect((await settings({ mfa: { factors: ['Totp', 'BackupCode'], policy: 'NoPrompt' } })).status).toBe(200);
        expect(
          (await settings({ signUp: { identifiers: ['username', 'email'], password: true, verify: true, secondaryIdentifiers: [{ identifier: 'phone' }] } }))
            .status,
        ).toBe(200);
        await page.goto(authorizeUrl(firstParty, 'de', { prompt: 'login' }));
        await page.locator('#identifier').fill('user_de');
        await page.locator('#password').fill(password);
        await page.locator('form[action$="/sign-in"] button[type=submit]').click();
        await page.locator('#phone').waitFor();
        expect([await page.locator('#phone').getAttribute('autocomplete'), await page.locator('#phone').getAttribute('inputmode')]).toEqual(['tel', 'tel']);
        await audit(page, 'profile', 'de', shoot);
        await page.locator('#phone').fill('12');
        await page.locator('form[action$="/profile"] button[type=submit]').click();
        await page.locator('#phone[aria-invalid="true"]').waitFor();
        await audit(page, 'profile-error', 'de', shoot);
      } finally {
        await settings({
          mfa: { factors: ['Totp', 'BackupCode'], policy: 'NoPrompt' },
          signUp: { identifiers: ['username', 'email'], password: true, verify: true, secondaryIdentifiers: [] },
        });
        await context.close();
      }
      const states = findings.filter(({ state }) => /^de (mfa|backup|profile)/.test(state));
      expect(states.length).toBe(7);
      expect(states.filter(({ problems }) => problems.length > 0)).toEqual([]);
    },
    browserJourneyMs,
  );

  it('prefers ui_locales (OIDC Core §3.1.2.1) to Accept-Language, and falls back to English for a language it lacks', async () => {
    const context = await contextFor('de');
    const page = await context.newPage();
    await page.goto(authorizeUrl(firstParty, 'ja'));
    await page.getByRole('heading', { name: 'サインイン' }).waitFor();
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    // No ui_locales: the browser's German.
    await page.goto(authorizeUrl(firstParty, '').replace('&ui_locales=', ''));
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    // A language without a catalog, then one with: the second is taken; none at all, English.
    await page.goto(authorizeUrl(firstParty, 'fr-CA de-AT'));
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    await context.close();
    const english = await browser.newContext({ locale: 'fr-FR' });
    const other = await english.newPage();
    await other.goto(authorizeUrl(firstParty, 'fr'));
    expect(await other.getAttribute('html', 'lang')).toBe('en');
    await english.close();
  });
});
