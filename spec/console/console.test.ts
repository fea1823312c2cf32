import { consoleBuiltIn } from '../../console/built-in.js';
import { silentLogger } from '../../lib/logger.js';
import { loadSettings } from '../../settings.js';
import { signInSettingsStore } from '../../sign-in/settings.js';
import { startStandaloneServer } from '../../standalone.js';
import { TestBrowser, csrfOf } from '../support/browser.js';
import { testMongoUri, testPasswordScrypt, uniqueDbName } from '../support/env.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { consoleHelpers, consolePassword, totpAt as totp } from '../support/console.js';
import { codeFlow, redeem } from '../support/flows.js';

/**
 * The admin console (issue 42): who may enter (the console permission through a user role, and a
 * second factor), the session and its forms, and a change made there as the administrator's.
 */
describe('the admin console', () => {
  let server: TestServer;
  let person: ReturnType<typeof consoleHelpers>['person'];
  let signIn: ReturnType<typeof consoleHelpers>['signIn'];

  beforeAll(async () => {
    server = await startTestServer('console');
    // TOTP offered, and never asked for by the policy: the console asks for it all the same.
    const settings = await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } });
    expect(settings.status).toBe(200);
    ({ person, signIn } = consoleHelpers(server));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('an administrator with a second factor signs in by the authorization code flow and sees the users; the session cookie is httpOnly and SameSite=Strict', async () => {
    const admin = await person('console_alice');
    const { browser, url } = await signIn(admin, { stopAtCallback: true });
    expect(url.pathname).toBe('/console/callback');
    const answered = await browser.go(url);
    expect(answered.status).toBe(303);
    expect(answered.headers.get('location')).toBe('/console/users');
    const session = answered.headers.getSetCookie().find((line) => line.startsWith('console_session='));
    expect(session).toMatch(/; path=\/console/);
    expect(session).toMatch(/; samesite=strict/i);
    expect(session).toMatch(/; httponly/i);
    const users = await browser.go('/console/users');
    expect(users.status).toBe(200);
    expect(users.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await users.text();
    expect(html).toContain('console_alice');
    expect(html).not.toMatch(/<script/);
  });

  it('the callback is single use: the same answer again, or in another browser, is refused (RFC 6749 §10.12 state, RFC 7636 PKCE)', async () => {
    const admin = await person('console_bruno');
    const { browser, url } = await signIn(admin, { stopAtCallback: true });
    const thief = new TestBrowser(server.url);
    expect((await thief.go(url)).status).toBe(400);
    expect((await browser.go(url)).status).toBe(303);
    expect((await browser.go(url)).status).toBe(400);
    // A callback with a state of its own: the browser's sign-in does not match it.
    const forged = new URL(url);
    forged.searchParams.set('state', 'forged');
    expect((await browser.go(forged)).status).toBe(400);
  });

  it('a code another application was given is refused at the callback (RFC 6749 §4.1.3: the code was issued to another client), and stays that application’s', async () => {
    const shop = await server.create('/api/applications', {
      name: 'Shop',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['https://shop.test/cb'] },
    });
    await person('console_shopper', { role: false, factor: false });
    const flow = await codeFlow(new TestBrowser(server.url), {
      clientId: shop.id,
      redirectUri: 'https://shop.test/cb',
      scope: 'openid',
      identifier: 'console_shopper',
      password: consolePassword,
    });
    const code = flow.callback.searchParams.get('code')!;
    // The console's own sign-in under way in this browser: its state, its cookie.
    const browser = new TestBrowser(server.url);
    const leaving = await browser.go('/console/sign-in');
    const state = new URL(leaving.headers.get('location')!).searchParams.get('state')!;
    const answered = await browser.go(`/console/callback?${new URLSearchParams({ code, state }).toString()}`);
    expect(answered.status).toBe(400);
    expect(browser.cookies.has('console_session')).toBe(false);
    // Not spent by the refusal: the shop redeems its own code.
    const tokens = await redeem(server, { clientId: shop.id, clientSecret: shop.secret }, flow);
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it('two callbacks with the same answer at once: exactly one signs in', async () => {
    const admin = await person('console_bea');
    const { browser, url } = await signIn(admin, { stopAtCallback: true });
    const statuses = await Promise.all([browser.go(url), browser.go(url), browser.go(url)].map(async (answer) => (await answer).status));
    expect(statuses.sort()).toEqual([303, 400, 400]);
  });

  it('a sign-in without a second factor (the service offers none) is refused at the console’s door', async () => {
    const admin = await person('console_cleo', { factor: false });
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: [], policy: 'NoPrompt' } } })).status).toBe(200);
    try {
      const { browser, url, response } = await signIn(admin);
      expect(url.pathname).toBe('/console/callback');
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('needs a sign-in with a second factor');
      expect(browser.cookies.has('console_session')).toBe(false);
    } finally {
      expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    }
  });

  it('a user without the console permission is refused after signing in, and gets no session', async () => {
    const outsider = await person('console_carol', { role: false });
    const { browser, url, response } = await signIn(outsider);
    expect(url.pathname).toBe('/console/callback');
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('does not hold the console permission');
    expect(browser.cookies.has('console_session')).toBe(false);
    const again = await browser.go('/console/users');
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toMatch(/^\/console\/sign-in\?/);
  });

  it('an administrator without a second factor enrols one, with no way to skip it, and enters at the next sign-in, which uses it', async () => {
    const admin = await person('console_dan', { factor: false });
    const { browser, url, response } = await signIn(admin);
    expect(url.pathname).toMatch(/^\/interaction\/[^/]+\/mfa\/enrol$/);
    const html = await response.text();
    expect(html).not.toContain('/mfa/enrol/skip');
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(html)![1]!;
    const enrolled = await browser.form(`${url.pathname}/totp`, {
      csrf: csrfOf(html),
      verificationId: /name="verificationId" value="([^"]+)"/.exec(html)![1]!,
      code: await totp(secret),
    });
    expect(enrolled.status).toBe(303);
    // The factor set up in this sign-in was given to whoever held the password: it has proved nothing yet.
    const door = await browser.follow(enrolled.headers.get('location')!, `${server.url}/never`);
    expect(door.url.pathname).toBe('/console/callback');
    expect(door.response.status).toBe(403);
    expect(await door.response.text()).toContain('Sign in once more');
    expect(browser.cookies.has('console_session')).toBe(false);
    const again = await signIn({ username: admin.username, secret }, { offsetMs: 30_000 });
    expect(again.url.pathname).toBe('/console/users');
    expect(again.response.status).toBe(200);
  });

  it('a form that does not come from the console is refused: no token, a wrong one, another origin, a cross-site fetch; nothing changes', async () => {
    const admin = await person('console_erin');
    const target = await person('console_target_1', { role: false, factor: false });
    const { browser } = await signIn(admin);
    const confirm = await browser.go(`/console/users/${target.id}/suspend`);
    expect(confirm.status).toBe(200);
    const csrf = csrfOf(await confirm.text());
    expect(csrf).not.toBe('');
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      browser.go(`/console/users/${target.id}/suspend`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ csrf: `${csrf.slice(0, -1)}x` })).status).toBe(403);
    expect((await post({ csrf }, { origin: 'https://attacker.example' })).status).toBe(403);
    expect((await post({ csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    // An opaque origin (a sandboxed frame, a data: page) is not ours either.
    expect((await post({ csrf }, { origin: 'null' })).status).toBe(403);
    // Another browser with the form's token but no session.
    const stranger = new TestBrowser(server.url);
    const strangers = await stranger.form(`/console/users/${target.id}/suspend`, { csrf });
    expect(strangers.status).toBe(403);
    expect((await server.api('GET', `/api/users/${target.id}`)).body.isSuspended).toBe(false);
  });

  it('a suspension confirmed in the console goes through the API’s own handler and names the administrator in /api/changes', async () => {
    const admin = await person('console_frank');
    const target = await person('console_target_2', { role: false, factor: false });
    const { browser } = await signIn(admin);
    const confirm = await browser.go(`/console/users/${target.id}/suspend`);
    const done = await browser.form(`/console/users/${target.id}/suspend`, { csrf: csrfOf(await confirm.text()) });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/console/users/${target.id}?done=suspended`);
    expect(await (await browser.go(done.headers.get('location')!)).text()).toContain('The user is suspended.');
    expect((await server.api('GET', `/api/users/${target.id}`)).body.isSuspended).toBe(true);
    const changes = await server.api('GET', `/api/changes?entityId=${target.id}`);
    const suspension = changes.body.find((change: { action: string; entity: string }) => change.entity === 'User' && change.action === 'suspension.updated');
    expect(suspension.origin).toMatchObject({ type: 'user', id: admin.id, method: 'PATCH', route: '/api/users/:userId/is-suspended' });
    expect(suspension.origin.clientId).toBeUndefined();
    // And the console's change log says so, naming the administrator.
    const log = await (await browser.go('/console/changes')).text();
    expect(log).toContain('User.suspension.updated');
    expect(log).toContain(`href="/console/users/${admin.id}">Administrator ${admin.id}</a>`);
    // And back.
    const back = await browser.go(`/console/users/${target.id}/reactivate`);
    expect((await browser.form(`/console/users/${target.id}/reactivate`, { csrf: csrfOf(await back.text()) })).status).toBe(303);
    expect((await server.api('GET', `/api/users/${target.id}`)).body.isSuspended).toBe(false);
  });

  it('the console permission taken away, or a suspension, ends the console at the next request', async () => {
    const admin = await person('console_gina');
    const { browser } = await signIn(admin);
    expect((await browser.go('/console/users')).status).toBe(200);
    expect((await server.api('DELETE', `/api/users/${admin.id}/roles/${consoleBuiltIn.roleId}`)).status).toBe(204);
    const after = await browser.go('/console/users');
    expect(after.status).toBe(302);
    expect(after.headers.get('location')).toMatch(/^\/console\/sign-in\?/);

    const other = await person('console_hugo');
    const second = await signIn(other);
    expect((await second.browser.go('/console/users')).status).toBe(200);
    expect((await server.api('PATCH', `/api/users/${other.id}/is-suspended`, { body: { isSuspended: true } })).status).toBe(200);
    expect((await second.browser.go('/console/users')).status).toBe(302);
  });

  it('the console lasts no longer than the provider session it signed in with: ending that session, or every session of the administrator, ends it at the next request', async () => {
    // Each sign-in by a person of its own: a TOTP code counts once.
    const admin = await person('console_jules');
    const bystander = await person('console_kim');
    const sessionsOf = async (userId: string) =>
      ((await server.api('GET', `/api/users/${userId}/sessions`)).body.sessions as Array<{ payload: { uid: string } }>).map(({ payload }) => payload.uid);

    const first = await signIn(admin);
    const other = await signIn(bystander);
    const [uid] = await sessionsOf(admin.id);
    expect(uid).toEqual(expect.any(String));
    // Another administrator's session ended: this console goes on.
    const [otherUid] = await sessionsOf(bystander.id);
    expect((await server.api('DELETE', `/api/users/${bystander.id}/sessions/${otherUid}`)).status).toBe(204);
    expect((await other.browser.go('/console/users')).status).toBe(302);
    expect((await first.browser.go('/console/users')).status).toBe(200);
    // Its own provider session ended (DELETE /api/users/:userId/sessions/:sessionId).
    expect((await server.api('DELETE', `/api/users/${admin.id}/sessions/${uid}`)).status).toBe(204);
    const ended = await first.browser.go('/console/users');
    expect(ended.status).toBe(302);
    expect(ended.headers.get('location')).toMatch(/^\/console\/sign-in\?/);

    // Signed out everywhere (DELETE /api/users/:userId/sessions): a form is refused and changes nothing.
    const another = await person('console_leif');
    const second = await signIn(another);
    const form = await second.browser.go(`/console/users/${bystander.id}`);
    expect(form.status).toBe(200);
    const csrf = csrfOf(await form.text());
    expect((await server.api('DELETE', `/api/users/${another.id}/sessions`)).status).toBe(204);
    expect((await second.browser.form(`/console/users/${bystander.id}/suspend`, { csrf })).status).toBe(403);
    expect((await server.api('GET', `/api/users/${bystander.id}`)).body.isSuspended).toBe(false);
    expect((await second.browser.go('/console/users')).status).toBe(302);

    // Signed out at the provider, in the same browser (OpenID Connect RP-Initiated Logout 1.0 §2, confirmed).
    const third = await signIn(await person('console_milo'));
    expect((await third.browser.go('/console/users')).status).toBe(200);
    const question = await (await third.browser.go('/oidc/session/end')).text();
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"/.exec(question)?.[1] ?? /action="([^"]+)"[^>]*id="op.logoutForm"/.exec(question)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question)?.[1];
    const confirmed = await third.browser.go(new URL(action!.replace(/&amp;/g, '&'), server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    expect(confirmed.status).toBe(303);
    expect((await third.browser.go('/console/users')).status).toBe(302);
  });

  it('signing out ends the session; its cookie then opens nothing', async () => {
    const admin = await person('console_ida');
    const { browser } = await signIn(admin);
    const page = await (await browser.go('/console/users')).text();
    const cookie = browser.cookies.get('console_session')!;
    const out = await browser.form('/console/sign-out', { csrf: csrfOf(page) });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/console/signed-out');
    const replay = new TestBrowser(server.url);
    replay.cookies.set('console_session', cookie);
    expect((await replay.go('/console/users')).status).toBe(302);
  });

  it('creates an application by type and shows its secret once; a new secret likewise; the secret is the one the token endpoint takes', async () => {
    const admin = await person('console_mia');
    const { browser } = await signIn(admin);
    const form = await browser.go('/console/applications/new');
    expect(form.status).toBe(200);
    const created = await browser.form('/console/applications/new', {
      csrf: csrfOf(await form.text()),
      name: 'Console shop',
      type: 'Traditional',
      redirectUris: 'https://shop.example/callback\n',
    });
    expect(created.status).toBe(303);
    const html = await (await browser.go(created.headers.get('location')!)).text();
    const secret = /<code class="secret">([^<]+)<\/code>/.exec(html)?.[1];
    expect(secret).toBeDefined();
    const id = /<dd><code>([^<]+)<\/code><\/dd>/.exec(html)![1]!;
    const application = await server.api('GET', `/api/applications/${id}`);
    expect(application.body).toMatchObject({
      name: 'Console shop',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['https://shop.example/callback'] },
    });
    // Shown once: the application's page does not have it again.
    expect(await (await browser.go(`/console/applications/${id}`)).text()).not.toContain(secret);
    // The token endpoint knows the secret: a made-up grant is then invalid_grant, not invalid_client.
    const token = (clientSecret: string) =>
      fetch(`${server.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${clientSecret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'made-up' }).toString(),
      }).then(async (response) => ((await response.json()) as { error: string }).error);
    expect(await token(secret!)).toBe('invalid_grant');
    expect(await token('wrong')).toBe('invalid_client');
    const detail = await (await browser.go(`/console/applications/${id}`)).text();
    const again = await browser.form(`/console/applications/${id}/secrets`, { csrf: csrfOf(detail) });
    expect(again.status).toBe(303);
    const second = /<code class="secret">([^<]+)<\/code>/.exec(await (await browser.go(again.headers.get('location')!)).text())![1]!;
    // Kept sealed for the page that shows it, then gone: the database alone cannot open it, and the next look finds nothing.
    expect(await (await browser.go(`/console/applications/${id}`)).text()).not.toContain(second);
    expect(await token(second)).toBe('invalid_grant');
    const changes = await server.api('GET', `/api/changes?entityId=${id}`);
    expect(changes.body.map(({ origin }: { origin: { type?: string; id?: string } }) => [origin.type, origin.id])).toEqual([
      ['user', admin.id],
      ['user', admin.id],
    ]);
  });

  it('an application the API refuses is said at the field, and nothing is made', async () => {
    const admin = await person('console_nora');
    const { browser } = await signIn(admin);
    const csrf = csrfOf(await (await browser.go('/console/applications/new')).text());
    const before = (await server.api('GET', '/api/applications?page=1&page_size=100')).body.length;
    const unnamed = await browser.form('/console/applications/new', { csrf, name: '', type: 'SPA', redirectUris: '' });
    expect(unnamed.status).toBe(400);
    expect(await unnamed.text()).toMatch(/id="name"[^>]*aria-invalid="true"/);
    const badUri = await browser.form('/console/applications/new', { csrf, name: 'Bad', type: 'SPA', redirectUris: 'not a url' });
    expect(badUri.status).toBe(400);
    const page = await badUri.text();
    expect(page).toMatch(/id="redirectUris"[^>]*aria-invalid="true"/);
    expect(page).toContain('not a url');
    const badType = await browser.form('/console/applications/new', { csrf, name: 'Bad', type: 'Mainframe', redirectUris: '' });
    expect(badType.status).toBe(400);
    expect((await server.api('GET', '/api/applications?page=1&page_size=100')).body.length).toBe(before);
  });

  it('deletes an application after confirming on its own page', async () => {
    const admin = await person('console_otto');
    const doomed = await server.create('/api/applications', {
      name: 'Doomed',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: ['https://doomed.example/cb'] },
    });
    const { browser } = await signIn(admin);
    const confirm = await browser.go(`/console/applications/${doomed.id}/delete`);
    expect(confirm.status).toBe(200);
    const deleted = await browser.form(`/console/applications/${doomed.id}/delete`, { csrf: csrfOf(await confirm.text()) });
    expect(deleted.status).toBe(303);
    expect((await server.api('GET', `/api/applications/${doomed.id}`)).status).toBe(404);
  });

  it('a first start names the first administrator (CONSOLE_ADMIN_USERNAME) once, beside the first Management API credentials; a second start makes none', async () => {
    const dbName = uniqueDbName('console-first');
    const settings = { ...loadSettings({ PORT: '0', PASSWORD_SCRYPT: testPasswordScrypt, CONSOLE_ADMIN_USERNAME: 'first_admin' }), mongodbUri: testMongoUri() };
    const first = await startStandaloneServer(settings, { logger: silentLogger, dbName });
    try {
      expect(first.createdCredentials?.clientId).toEqual(expect.any(String));
      // No factor was offered: an authenticator app now is, and nobody else is asked to enrol one.
      expect(first.createdAdministrator).toEqual({ username: 'first_admin', password: expect.any(String), offeredTotp: true });
      expect((await signInSettingsStore(first.database.db).load()).mfa).toMatchObject({ factors: ['Totp'], policy: 'NoPrompt' });
      // The administrator's first sign-in goes to enrol it.
      const browser = new TestBrowser(first.url);
      const start = await browser.follow('/console', `${first.url}/never`);
      const signedIn = await browser.form(`${start.url.pathname}/sign-in`, {
        csrf: csrfOf(await start.response.text()),
        identifier: 'first_admin',
        password: first.createdAdministrator!.password,
      });
      expect((await browser.follow(signedIn.headers.get('location')!, `${first.url}/never`)).url.pathname).toMatch(/\/mfa\/enrol$/);
      expect(first.consoleUrl).toBe(`${first.url}/console`);
      const users = await first.identity.queries.links.usersRoles.leftsOf(consoleBuiltIn.roleId);
      expect(users).toHaveLength(1);
    } finally {
      await first.close();
    }
    const second = await startStandaloneServer(settings, { logger: silentLogger, dbName });
    try {
      expect(second.createdCredentials).toBeUndefined();
      expect(second.createdAdministrator).toBeUndefined();
    } finally {
      await second.close();
    }
  });

  it('finds users by Logto’s search, and speaks the browser’s language (English, German, Japanese)', async () => {
    const admin = await person('console_jane');
    await person('console_findme_kurt', { role: false, factor: false });
    const { browser } = await signIn(admin);
    const found = await (await browser.go('/console/users?search=findme')).text();
    expect(found).toContain('console_findme_kurt');
    expect(found).not.toContain('console_jane');
    const german = await browser.go('/console/users', { headers: { 'accept-language': 'de' } });
    expect(await german.text()).toContain('<html lang="de">');
    const japanese = await browser.go('/console/users', { headers: { 'accept-language': 'ja' } });
    expect(await japanese.text()).toContain('ユーザー');
    expect((await browser.go('/console/users/no-such-user')).status).toBe(404);
    const nowhere = await browser.go('/console/no-such-page');
    expect(nowhere.status).toBe(404);
    expect(nowhere.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('a bad form is a page that says so, with its status, and changes nothing: not a form (415), too large (413)', async () => {
    const admin = await person('console_lena');
    const target = await person('console_target_3', { role: false, factor: false });
    const { browser } = await signIn(admin);
    const json = await browser.go(`/console/users/${target.id}/suspend`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    expect(await json.text()).toContain('forms are sent as application/x-www-form-urlencoded');
    const large = await browser.form(`/console/users/${target.id}/suspend`, { csrf: 'x', padding: 'a'.repeat(20_000) });
    expect(large.status).toBe(413);
    expect((await server.api('GET', `/api/users/${target.id}`)).body.isSuspended).toBe(false);
  });
});
