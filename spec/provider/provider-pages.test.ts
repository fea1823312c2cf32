import * as oauth from 'openid-client';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * What oidc-provider answers itself, with the settings the service gives it: its error page in the
 * pages' look (no third-party font, the message escaped), and token revocation only by the client
 * the token was issued to (RFC 7009 §2.1).
 */
describe("the provider's own answers", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('provider-pages');
  });
  afterAll(async () => {
    await server.close();
  });

  it("draws its error page (an unknown client at the authorization endpoint) in the pages' look, in the asked language, with nothing from another origin", async () => {
    const answer = await fetch(
      `${server.issuer}/auth?client_id=<script>x</script>&response_type=code&scope=openid&redirect_uri=${encodeURIComponent(redirectUri)}`,
      {
        headers: { 'accept-language': 'de' },
      },
    );
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain('<html lang="de"');
    expect(html).toContain('Die Anmeldung hat nicht geklappt');
    expect(html).toContain('lang="en"');
    expect(html).not.toContain('<script>x</script>');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)/);
  });

  it('revokes a token only for the client it was issued to (RFC 7009 §2.1): another confidential client is refused, and the token stays active', async () => {
    const make = (name: string) =>
      server.create('/api/applications', {
        name,
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      }) as Promise<{ id: string; secret: string }>;
    const [owner, other] = [await make('owner'), await make('other')];
    await server.create('/api/users', { username: 'revoker', password });
    const flow = await codeFlow(new TestBrowser(server.url), { clientId: owner.id, redirectUri, scope: 'openid', identifier: 'revoker', password });
    // An opaque access token (for UserInfo): one the provider keeps, and so can revoke.
    const { access_token: token } = await redeem(server, { clientId: owner.id, clientSecret: owner.secret }, flow);
    const ownerConfig = await server.discover(owner.id, owner.secret);
    await expect(oauth.tokenRevocation(await server.discover(other.id, other.secret), token)).rejects.toMatchObject({ error: 'invalid_request' });
    expect((await oauth.tokenIntrospection(ownerConfig, token)).active).toBe(true);
    await oauth.tokenRevocation(ownerConfig, token);
    expect((await oauth.tokenIntrospection(ownerConfig, token)).active).toBe(false);
  });
});
