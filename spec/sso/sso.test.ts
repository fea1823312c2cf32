import { TestBrowser, startAuthorization } from '../support/browser.js';
import { snapshot } from '../support/db.js';
import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startSamlIdp, type SamlIdp, type SamlTamper } from '../support/saml-idp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startUpstreamIdp, type UpstreamIdp } from '../support/upstream.js';
import { createSamlServiceProvider } from '../../sso/saml.js';
import type { SsoConnectorDocument } from '../../sso/connectors.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * Enterprise SSO as Logto's (routes/sso-connector, experience/verification-routes/enterprise-sso-
 * verification.ts): connectors through the Management API, email-domain discovery, and sign-in
 * through a SAML 2.0 IdP (samlify, in this process, signing real assertions) and an OpenID Connect
 * IdP (a second oidc-provider). The service provider side is node-saml's, with our own checks.
 */
describe('enterprise SSO (SAML and OIDC connectors)', () => {
  let server: TestServer;
  let receiver: Receiver;
  let saml: SamlIdp;
  let oidc: UpstreamIdp;
  let clientId: string;
  let samlConnector: string;
  let oidcConnector: string;
  let callbackUrl: string;
  let ip = 40;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('sso', { ...hookTestEnv, TRUST_PROXY: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,localhost' });
    await subscribe(server, receiver, ['User.Created', 'User.Data.Updated', 'PostRegister', 'PostSignIn']);
    callbackUrl = `${server.url}/interaction/sso-callback`;
    saml = await startSamlIdp();
    oidc = await startUpstreamIdp(callbackUrl);
    const application = await server.create('/api/applications', {
      name: 'Web app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    clientId = application.id;
    samlConnector = (
      await server.create('/api/sso-connectors', {
        providerName: 'SAML',
        connectorName: 'Acme Okta',
        config: { metadata: saml.metadata },
        domains: ['acme.test'],
      })
    ).id;
    oidcConnector = (
      await server.create('/api/sso-connectors', {
        providerName: 'OIDC',
        connectorName: 'Globex Entra',
        config: { issuer: oidc.issuer, clientId: oidc.clientId, clientSecret: oidc.clientSecret },
        domains: ['globex.test'],
        syncProfile: true,
      })
    ).id;
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await saml.close();
    await oidc.close();
  });

  async function begin(event: 'SignIn' | 'Register') {
    const browser = new TestBrowser(server.url, `198.51.100.${(ip += 1)}`);
    await startAuthorization(browser, clientId, redirectUri);
    expect((await browser.json('PUT', '/api/experience', { interactionEvent: event })).status).toBe(204);
    return browser;
  }

  /** The SAML leg: our AuthnRequest to the IdP, its signed response posted to our assertion consumer, back to the callback. */
  async function samlLeg(browser: TestBrowser, state = `state-${Math.random()}`) {
    const started = await browser.json('POST', `/api/experience/verification/sso/${samlConnector}/authorization-uri`, { state, redirectUri: callbackUrl });
    expect(started.status).toBe(200);
    const authorizationUri = started.body.authorizationUri as string;
    expect(authorizationUri.startsWith(`${saml.url}/sso?SAMLRequest=`)).toBe(true);
    const form = await saml.respond(authorizationUri);
    return { verificationId: started.body.verificationId as string, form, state };
  }
  const post = (browser: TestBrowser, form: { acs: string; SAMLResponse: string; RelayState: string }) =>
    browser.go(form.acs, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLResponse: form.SAMLResponse, RelayState: form.RelayState }).toString(),
    });
  const verify = (browser: TestBrowser, connectorId: string, verificationId: string, connectorData: Record<string, string> = {}) =>
    browser.json('POST', `/api/experience/verification/sso/${connectorId}/verify`, { verificationId, connectorData });
  async function submit(browser: TestBrowser) {
    const submitted = await browser.json('POST', '/api/experience/submit');
    expect(submitted.status).toBe(200);
    await browser.follow(submitted.body.redirectTo as string, redirectUri);
  }

  it('the Management API keeps the OIDC secret write-only, reads SAML metadata, refuses bad configurations and public domains, writing nothing', async () => {
    const factories = (await server.api('GET', '/api/sso-connector-factories')).body;
    expect(factories.standardConnectors.map(({ providerName }: { providerName: string }) => providerName)).toEqual(['OIDC', 'SAML']);
    const listed = (await server.api('GET', '/api/sso-connectors')).body as Array<Record<string, unknown>>;
    expect(listed.map(({ id }) => id)).toEqual([samlConnector, oidcConnector]);
    expect(JSON.stringify(listed)).not.toContain(oidc.clientSecret);
    expect(listed[0]).toMatchObject({
      providerName: 'SAML',
      providerType: 'saml',
      domains: ['acme.test'],
      providerConfig: {
        serviceProvider: {
          entityId: `${server.url}/enterprise-sso/${samlConnector}`,
          assertionConsumerServiceUrl: `${server.url}/api/authn/saml/sso/${samlConnector}`,
        },
        identityProvider: { entityId: saml.entityId, signInEndpoint: `${saml.url}/sso` },
      },
    });
    // Our service provider metadata, public: the assertion consumer URL an IdP administrator registers.
    const metadata = await fetch(`${server.url}/api/authn/saml/sso/${samlConnector}/metadata`);
    expect(metadata.headers.get('content-type')).toMatch(/samlmetadata\+xml/);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${server.url}/enterprise-sso/${samlConnector}"`);
    expect(xml).toContain(`Location="${server.url}/api/authn/saml/sso/${samlConnector}"`);
    expect(xml).toContain('WantAssertionsSigned="true"');

    const before = await snapshot(server.database.db);
    let made = 0;
    // Each its own name: a second connector of one name is refused for that alone (its own test below).
    const create = (body: Record<string, unknown>) => server.api('POST', '/api/sso-connectors', { body: { connectorName: `x ${(made += 1)}`, ...body } });
    const refusals = await Promise.all([
      create({ providerName: 'SAML', config: {} }),
      create({ providerName: 'SAML', config: { metadata: '<not-xml' } }),
      create({ providerName: 'SAML', config: { metadata: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>' } }),
      create({ providerName: 'OIDC', config: { clientId: 'a', clientSecret: 'b' } }),
      create({ providerName: 'CAS', config: {} }),
      create({ providerName: 'SAML', config: { metadata: saml.metadata }, domains: ['Gmail.com'] }),
      create({ providerName: 'SAML', config: { metadata: saml.metadata }, domains: ['acme.test', 'ACME.test'] }),
      create({ providerName: 'SAML', config: { metadata: saml.metadata }, domains: ['not a domain'] }),
    ]);
    expect(refusals.map(({ status, body }) => [status, body.code])).toEqual([
      [400, 'connector.invalid_config'],
      [400, 'connector.invalid_config'],
      [400, 'connector.invalid_config'],
      [400, 'connector.invalid_config'],
      [422, 'connector.not_found'],
      [422, 'single_sign_on.forbidden_domains'],
      [422, 'single_sign_on.duplicated_domains'],
      [400, 'guard.invalid_input'],
    ]);
    expect(await snapshot(server.database.db)).toBe(before);
    expect((await server.api('GET', '/api/sso-connectors/nope')).status).toBe(404);

    // The metadata's URL works as the metadata itself (fetched through the outbound guard when saved), and PATCH keeps the OIDC secret.
    const byUrl = await create({ providerName: 'SAML', config: { metadataUrl: `${saml.url}/metadata` } });
    expect(byUrl.body.providerConfig.identityProvider).toMatchObject({ entityId: saml.entityId });
    expect((await server.api('DELETE', `/api/sso-connectors/${byUrl.body.id}`)).status).toBe(204);
    expect((await server.api('PATCH', `/api/sso-connectors/${oidcConnector}`, { body: { config: { scope: 'openid email profile' } } })).status).toBe(200);
  });

  it('gives a domain to one connector only, compared without case and after IDNA; a second claim is 422 naming it, even at the same moment', async () => {
    // The outside attack's sixth finding: a second IdP claiming a domain signs in that domain's accounts.
    const before = await snapshot(server.database.db);
    let made = 0;
    const create = (body: Record<string, unknown>) =>
      server.api('POST', '/api/sso-connectors', { body: { connectorName: `claims ${(made += 1)}`, providerName: 'SAML', ...body } });
    for (const domains of [['ACME.test'], ['acme.test.'], ['other.test', 'Acme.Test']]) {
      const taken = await create({ domains });
      expect({ status: taken.status, code: taken.body.code, data: taken.body.data }).toEqual({
        status: 422,
        code: 'single_sign_on.duplicated_domains',
        data: { data: ['acme.test'], connectorId: samlConnector },
      });
    }
    const patched = await server.api('PATCH', `/api/sso-connectors/${oidcConnector}`, { body: { domains: ['globex.test', 'ACME.TEST'] } });
    expect({ status: patched.status, code: patched.body.code }).toEqual({ status: 422, code: 'single_sign_on.duplicated_domains' });
    expect(await snapshot(server.database.db)).toBe(before);

    // Internationalized names are kept, and compared, in their ASCII form (RFC 5891).
    const bucher = await create({ config: { metadata: saml.metadata }, domains: ['Bücher.test'] });
    expect(bucher.body.domains).toEqual(['xn--bcher-kva.test']);
    expect((await create({ domains: ['XN--BCHER-KVA.test'] })).body.code).toBe('single_sign_on.duplicated_domains');
    const discovered = await (await begin('SignIn')).json('GET', `/api/experience/sso-connectors?email=${encodeURIComponent('leser@bücher.test')}`);
    expect(discovered.body).toEqual({ connectorIds: [bucher.body.id] });
    expect((await server.api('DELETE', `/api/sso-connectors/${bucher.body.id}`)).status).toBe(204);

    // Two claims of one new domain at the same moment: one connector gets it.
    const raced = await Promise.all(Array.from({ length: 4 }, () => create({ domains: ['raced.test'] })));
    expect(raced.map(({ status }) => status).sort()).toEqual([200, 422, 422, 422]);
    const holders = (await server.api('GET', '/api/sso-connectors')).body.filter(({ domains }: { domains: string[] }) => domains.includes('raced.test'));
    expect(holders).toHaveLength(1);
    expect((await server.api('DELETE', `/api/sso-connectors/${holders[0].id}`)).status).toBe(204);
  });

  it('names a connector once (409 single_sign_on.duplicate_connector_name, Logto’s integration-tests api/sso-connectors.test.ts), even at the same moment; PATCH {} answers the connector', async () => {
    const before = await snapshot(server.database.db);
    const named = (connectorName: string) => server.api('POST', '/api/sso-connectors', { body: { providerName: 'OIDC', connectorName } });
    const racing = await Promise.all([named('Twice named'), named('Twice named'), named('Twice named')]);
    expect(racing.map(({ status }) => status).sort()).toEqual([200, 409, 409]);
    expect(racing.find(({ status }) => status === 409)!.body).toMatchObject({ code: 'single_sign_on.duplicate_connector_name' });
    const kept = racing.find(({ status }) => status === 200)!.body as { id: string };
    const other = await named('Named once');
    // Renamed to a taken name: refused; to its own name, or to a free one: fine.
    expect((await server.api('PATCH', `/api/sso-connectors/${other.body.id}`, { body: { connectorName: 'Twice named' } })).status).toBe(409);
    expect((await server.api('PATCH', `/api/sso-connectors/${other.body.id}`, { body: { connectorName: 'Named once' } })).status).toBe(200);
    const unchanged = await server.api('PATCH', `/api/sso-connectors/${kept.id}`, { body: {} });
    expect(unchanged).toMatchObject({ status: 200, body: { id: kept.id, connectorName: 'Twice named' } });
    for (const id of [kept.id, other.body.id]) expect((await server.api('DELETE', `/api/sso-connectors/${id}`)).status).toBe(204);
    expect(await snapshot(server.database.db)).not.toBe(before);
  });

  it('takes the operator’s list of public email domains instead of ours (SSO_PUBLIC_EMAIL_DOMAINS)', async () => {
    const own = await startTestServer('sso-public-domains', { SSO_PUBLIC_EMAIL_DOMAINS: 'corp-mail.example' });
    try {
      const create = (domains: string[]) => own.api('POST', '/api/sso-connectors', { body: { connectorName: 'x', providerName: 'SAML', domains } });
      expect((await create(['CORP-mail.example'])).body.code).toBe('single_sign_on.forbidden_domains');
      expect((await create(['gmail.com'])).status).toBe(200);
    } finally {
      await own.close();
    }
  });

  it('answers a redirect URI that is no URL with 400 naming it, not 500', async () => {
    const browser = await begin('SignIn');
    const refused = await browser.json('POST', `/api/experience/verification/sso/${samlConnector}/authorization-uri`, {
      state: 'state-12345678',
      redirectUri: 'http://localhost:3001.evil.example/cb',
    });
    expect({ status: refused.status, code: refused.body.code, field: refused.body.data?.field }).toEqual({
      status: 400,
      code: 'guard.invalid_input',
      field: 'body.redirectUri',
    });
  });

  it('discovers the connector by the email’s domain (Logto’s GET /api/experience/sso-connectors)', async () => {
    const browser = await begin('SignIn');
    expect((await browser.json('GET', '/api/experience/sso-connectors?email=ada@ACME.test')).body).toEqual({ connectorIds: [samlConnector] });
    expect((await browser.json('GET', '/api/experience/sso-connectors?email=bob@globex.test')).body).toEqual({ connectorIds: [oidcConnector] });
    expect((await browser.json('GET', '/api/experience/sso-connectors?email=eve@example.com')).body).toEqual({ connectorIds: [] });
    expect((await browser.json('GET', '/api/experience/sso-connectors?email=not-an-email')).status).toBe(400);
  });

  it("consumes a SAML response at Logto's assertion consumer path too (POST /api/authn/single-sign-on/saml/:connectorId)", async () => {
    saml.signInAs({ nameId: 'logto.path@acme.test', email: 'logto.path@acme.test' });
    const browser = await begin('SignIn');
    const leg = await samlLeg(browser);
    const consumed = await post(browser, { ...leg.form, acs: `${server.url}/api/authn/single-sign-on/saml/${samlConnector}` });
    expect(consumed.status).toBe(303);
    expect(consumed.headers.get('location')).toBe(`${callbackUrl}?state=${encodeURIComponent(leg.state)}`);
    expect((await verify(browser, samlConnector, leg.verificationId, { state: leg.state })).status).toBe(200);
  });

  it('registers through SAML (User.Created, PostRegister, the SSO identity kept), then signs in again with PostSignIn alone', async () => {
    saml.signInAs({ nameId: 'ada@acme.test', email: 'ada@acme.test', name: 'Ada Acme' });
    const browser = await begin('SignIn');
    const leg = await samlLeg(browser);
    const consumed = await post(browser, leg.form);
    expect(consumed.status).toBe(303);
    expect(consumed.headers.get('location')).toBe(`${callbackUrl}?state=${encodeURIComponent(leg.state)}`);
    expect((await verify(browser, samlConnector, leg.verificationId, { state: leg.state })).status).toBe(200);
    // Nobody has this identity yet: the interaction goes on as a registration, keeping the verification.
    const unknown = await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId });
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 404, code: 'user.identity_not_exist' });
    expect((await browser.json('PUT', '/api/experience/interaction-event', { interactionEvent: 'Register' })).status).toBe(204);
    const created = await eventsDuring(server, receiver, async () => {
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(201);
      await submit(browser);
    });
    expect(created.map(({ body }) => body.event)).toEqual(['User.Created', 'PostRegister']);
    expect(created[0]!.body.data).toMatchObject({ primaryEmail: 'ada@acme.test', name: 'Ada Acme' });
    for (const { raw } of created) expect(raw).not.toMatch(/SAMLResponse|Signature/);
    const userId = created[0]!.body.data.id as string;
    const user = (await server.api('GET', `/api/users/${userId}?includeSsoIdentities=true`)).body;
    expect(user.ssoIdentities).toEqual([
      expect.objectContaining({ userId, ssoConnectorId: samlConnector, issuer: saml.entityId, identityId: 'ada@acme.test' }),
    ]);

    const again = await begin('SignIn');
    const second = await samlLeg(again);
    await post(again, second.form);
    await verify(again, samlConnector, second.verificationId);
    const events = await eventsDuring(server, receiver, async () => {
      expect((await again.json('POST', '/api/experience/identification', { verificationId: second.verificationId })).status).toBe(204);
      await submit(again);
    });
    expect(events.map(({ body }) => [body.event, body.userId])).toEqual([['PostSignIn', userId]]);
  });

  // Issue 39, point 5: Logto's organization /jit/sso-connectors.
  it("registers a person through an organization's just-in-time SSO connector into the organization, with its just-in-time roles", async () => {
    const org = await server.create('/api/organizations', { name: 'Acme Holdings' });
    const staff = await server.create('/api/organization-roles', { name: 'acme staff' });
    expect((await server.api('POST', `/api/organizations/${org.id}/jit/sso-connectors`, { body: { ssoConnectorIds: [samlConnector] } })).status).toBe(201);
    await server.api('POST', `/api/organizations/${org.id}/jit/roles`, { body: { organizationRoleIds: [staff.id] } });
    const listed = (await server.api('GET', `/api/organizations/${org.id}/jit/sso-connectors`)).body;
    expect(listed).toEqual([{ id: samlConnector, providerName: 'SAML', connectorName: 'Acme Okta', domains: ['acme.test'], branding: expect.any(Object) }]);

    saml.signInAs({ nameId: 'grace@acme.test', email: 'grace@acme.test', name: 'Grace Acme' });
    const browser = await begin('Register');
    const leg = await samlLeg(browser);
    await post(browser, leg.form);
    expect((await verify(browser, samlConnector, leg.verificationId, { state: leg.state })).status).toBe(200);
    expect((await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(201);
    await submit(browser);
    const [grace] = (await server.api('GET', '/api/users?search.primaryEmail=grace@acme.test')).body;
    const organizations = (await server.api('GET', `/api/users/${grace.id}/organizations`)).body;
    expect(organizations).toEqual([expect.objectContaining({ id: org.id, organizationRoles: [{ id: staff.id, name: 'acme staff' }] })]);
  });

  it.each<[SamlTamper, RegExp]>([
    ['unsigned', /signature/i],
    ['other-key', /signature/i],
    ['expired', /subject confirmation|expired/i],
    ['not-yet-valid', /not yet valid|NotBefore/i],
    ['wrong-audience', /audience/i],
    ['wrong-recipient', /assertion consumer URL/],
    ['unsolicited', /InResponseTo|this sign-in/],
  ])('refuses a %s SAML response (400 connector.general naming why), and signs nobody in', async (tamper, reason) => {
    saml.signInAs({ nameId: 'mallory@acme.test', email: 'mallory@acme.test' });
    saml.tamper(tamper);
    try {
      const browser = await begin('SignIn');
      const leg = await samlLeg(browser);
      expect((await post(browser, leg.form)).status).toBe(303);
      const refused = await verify(browser, samlConnector, leg.verificationId);
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 'connector.general' });
      expect(refused.body.message).toMatch(reason);
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: leg.verificationId })).status).toBe(404);
    } finally {
      saml.tamper(undefined);
    }
  });

  it('refuses a replayed SAML response: posted twice, posted for another sign-in, and an assertion id seen before', async () => {
    saml.signInAs({ nameId: 'replay@acme.test', email: 'replay@acme.test' });
    const browser = await begin('SignIn');
    const first = await samlLeg(browser);
    expect((await post(browser, first.form)).status).toBe(303);
    const twice = await post(browser, first.form);
    expect({ status: twice.status, code: ((await twice.json()) as { code: string }).code }).toEqual({ status: 400, code: 'connector.general' });

    // The same response, for another sign-in of this browser: it does not answer that request.
    const other = await samlLeg(browser);
    expect((await post(browser, { ...other.form, SAMLResponse: first.form.SAMLResponse })).status).toBe(303);
    const mismatched = await verify(browser, samlConnector, other.verificationId);
    expect(mismatched.body).toMatchObject({ code: 'connector.general', message: expect.stringMatching(/InResponseTo|answer/) });

    // Below those checks, an accepted assertion's id is kept: the same assertion is refused even for its own request.
    const connector = (await server.database.db.collection<SsoConnectorDocument>('sso_connectors').findOne({ _id: samlConnector }))!;
    const sp = createSamlServiceProvider({ db: server.database.db, origin: server.url });
    const { authorizationUri, requestId } = await sp.authorizationUri(connector, 'relay');
    const { SAMLResponse } = await saml.respond(authorizationUri);
    const request = { id: requestId, createdAt: Date.now() };
    await expect(sp.validate(connector, SAMLResponse, request)).resolves.toMatchObject({ identityId: 'replay@acme.test' });
    await expect(sp.validate(connector, SAMLResponse, request)).rejects.toMatchObject({
      code: 'connector.general',
      message: expect.stringMatching(/used already/),
    });
  });

  it('signs an existing account in through OIDC, linking the identity by the email its domain vouches for (announced), and syncs the profile', async () => {
    const existing = await server.create('/api/users', { username: 'alice_globex', primaryEmail: 'alice@globex.test', password });
    // Entra and others often send no email_verified: the connector's domain is what vouches for the address.
    oidc.signInAs({ sub: 'entra-alice', email: 'alice@globex.test', email_verified: false, name: 'Alice Globex' });
    const browser = await begin('SignIn');
    const state = `state-${Math.random()}`;
    const started = await browser.json('POST', `/api/experience/verification/sso/${oidcConnector}/authorization-uri`, { state, redirectUri: callbackUrl });
    const authorizationUri = new URL(started.body.authorizationUri as string);
    expect(authorizationUri.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUri.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    const { url } = await new TestBrowser(authorizationUri.origin).follow(authorizationUri, callbackUrl);
    const connectorData = Object.fromEntries(url.searchParams);
    const forged = await verify(browser, oidcConnector, started.body.verificationId as string, { ...connectorData, state: 'forged' });
    expect(forged.body.code).toBe('connector.general');
    expect((await verify(browser, oidcConnector, started.body.verificationId as string, connectorData)).status).toBe(200);
    const events = await eventsDuring(server, receiver, async () => {
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: started.body.verificationId })).status).toBe(204);
      await submit(browser);
    });
    expect(events.map(({ body }) => [body.event, body.changes])).toEqual([
      ['User.Data.Updated', ['lastSignInAt', 'name', 'ssoIdentities']],
      ['PostSignIn', undefined],
    ]);
    expect(events[0]!.body.data).toMatchObject({ id: existing.id, name: 'Alice Globex' });
    const user = (await server.api('GET', `/api/users/${existing.id}?includeSsoIdentities=true`)).body;
    expect(user.ssoIdentities).toEqual([expect.objectContaining({ issuer: oidc.issuer, identityId: 'entra-alice', ssoConnectorId: oidcConnector })]);

    // An address outside the connector's domains is not the IdP's to vouch for, email_verified or not: no account is linked by it.
    const victim = await server.create('/api/users', { username: 'victim_elsewhere', primaryEmail: 'victim@example.com', password });
    oidc.signInAs({ sub: 'entra-mallory', email: 'victim@example.com', email_verified: true });
    const attacker = await begin('SignIn');
    const start = await attacker.json('POST', `/api/experience/verification/sso/${oidcConnector}/authorization-uri`, { state, redirectUri: callbackUrl });
    const returned = await new TestBrowser(oidc.issuer).follow(start.body.authorizationUri as string, callbackUrl);
    await verify(attacker, oidcConnector, start.body.verificationId as string, Object.fromEntries(returned.url.searchParams));
    const notLinked = await attacker.json('POST', '/api/experience/identification', { verificationId: start.body.verificationId });
    expect({ status: notLinked.status, code: notLinked.body.code }).toEqual({ status: 404, code: 'user.identity_not_exist' });
    expect((await server.api('GET', `/api/users/${victim.id}?includeSsoIdentities=true`)).body.ssoIdentities).toEqual([]);
    oidc.signInAs({ sub: 'entra-alice', email: 'alice@globex.test', email_verified: false, name: 'Alice Globex' });

    // The identity is hers: registering another account with it is refused.
    const register = await begin('Register');
    const again = await register.json('POST', `/api/experience/verification/sso/${oidcConnector}/authorization-uri`, { state, redirectUri: callbackUrl });
    const back = await new TestBrowser(oidc.issuer).follow(again.body.authorizationUri as string, callbackUrl);
    await verify(register, oidcConnector, again.body.verificationId as string, Object.fromEntries(back.url.searchParams));
    const taken = await register.json('POST', '/api/experience/identification', { verificationId: again.body.verificationId });
    expect({ status: taken.status, code: taken.body.code }).toEqual({ status: 422, code: 'user.identity_already_in_use' });
  });
});
