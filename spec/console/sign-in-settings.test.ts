import { consoleHelpers } from '../support/console.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The sign-in settings in the console (issue 42): the form, a preview of the real sign-in page (the
 * one console route a frame may show, and only to the console's own origin), a draft previewed
 * without saving, a save that names the administrator, and an unworkable one refused whole.
 */
describe('the console: sign-in settings and their preview', () => {
  let server: TestServer;
  let helpers: ReturnType<typeof consoleHelpers>;

  beforeAll(async () => {
    server = await startTestServer('console-settings');
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { mfa: { factors: ['Totp'], policy: 'NoPrompt' } } })).status).toBe(200);
    helpers = consoleHelpers(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const settings = async () => (await server.api('GET', '/api/sign-in-exp')).body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const path = '/console/sign-in-settings';
  /** The form as it is now, with `changes` over it: what a browser posts. */
  const formOf = (page: string, changes: Record<string, string | string[]>) => {
    const fields: Record<string, string[]> = {};
    for (const match of page.matchAll(/<input type="checkbox" name="([^"]+)" value="([^"]+)"\s+checked/g)) (fields[match[1]!] ??= []).push(match[2]!);
    fields.mfaPolicy = [/<option value="([^"]+)"\s+selected/.exec(page.slice(page.indexOf('id="mfaPolicy"')))![1]!];
    return { ...fields, ...changes };
  };

  it('shows the settings beside a preview of the real sign-in page, which only the console’s own pages may frame', async () => {
    const admin = await helpers.administrator('console_settings_ida');
    // A social connector: the preview offers it, as the page does.
    expect(
      (await server.api('POST', '/api/connectors', { body: { connectorId: 'github-universal', config: { clientId: 'gh', clientSecret: 's' } } })).status,
    ).toBe(200);
    const answer = await admin.browser.go(path);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toContain("frame-src 'self'");
    const page = await answer.text();
    const src = /<iframe[^>]*src="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&');
    expect(page).toMatch(/<iframe[^>]*sandbox="allow-same-origin"/);
    const preview = await admin.browser.go(src);
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    expect(preview.headers.get('content-security-policy')).toContain("form-action 'none'");
    expect(preview.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    const html = await preview.text();
    expect(html).toContain('id="password"');
    expect(html).toContain('Continue with GitHub');
    expect(html).not.toMatch(/<script/);
    // Every other console page stays unframeable.
    expect((await admin.browser.go('/console/users')).headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // Not for someone without a console session: the sign-in, not the page.
    const stranger = await fetch(`${server.url}${src}`, { redirect: 'manual' });
    expect(stranger.status).toBe(302);
  });

  it('previews a draft without saving it, in the language asked; saves it, named as the administrator’s; refuses an unworkable one whole', async () => {
    const admin = await helpers.administrator('console_settings_jon');
    const before = await settings();
    const page = await (await admin.browser.go(path)).text();
    const draft = formOf(page, {
      passwordSignIn: [],
      codeSignIn: ['email'],
      signUpIdentifiers: ['email'],
      signUpPassword: [],
      signUpVerify: 'yes',
      lang: 'de',
    });
    const previewed = await admin.submit(path, path, { ...draft, intent: 'preview' });
    expect(previewed.status).toBe(200);
    const shown = await previewed.text();
    expect(shown).toContain('not saved');
    const src = /<iframe[^>]*src="([^"]+)"/.exec(shown)![1]!.replaceAll('&amp;', '&');
    expect(src).toContain('codeSignIn=email');
    const frame = await (await admin.browser.go(src)).text();
    expect(frame).toContain('<html lang="de"');
    expect(frame).not.toContain('id="password"');
    expect(frame).toContain('id="code-identifier"');
    expect(await settings()).toEqual(before);

    // Nothing to sign in with: the API's reason, and nothing changes.
    const empty = await admin.submit(path, path, { ...draft, codeSignIn: [], intent: 'save' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('at least one sign-in method is needed');
    expect(await settings()).toEqual(before);

    const saved = await admin.submit(path, path, { ...draft, intent: 'save' });
    expect(saved.status).toBe(303);
    expect(await (await admin.browser.go(saved.headers.get('location')!)).text()).toContain('The sign-in settings are saved.');
    const after = await settings();
    expect(after.signIn.methods).toEqual([{ identifier: 'email', password: false, verificationCode: true, isPasswordPrimary: false }]);
    expect(after.signUp).toMatchObject({ identifiers: ['email'], password: false, verify: true });
    // What the console does not edit stays as it was.
    expect(after.emailBlocklistPolicy).toEqual(before.emailBlocklistPolicy);
    const [change] = (await server.api('GET', '/api/changes?entityId=default')).body as Array<{ entity: string; origin: { type?: string; id?: string } }>;
    expect(change).toMatchObject({ entity: 'SignInExperience', origin: { type: 'user', id: admin.id } });
    // Back as it was, for the console's own sign-in in later tests.
    expect((await server.api('PATCH', '/api/sign-in-exp', { body: { signUp: before.signUp, signIn: before.signIn } })).status).toBe(200);
  });
});
