import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';

/**
 * The outside attack's seventh finding: the sign-out confirmation and the provider's own error
 * pages carried no `frame-ancestors` nor `X-Frame-Options`, so another site could frame them
 * (clickjacking a sign-out, say). Every HTML answer of the service now refuses framing: CSP Level 3
 * `frame-ancestors 'none'`, and RFC 7034's `X-Frame-Options: DENY` for older browsers.
 */
describe('every HTML answer refuses to be framed', () => {
  let server: TestServer;
  let clientId: string;

  beforeAll(async () => {
    server = await startTestServer('framing');
    clientId = (
      await server.create('/api/applications', {
        name: 'Framed app',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      })
    ).id;
  });
  afterAll(async () => {
    await server.close();
  });

  const authorize = (params: Record<string, string>) => `/oidc/auth?${new URLSearchParams({ response_type: 'code', scope: 'openid', ...params })}`;

  it.each([
    ['the sign-out confirmation', '/oidc/session/end'],
    ['the provider’s error page (an unknown client)', authorize({ client_id: 'no-such-client', redirect_uri: redirectUri })],
    ['a form_post answer (RFC 6749 §4.1.2.1 error, OAuth 2.0 Form Post Response Mode)', 'form_post'],
    ['an expired sign-in page', '/interaction/no-such-interaction'],
    ['the API reference', '/api/docs/'],
  ])('%s', async (_name, path) => {
    const url = path === 'form_post' ? authorize({ client_id: clientId, redirect_uri: redirectUri, response_mode: 'form_post', prompt: 'none' }) : path;
    const response = await fetch(`${server.url}${url}`, { redirect: 'manual' });
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toMatch(/(^|;)\s*frame-ancestors 'none'/);
  });

  it('the page after signing out too', async () => {
    const confirm = await fetch(`${server.url}/oidc/session/end`);
    const html = await confirm.text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
    const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1];
    expect(xsrf && action).toBeTruthy();
    const cookie = confirm.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const confirmed = await fetch(new URL(action!.replaceAll('&amp;', '&'), server.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ xsrf: xsrf!, logout: 'yes' }),
    });
    const location = confirmed.headers.get('location');
    const done = location ? await fetch(new URL(location, server.url), { headers: { cookie } }) : confirmed;
    expect(done.headers.get('content-type')).toMatch(/^text\/html/);
    expect(done.headers.get('x-frame-options')).toBe('DENY');
    expect(done.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
  });
});
