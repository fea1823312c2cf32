import { decodeJwt } from 'jose';

import { openDatabase, type Database } from '../../lib/store/database.js';
import { createIdentity } from '../../identity.js';
import { TestBrowser, startAuthorization } from '../support/browser.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startMailCatcher, type MailCatcher } from '../support/smtp.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const strong = 'correct horse battery staple';

describe('hardening: searches, claims and the embedding defaults', () => {
  let server: TestServer;
  let mail: MailCatcher;

  beforeAll(async () => {
    mail = await startMailCatcher();
    server = await startTestServer('small-ones', { SMTP_URL: mail.url, EMAIL_FROM: 'Identity <no-reply@id.test>' });
  });
  afterAll(async () => {
    await server.close();
    await mail.close();
  });

  it.each([
    ['/api/users?search=a%00b', 'query.search'],
    ['/api/users?search.username=%00', 'query.search.username'],
    ['/api/roles?search=%00', 'query.search'],
    ['/api/organizations?q=x%00', 'query.q'],
    ['/api/organization-roles?q=%00', 'query.q'],
  ])('answers a NUL byte in a search with 400 naming the field: %s', async (path, field) => {
    const answer = await server.api('GET', path);
    expect(answer).toMatchObject({ status: 400, body: { code: 'guard.invalid_input', data: { field } } });
  });

  it('sets email_verified for an address confirmed by an emailed code at sign-up (OIDC Core §5.1)', async () => {
    const app = await server.create('/api/applications', {
      name: 'Web',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const browser = new TestBrowser(server.url);
    const { verifier } = await startAuthorization(browser, app.id, redirectUri, 'openid email');
    await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
    const identifier = { type: 'email', value: 'verified.person@example.com' };
    const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'Register' });
    const code = await mail.nextCode('verified.person@example.com');
    await browser.json('POST', '/api/experience/verification/verification-code/verify', { identifier, verificationId: sent.body.verificationId, code });
    await browser.json('POST', '/api/experience/identification', { verificationId: sent.body.verificationId });
    await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong });
    const { body } = await browser.json('POST', '/api/experience/submit');
    const { url } = await browser.follow(body.redirectTo, redirectUri);
    const response = await fetch(`http://localhost:${server.port}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: url.searchParams.get('code')!,
        redirect_uri: redirectUri,
        client_id: app.id,
        code_verifier: verifier,
      }),
    });
    const tokens = (await response.json()) as { id_token: string; access_token: string };
    expect(decodeJwt(tokens.id_token).sub).toEqual(expect.any(String));
    // OIDC Core §5.3: the UserInfo endpoint releases the email scope's claims.
    const userinfo = await fetch(`http://localhost:${server.port}/oidc/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(await userinfo.json()).toMatchObject({ email: 'verified.person@example.com', email_verified: true });
  });

  describe('embedding', () => {
    let database: Database;
    beforeAll(async () => {
      database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('embedding-defaults') });
    });
    afterAll(async () => {
      await database.close();
    });

    it("turns oidc-provider's development login off unless the host turned it on, and says so when it is on", async () => {
      const warnings: string[] = [];
      const logger = {
        info: () => undefined,
        warn: (message: string) => {
          warnings.push(message);
        },
        error: () => undefined,
      };
      const identity = await createIdentity({ database, issuer: 'http://localhost:1/oidc', baseUrl: 'http://localhost:1', logger });
      try {
        expect(identity.configure({}).features?.devInteractions?.enabled).toBe(false);
        expect(identity.configure({ features: { clientCredentials: { enabled: true } } }).features?.devInteractions?.enabled).toBe(false);
        expect(warnings.some((message) => message.includes('devInteractions'))).toBe(false);
        expect(identity.configure({ features: { devInteractions: { enabled: true } } }).features?.devInteractions?.enabled).toBe(true);
        expect(warnings.some((message) => message.includes('devInteractions'))).toBe(true);
      } finally {
        await identity.close();
      }
    });
  });
});
