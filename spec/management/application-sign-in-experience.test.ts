import { snapshot } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('/api/applications/:id/sign-in-experience (Logto’s application-level branding)', () => {
  let server: TestServer;
  let applicationId: string;
  const path = () => `/api/applications/${applicationId}/sign-in-experience`;

  beforeAll(async () => {
    server = await startTestServer('app-sign-in-experience');
    applicationId = (
      await server.create('/api/applications', {
        name: 'Reports',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: ['https://reports.test/cb'], postLogoutRedirectUris: [] },
      })
    ).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is 404 until set; PUT creates it (201) and changes only what it gives (200)', async () => {
    expect(await server.api('GET', path())).toMatchObject({ status: 404, body: { code: 'entity.not_exists_with_id' } });
    {
      const answer = await server.api('PUT', path(), {
        body: { displayName: 'Reports by Acme', color: { primaryColor: '#ffcc00' }, termsOfUseUrl: 'https://acme.test/terms' },
      });
      expect(answer.status).toBe(201);
      expect(answer.body).toEqual({
        applicationId,
        displayName: 'Reports by Acme',
        color: { primaryColor: '#ffcc00' },
        branding: {},
        termsOfUseUrl: 'https://acme.test/terms',
        privacyPolicyUrl: null,
      });
    }
    const updated = await server.api('PUT', path(), { body: { branding: { logoUrl: 'https://cdn.acme.test/reports.svg' }, termsOfUseUrl: null } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      displayName: 'Reports by Acme',
      color: { primaryColor: '#ffcc00' },
      branding: { logoUrl: 'https://cdn.acme.test/reports.svg' },
      termsOfUseUrl: null,
    });
    expect((await server.api('GET', path())).body).toEqual(updated.body);
  });

  it('survives PATCHes of the application racing it: each write sets only the fields it owns', async () => {
    const { id } = await server.create('/api/applications', {
      name: 'Raced',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['https://raced.test/cb'], postLogoutRedirectUris: [] },
    });
    expect((await server.api('PUT', `/api/applications/${id}/sign-in-experience`, { body: { displayName: 'First' } })).status).toBe(201);
    // A PATCH that read the application before the PUT below and writes after it must not put 'First' back.
    const patches = Array.from({ length: 16 }, (_, index) => server.api('PATCH', `/api/applications/${id}`, { body: { description: `edit ${index}` } }));
    const put = server.api('PUT', `/api/applications/${id}/sign-in-experience`, { body: { displayName: 'Raced by Acme' } });
    expect([...new Set((await Promise.all([...patches, put])).map(({ status }) => status))]).toEqual([200]);
    expect((await server.api('GET', `/api/applications/${id}/sign-in-experience`)).body.displayName).toBe('Raced by Acme');
    expect((await server.api('GET', `/api/applications/${id}`)).body.description).toMatch(/^edit \d+$/);
  });

  // Its values reach the pages' HTML, stylesheet and CSP: anything but a colour or an http(s) URL is refused.
  it.each([
    ['a colour that is not hex', { color: { primaryColor: 'red;}body{display:none' } }],
    ['a javascript: logo', { branding: { logoUrl: 'javascript:alert(1)' } }],
    ['a URL that would end the attribute', { privacyPolicyUrl: 'https://acme.test/"onmouseover="x' }],
    ['an empty display name', { displayName: '' }],
    // The outside attack's eighth finding: the parser keeps `;` in a host, which would start a CSP directive.
    ['a logo whose host would add a CSP directive', { branding: { logoUrl: 'https://cdn.example%3Bsandbox/logo.png' } }],
    ['a dark logo whose host is not a host name', { branding: { darkLogoUrl: 'https://cdn.example%20x/logo.png' } }],
  ])('refuses %s with 400 and changes nothing', async (_, body) => {
    const before = await snapshot(server.database.db);
    const answer = await server.api('PUT', path(), { body });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('guard.invalid_input');
    expect(await snapshot(server.database.db)).toBe(before);
  });

  it('is 404 for an application that does not exist, and needs a Management API token', async () => {
    expect((await server.api('PUT', '/api/applications/nope/sign-in-experience', { body: { displayName: 'x' } })).status).toBe(404);
    expect((await server.api('GET', path(), { token: null })).status).toBe(401);
  });

  /** The sign-in page an authorization request of `clientId` lands on. */
  async function signInPageOf(clientId: string, redirectUri: string) {
    const authorize = new URL(`${server.issuer}/auth`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: redirectUri,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const started = await fetch(authorize, { redirect: 'manual' });
    const cookies = started.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .join('; ');
    return fetch(new URL(started.headers.get('location')!, server.issuer), { headers: { cookie: cookies } });
  }

  it('is what the sign-in page shows: the display name, the logo (its origin alone added to the CSP) and the colours', async () => {
    const page = await signInPageOf(applicationId, 'https://reports.test/cb');
    const html = await page.text();
    expect(html).toContain('to continue to <strong>Reports by Acme</strong>');
    expect(html).toContain('<img src="https://cdn.acme.test/reports.svg" alt="Reports by Acme" />');
    expect(html).toContain('href="/interaction-assets/style.css?primary=ffcc00&amp;dark=ffcc00"');
    expect(page.headers.get('content-security-policy')).toContain("img-src 'self' https://cdn.acme.test;");
    const css = await (await fetch(new URL('/interaction-assets/style.css?primary=ffcc00&dark=ffcc00', server.issuer))).text();
    // Black on the yellow button, and links darkened until they read on white.
    expect(css).toMatch(/--primary: #ffcc00; --on-primary: #000000; --link: #[0-9a-f]{6};/);
    // A stylesheet asked for with anything but colours is the operator's.
    const plain = await (await fetch(new URL('/interaction-assets/style.css?primary=x}&dark=00', server.issuer))).text();
    expect(plain).not.toContain('x}');
  });

  it("takes Logto's short colours (#rgb), keeps them as given, and draws them doubled out; anything else is 400", async () => {
    const path = `/api/applications/${applicationId}/sign-in-experience`;
    const set = await server.api('PUT', path, { body: { color: { primaryColor: '#fc0', darkPrimaryColor: '#FC0' } } });
    expect(set.status).toBe(200);
    expect(set.body.color).toEqual({ primaryColor: '#fc0', darkPrimaryColor: '#FC0' });
    const html = await (await signInPageOf(applicationId, 'https://reports.test/cb')).text();
    expect(html).toContain('href="/interaction-assets/style.css?primary=ffcc00&amp;dark=ffcc00"');
    for (const primaryColor of ['#fc', '#ffcc0', 'fc0', '#ggg', '#ffcc00aa']) {
      const refused = await server.api('PUT', path, { body: { color: { primaryColor } } });
      expect({ primaryColor, status: refused.status }).toEqual({ primaryColor, status: 400 });
    }
    await server.api('PUT', path, { body: { color: { primaryColor: '#ffcc00', darkPrimaryColor: '#ffcc00' } } });
  });

  it('refuses an OIDC logo or redirect URI whose host would reach the CSP badly, and never writes one saved earlier into it', async () => {
    const before = await snapshot(server.database.db);
    for (const oidcClientMetadata of [
      { redirectUris: ['https://reports.test/cb'], logoUri: 'https://cdn.example%3Bsandbox/logo.png' },
      { redirectUris: ['https://reports.test%3Bscript-src%20*/cb'] },
    ]) {
      const refused = await server.api('POST', '/api/applications', { body: { name: 'Hostile', type: 'Traditional', oidcClientMetadata } });
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 'guard.invalid_input' });
    }
    expect(await snapshot(server.database.db)).toBe(before);
    // A native application's own scheme is no web origin, and is fine.
    const native = await server.api('POST', '/api/applications', {
      body: { name: 'Native', type: 'Native', oidcClientMetadata: { redirectUris: ['com.acme.reports:/callback'], postLogoutRedirectUris: [] } },
    });
    expect(native.status).toBe(200);

    // One stored before this check: its look reaches the page, its bad origin does not reach the header.
    const legacy = await server.create('/api/applications', {
      name: 'Legacy',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: ['https://legacy.test/cb'], postLogoutRedirectUris: [] },
    });
    await server.database.db
      .collection('applications')
      .updateOne({ _id: legacy.id }, { $set: { 'oidcClientMetadata.logoUri': 'https://cdn.example%3Bsandbox/logo.png' } });
    await server.api('PATCH', `/api/applications/${legacy.id}`, { body: { description: 'clears the caches' } });
    const page = await signInPageOf(legacy.id, 'https://legacy.test/cb');
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toContain("img-src 'self';");
    expect(policy).not.toMatch(/sandbox|%3B/i);
  });
});
