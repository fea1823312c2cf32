import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const signedOut = 'http://127.0.0.1:9/signed-out';
const password = 'correct horse battery staple';
const logoutEvent = 'http://schemas.openid.net/event/backchannel-logout';

/** An application's back-channel logout endpoint: records each logout token it is sent. */
async function startLogoutReceiver() {
  const tokens: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const token = new URLSearchParams(body).get('logout_token');
      if (req.method === 'POST' && req.headers['content-type']?.startsWith('application/x-www-form-urlencoded') && token) tokens.push(token);
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel-logout`,
    tokens,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** OpenID Connect Back-Channel Logout 1.0, for applications registered with a `backchannelLogoutUri`. */
describe('Back-Channel Logout', () => {
  let receiver: Awaited<ReturnType<typeof startLogoutReceiver>>;
  let server: TestServer;
  let user: { id: string };
  beforeAll(async () => {
    receiver = await startLogoutReceiver();
    server = await startTestServer('backchannel', { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' });
    user = await server.create('/api/users', { username: 'leaver', password });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const application = (target: TestServer, backchannelLogoutUri: string) =>
    target.create('/api/applications', {
      name: 'Logged-out app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [signedOut], backchannelLogoutUri, backchannelLogoutSessionRequired: true },
    }) as Promise<{ id: string; secret: string }>;

  /** Signs in, then signs out through the end-session endpoint and its confirmation page. */
  async function signInAndOut(target: TestServer, app: { id: string; secret: string }) {
    const browser = new TestBrowser(target.url);
    const flow = await codeFlow(browser, { clientId: app.id, redirectUri, scope: 'openid', identifier: 'leaver', password });
    const tokens = await redeem(target, { clientId: app.id, clientSecret: app.secret }, flow);
    const end = new URL(`${target.issuer}/session/end`);
    end.search = new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: signedOut }).toString();
    const page = await browser.go(end);
    const html = await page.text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const action = new URL(/action="([^"]+)"/.exec(html)![1]!, end);
    const confirmed = await browser.form(action.pathname, { xsrf, logout: 'yes' });
    const { url } = await browser.follow(confirmed.headers.get('location')!, signedOut);
    expect(url.href).toBe(signedOut);
    return tokens;
  }

  it('§2.1: discovery says back-channel logout and its sid are supported', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  });

  it('§2.4 to §2.6: ending the session POSTs a signed logout token naming the user and the session, without a nonce', async () => {
    const app = await application(server, receiver.url);
    const before = receiver.tokens.length;
    const tokens = await signInAndOut(server, app);
    expect(receiver.tokens.length).toBe(before + 1);
    const logoutToken = receiver.tokens.at(-1)!;
    const { payload } = await jwtVerify(logoutToken, createRemoteJWKSet(new URL(`${server.issuer}/jwks`)), { issuer: server.issuer, audience: app.id });
    const sid = decodeJwt(tokens.id_token!).sid;
    expect(sid).toEqual(expect.any(String));
    expect(payload).toMatchObject({ sub: user.id, sid, events: { [logoutEvent]: {} }, jti: expect.any(String), iat: expect.any(Number) });
    // §2.4: a logout token MUST NOT contain a nonce, so that it cannot pass for an ID token.
    expect(payload.nonce).toBeUndefined();
    expect(decodeProtectedHeader(logoutToken).typ).toBe('logout+jwt');
  });

  it('does not call a back-channel URI on a loopback address unless OUTBOUND_ALLOWED_HOSTS names it; the sign-out still completes', async () => {
    const strict = await startTestServer('backchannel-strict');
    try {
      await strict.create('/api/users', { username: 'leaver', password });
      const app = await application(strict, receiver.url);
      const before = receiver.tokens.length;
      await signInAndOut(strict, app);
      expect(receiver.tokens.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
