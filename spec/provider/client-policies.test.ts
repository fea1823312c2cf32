import { decodeJwt } from 'jose';
import * as oauth from 'openid-client';

import { TestBrowser } from '../support/browser.js';
import { codeFlow } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const day = 24 * 60 * 60;

/** An application's customClientMetadata, read as Logto reads it: token lifetimes, rotation, refresh tokens, CORS. */
describe('customClientMetadata', () => {
  let server: TestServer;
  let ip = 0;
  beforeAll(async () => {
    server = await startTestServer('client-policies');
    await server.create('/api/users', { username: 'policy_user', password });
  });
  afterAll(async () => {
    await server.close();
  });

  const application = (type: 'Traditional' | 'SPA', customClientMetadata: Record<string, unknown>, isThirdParty = false) =>
    server.create('/api/applications', {
      name: `${type} app`,
      type,
      customClientMetadata,
      isThirdParty,
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    }) as Promise<{ id: string; secret?: string }>;

  /** Signs in through the pages and redeems the code as the application. */
  async function tokensFor(app: { id: string; secret?: string }, scope: string, prompt?: string) {
    ip += 1;
    const flow = await codeFlow(new TestBrowser(server.url, `198.51.100.${ip}`), {
      clientId: app.id,
      redirectUri,
      scope,
      identifier: 'policy_user',
      password,
      ...(prompt && { prompt }),
    });
    const config = await server.discover(app.id, app.secret);
    const tokens = await oauth.authorizationCodeGrant(config, flow.callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: 'state-1',
      expectedNonce: 'nonce-1',
    });
    return { config, tokens };
  }
  const refreshTokenExpiry = async (token: string) => {
    const stored = await server.database.db.collection<{ _id: string; expiresAt: Date }>('oidc_RefreshToken').findOne({ _id: token });
    return stored!.expiresAt.getTime();
  };
  const lifetime = (jwt: string) => {
    const { exp, iat } = decodeJwt(jwt);
    return exp! - iat!;
  };

  it("idTokenTtl sets the ID token's lifetime (default 3600 s)", async () => {
    const short = await tokensFor(await application('Traditional', { idTokenTtl: 600 }), 'openid');
    expect(lifetime(short.tokens.id_token!)).toBe(600);
    const plain = await tokensFor(await application('Traditional', {}), 'openid');
    expect(lifetime(plain.tokens.id_token!)).toBe(3600);
  });

  it("refreshTokenTtlInDays sets the refresh token's lifetime (default 14 days)", async () => {
    const before = Date.now();
    const long = await tokensFor(await application('Traditional', { refreshTokenTtlInDays: 30 }), 'openid offline_access', 'consent');
    const expiry = await refreshTokenExpiry(long.tokens.refresh_token!);
    expect(expiry).toBeGreaterThanOrEqual(before + 30 * day * 1000 - 1000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 30 * day * 1000 + 1000);
    const plain = await tokensFor(await application('Traditional', {}), 'openid offline_access', 'consent');
    expect(await refreshTokenExpiry(plain.tokens.refresh_token!)).toBeLessThanOrEqual(Date.now() + 14 * day * 1000 + 1000);
  });

  it('a grant lives as long as the longest refresh token its application issues, and at least as long as a session (14 days)', async () => {
    const grantExpiry = async (refreshToken: string) => {
      const stored = await server.database.db.collection<{ _id: string; grantId: string }>('oidc_RefreshToken').findOne({ _id: refreshToken });
      const grant = await server.database.db.collection<{ _id: string; expiresAt: Date }>('oidc_Grant').findOne({ _id: stored!.grantId });
      return grant!.expiresAt.getTime() - Date.now();
    };
    const long = await tokensFor(await application('Traditional', { refreshTokenTtlInDays: 90 }), 'openid offline_access', 'consent');
    expect(await grantExpiry(long.tokens.refresh_token!)).toBeGreaterThan(89 * day * 1000);
    // The refresh token is read with its grant, which is there.
    expect((await oauth.refreshTokenGrant(long.config, long.tokens.refresh_token!)).access_token).toEqual(expect.any(String));
    const short = await tokensFor(await application('Traditional', { refreshTokenTtlInDays: 1 }), 'openid offline_access', 'consent');
    const shortGrant = await grantExpiry(short.tokens.refresh_token!);
    expect(shortGrant).toBeGreaterThan(13 * day * 1000);
    expect(shortGrant).toBeLessThanOrEqual(14 * day * 1000);
  });

  it('alwaysIssueRefreshToken gives a refresh token without offline_access; otherwise offline_access is needed', async () => {
    expect((await tokensFor(await application('Traditional', { alwaysIssueRefreshToken: true }), 'openid')).tokens.refresh_token).toEqual(expect.any(String));
    expect((await tokensFor(await application('Traditional', {}), 'openid')).tokens.refresh_token).toBeUndefined();
  });

  it('never gives a third-party application a refresh token the user did not consent to (offline_access), whatever alwaysIssueRefreshToken says', async () => {
    const partner = await application('Traditional', { alwaysIssueRefreshToken: true }, true);
    // The consent page is answered for `openid` only: no offline access was granted.
    expect((await tokensFor(partner, 'openid')).tokens.refresh_token).toBeUndefined();
  });

  it("rotateRefreshToken: false keeps a confidential client's refresh token; a public client's rotates whatever it says (RFC 9700 §4.14.2)", async () => {
    const kept = await tokensFor(await application('Traditional', { rotateRefreshToken: false, alwaysIssueRefreshToken: true }), 'openid');
    const first = kept.tokens.refresh_token!;
    const refreshed = await oauth.refreshTokenGrant(kept.config, first);
    expect(refreshed.refresh_token ?? first).toBe(first);
    await expect(oauth.refreshTokenGrant(kept.config, first)).resolves.toMatchObject({ access_token: expect.any(String) });

    const spa = await tokensFor(await application('SPA', { rotateRefreshToken: false }), 'openid offline_access', 'consent');
    const rotated = await oauth.refreshTokenGrant(spa.config, spa.tokens.refresh_token!);
    expect(rotated.refresh_token).not.toBe(spa.tokens.refresh_token);
    await expect(oauth.refreshTokenGrant(spa.config, spa.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('corsAllowedOrigins lets those browser origins call the token endpoint, and no others', async () => {
    const app = await application('Traditional', { corsAllowedOrigins: ['https://app.example.com'] });
    const preflight = (origin: string) =>
      fetch(`${server.issuer}/token`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const token = (origin: string) =>
      fetch(`${server.issuer}/token`, {
        method: 'POST',
        headers: {
          origin,
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'not-a-code', redirect_uri: redirectUri }),
      });
    expect((await preflight('https://app.example.com')).status).toBe(204);
    const allowed = await token('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const refused = await token('https://elsewhere.example.com');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses out-of-range settings with 400 naming the field, and stores nothing', async () => {
    const before = (await server.api('GET', '/api/applications')).body.length;
    for (const [field, value] of [
      ['idTokenTtl', 10],
      ['refreshTokenTtlInDays', 0],
      ['rotateRefreshToken', 'yes'],
      ['corsAllowedOrigins', ['not a url']],
    ] as const) {
      const response = await server.api('POST', '/api/applications', { body: { name: 'Bad', type: 'Traditional', customClientMetadata: { [field]: value } } });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect((await server.api('GET', '/api/applications')).body.length).toBe(before);
  });
});
