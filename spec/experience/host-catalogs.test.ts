import { createIdentity } from '../../identity.js';
import { silentLogger } from '../../lib/logger.js';
import { startEmbeddedHost, type EmbeddedHost } from '../support/embedded.js';

/** An embedding host's catalogs (`experience.catalogs`): one message of a built-in language corrected, and a language of its own. */
describe('catalogs an embedding host adds', () => {
  let host: EmbeddedHost;
  let base: string;
  let clientId: string;

  beforeAll(async () => {
    host = await startEmbeddedHost('catalogs', {
      experience: {
        catalogs: {
          de: { 'signIn.title': 'Einloggen' },
          fr: { 'signIn.title': 'Connexion', 'frame.continueTo': 'pour continuer vers {application}' },
        },
      },
    });
    base = host.base;
    const created = await host.api('POST', '/api/applications', {
      name: 'Host app',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: ['http://127.0.0.1:9/cb'], postLogoutRedirectUris: [] },
    });
    clientId = created.body.id;
  });
  afterAll(async () => {
    await host?.close();
  });

  /** The sign-in page an authorization request with these `ui_locales` leads to. */
  async function signInPage(uiLocales: string): Promise<string> {
    const authorize = new URL(`${base}/oidc/auth`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://127.0.0.1:9/cb',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      ui_locales: uiLocales,
    }).toString();
    const started = await fetch(authorize, { redirect: 'manual' });
    const cookie = started.headers
      .getSetCookie()
      .map((set) => set.split(';')[0])
      .join('; ');
    const page = await fetch(new URL(started.headers.get('location')!, base), { headers: { cookie } });
    // RFC 9110 §8.5: the page says its language in its headers too.
    expect(page.headers.get('content-language')).toBe(uiLocales.split('-')[0]);
    expect(page.headers.get('vary')).toMatch(/accept-language/i);
    return page.text();
  }

  it('corrects one message of a built-in language and keeps its others', async () => {
    const html = await signInPage('de');
    expect(html).toContain('<html lang="de">');
    expect(html).toContain('<h1>Einloggen</h1>');
    expect(html).toContain('<label for="password">Passwort</label>');
  });

  it('adds a language of its own, with English for what it leaves out', async () => {
    const html = await signInPage('fr-CA');
    expect(html).toContain('<html lang="fr">');
    expect(html).toContain('<h1>Connexion</h1>');
    expect(html).toContain('pour continuer vers <strong>Host app</strong>');
    expect(html).toContain('<label for="password">Password</label>');
  });

  it('says in discovery which languages the pages speak, the host’s among them (OpenID Connect Discovery §3 ui_locales_supported)', async () => {
    const discovery = (await (await fetch(`${base}/oidc/.well-known/openid-configuration`)).json()) as { ui_locales_supported?: string[] };
    expect(discovery.ui_locales_supported).toEqual(['en', 'de', 'ja', 'fr']);
  });

  it('refuses a catalog whose key is not a language tag when the service is created', async () => {
    await expect(
      createIdentity({
        database: host.database,
        issuer: `${base}/oidc`,
        baseUrl: base,
        logger: silentLogger,
        experience: { catalogs: { 'en"><script>': {} } },
      }),
    ).rejects.toThrow(TypeError);
  });
});
