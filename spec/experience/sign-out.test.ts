import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem, userWith } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'https://app.sign-out.test/callback';

/**
 * OpenID Connect RP-Initiated Logout 1.0 §2 and §3: a sign-out that names no
 * `post_logout_redirect_uri` ends on the provider's own page. Ours is the sign-in pages' look and
 * language, and loads nothing from elsewhere (oidc-provider's default page imports a Google web
 * font, which the pages' `style-src 'self'` would refuse and which tells Google who signed out).
 */
describe('the page after a sign-out', () => {
  let server: TestServer;
  let app: { id: string };
  beforeAll(async () => {
    server = await startTestServer('sign-out');
    app = await server.create('/api/applications', { name: 'Notes', type: 'SPA', oidcClientMetadata: { redirectUris: [redirectUri] } });
    await userWith(server, 'leaving', 'leaving-Passw0rd-long');
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['en', 'You are signed out'],
    ['de', 'Sie sind abgemeldet'],
    ['ja', 'サインアウトしました'],
  ])('RP-Initiated Logout §2: without post_logout_redirect_uri, ends on our page in the browser’s language (%s)', async (language, title) => {
    const browser = new TestBrowser(server.url, `198.51.100.${40 + language.length}`);
    const flow = await codeFlow(browser, { clientId: app.id, redirectUri, scope: 'openid', identifier: 'leaving', password: 'leaving-Passw0rd-long' });
    const tokens = await redeem(server, { clientId: app.id }, flow);
    const headers = { 'accept-language': language };

    const question = await browser.go(`/oidc/session/end?id_token_hint=${tokens.id_token}`, { headers });
    expect(question.status).toBe(200);
    const form = await question.text();
    const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"/.exec(form)?.[1] ?? /action="([^"]+)"[^>]*id="op.logoutForm"/.exec(form)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)?.[1];
    expect(action && xsrf).toBeTruthy();
    const confirmed = await browser.go(new URL(action!.replace(/&amp;/g, '&'), server.url), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }).toString(),
    });
    expect(confirmed.status).toBe(303);
    const done = await browser.go(new URL(confirmed.headers.get('location')!, server.url), { headers });
    expect(done.status).toBe(200);
    const page = await done.text();
    expect(page).toContain(`<title>${title}`);
    expect(page).toContain(`lang="${language}"`);
    expect(page).not.toMatch(/googleapis|@import/);
    expect(page).toMatch(/<link rel="stylesheet" href="\/interaction-assets\//);
  });
});
