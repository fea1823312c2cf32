import { decodeJwt } from 'jose';
import * as oauth from 'openid-client';

import { TestBrowser, csrfOf, startAuthorization } from '../support/browser.js';
import { redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const api = 'https://projects.example.com/api';

/**
 * The organization chooser (issue 39, point 7, beyond Logto: logto#7485): an application that
 * requires an organization (`customClientMetadata.requireOrganization`), or a request with
 * `prompt=organization`, has the user pick one of their organizations after signing in; the pick is
 * checked as an organization token is and binds the grant, so that the code's access token for an
 * API carries `organization_id` and only that organization's permissions.
 */
describe('organization chooser', () => {
  let server: TestServer;
  let required: { id: string };
  let plain: { id: string };
  let orgs: Array<{ id: string; name: string }>;
  let memberId: string;
  let ip = 10;

  beforeAll(async () => {
    server = await startTestServer('organization-chooser', { TRUST_PROXY: 'true' });
    const metadata = { redirectUris: [redirectUri], postLogoutRedirectUris: [] };
    required = await server.create('/api/applications', {
      name: 'Workspace app',
      type: 'SPA',
      oidcClientMetadata: metadata,
      customClientMetadata: { requireOrganization: true },
    });
    plain = await server.create('/api/applications', { name: 'Plain app', type: 'SPA', oidcClientMetadata: metadata });
    const resource = await server.create('/api/resources', { name: 'Projects', indicator: api });
    const read = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'read:projects' });
    const write = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'write:projects' });
    const editor = await server.create('/api/organization-roles', { name: 'editor', resourceScopeIds: [read.id, write.id] });
    const viewer = await server.create('/api/organization-roles', { name: 'viewer', resourceScopeIds: [read.id] });
    orgs = [];
    for (const name of ['Acme', 'Bolt', 'Cargo (not joined)', 'Dome (MFA)']) orgs.push(await server.create('/api/organizations', { name }));
    await server.api('PATCH', `/api/organizations/${orgs[3].id}`, { body: { isMfaRequired: true } });
    memberId = (await server.create('/api/users', { username: 'chooser', password })).id;
    await server.create('/api/users', { username: 'loner', password });
    for (const org of [orgs[0], orgs[1], orgs[3]]) await server.create(`/api/organizations/${org.id}/users`, { userIds: [memberId] });
    await server.create(`/api/organizations/${orgs[0].id}/users/${memberId}/roles`, { organizationRoleIds: [editor.id] });
    await server.create(`/api/organizations/${orgs[1].id}/users/${memberId}/roles`, { organizationRoleIds: [viewer.id] });
  });
  afterAll(async () => {
    await server.close();
  });

  const browser = () => new TestBrowser(server.url, `198.51.100.${(ip += 1)}`);
  const scope = 'openid read:projects write:projects';

  /** Signs `username` in for `clientId` and answers the page it lands on (the chooser) with what comes after. */
  async function signIn(agent: TestBrowser, clientId: string, username: string, { scope: extraScope = '', ...extra }: Record<string, string> = {}) {
    const auth = await startAuthorization(agent, clientId, redirectUri, `${scope} ${extraScope}`.trim(), { resource: api, ...extra });
    const signedIn = await agent.form(`${auth.page}/sign-in`, { csrf: auth.csrf, identifier: username, password });
    expect(signedIn.status).toBe(303);
    const { response, url } = await agent.follow(signedIn.headers.get('location')!, redirectUri);
    return { auth, url, html: url.href.startsWith(redirectUri) ? '' : await response.text() };
  }

  /** Picks `organizationId` on the chooser at `page`; answers the response (a 303 onwards, or the page again with the error). */
  const choose = (agent: TestBrowser, page: string, html: string, organizationId: string) =>
    agent.form(`${page}/organization`, { csrf: csrfOf(html), organizationId });

  /** Follows a chooser's 303 to the application and redeems the code; answers the access token's claims. */
  async function finish(agent: TestBrowser, answered: Response, verifier: string) {
    expect(answered.status).toBe(303);
    const { url } = await agent.follow(answered.headers.get('location')!, redirectUri);
    expect(url.searchParams.get('error')).toBeNull();
    return decodeJwt((await redeem(server, { clientId: required.id }, { callback: url, verifier }, api)).access_token);
  }

  it("asks which of the user's organizations the sign-in is for, and the code's API token carries only that one", async () => {
    const agent = browser();
    const { auth, url, html } = await signIn(agent, required.id, 'chooser');
    expect(url.pathname).toMatch(/^\/interaction\//);
    expect(html).toContain('name="organizationId"');
    for (const org of [orgs[0], orgs[1], orgs[3]]) expect(html).toContain(`value="${org.id}"`);
    expect(html).not.toContain(`value="${orgs[2].id}"`);

    // An organization the user is not a member of, typed into the form: said at the chooser, nothing bound.
    const outside = await choose(agent, url.pathname, html, orgs[2].id);
    expect(outside.status).toBe(400);
    const again = await outside.text();
    expect(again).toContain('aria-invalid="true"');
    expect(again).toContain('You are not a member of this organization.');
    // An organization that requires MFA, for a member without a second factor: said why.
    const mfa = await choose(agent, url.pathname, again, orgs[3].id);
    expect(mfa.status).toBe(400);
    expect(await mfa.text()).toContain('requires a second sign-in factor');
    const none = await agent.form(`${url.pathname}/organization`, { csrf: csrfOf(again) });
    expect(none.status).toBe(400);

    const claims = await finish(agent, await choose(agent, url.pathname, again, orgs[1].id), auth.verifier);
    expect(claims).toMatchObject({ aud: api, organization_id: orgs[1].id, scope: 'read:projects' });

    // The next authorization in the same session keeps the organization, without asking (prompt=none works).
    const silent = await startSilent(agent, required.id);
    expect(silent.url.searchParams.get('error')).toBeNull();
    const silentClaims = decodeJwt((await redeem(server, { clientId: required.id }, { callback: silent.url, verifier: silent.verifier }, api)).access_token);
    expect(silentClaims).toMatchObject({ organization_id: orgs[1].id, scope: 'read:projects' });
  });

  it('asks again once the user is no longer a member of the organization chosen before; prompt=none then answers interaction_required', async () => {
    const user = (await server.create('/api/users', { username: 'leaver', password })).id;
    await server.create(`/api/organizations/${orgs[0].id}/users`, { userIds: [user] });
    await server.create(`/api/organizations/${orgs[1].id}/users`, { userIds: [user] });
    const agent = browser();
    const first = await signIn(agent, required.id, 'leaver');
    await finish(agent, await choose(agent, first.url.pathname, first.html, orgs[0].id), first.auth.verifier);

    expect((await server.api('DELETE', `/api/organizations/${orgs[0].id}/users/${user}`)).status).toBe(204);
    const silent = await startSilent(agent, required.id);
    expect(silent.url.searchParams.get('error')).toBe('interaction_required');
    const asked = await startAuthorization(agent, required.id, redirectUri, scope, { resource: api });
    expect(asked.html).toContain('name="organizationId"');
    expect(asked.html).not.toContain(`value="${orgs[0].id}"`);
    expect(asked.html).toContain(`value="${orgs[1].id}"`);
  });

  it('a membership ended between the pick and the code: the application hears access_denied and gets no code', async () => {
    const user = (await server.create('/api/users', { username: 'racer', password })).id;
    await server.create(`/api/organizations/${orgs[0].id}/users`, { userIds: [user] });
    const agent = browser();
    const { url, html } = await signIn(agent, required.id, 'racer');
    const answered = await choose(agent, url.pathname, html, orgs[0].id);
    expect(answered.status).toBe(303);
    expect((await server.api('DELETE', `/api/organizations/${orgs[0].id}/users/${user}`)).status).toBe(204);
    const { url: callback } = await agent.follow(answered.headers.get('location')!, redirectUri);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
  });

  it('a user with no organization the application may use is told so, and can only go back (access_denied)', async () => {
    const agent = browser();
    const { url, html } = await signIn(agent, required.id, 'loner');
    expect(html).not.toContain('name="organizationId"');
    expect(html).toContain('not a member of one it may use');
    const back = await agent.form(`${url.pathname}/abort`, { csrf: csrfOf(html) });
    const { url: callback } = await agent.follow(back.headers.get('location')!, redirectUri);
    expect(callback.searchParams.get('error')).toBe('access_denied');
  });

  it('prompt=organization shows the chooser to an application that does not require one, and the pick binds its grant', async () => {
    const agent = browser();
    const { auth, url, html } = await signIn(agent, plain.id, 'chooser', { prompt: 'organization' });
    expect(html).toContain('name="organizationId"');
    const answered = await choose(agent, url.pathname, html, orgs[0].id);
    const { url: callback } = await agent.follow(answered.headers.get('location')!, redirectUri);
    const claims = decodeJwt((await redeem(server, { clientId: plain.id }, { callback, verifier: auth.verifier }, api)).access_token);
    expect(claims).toMatchObject({ organization_id: orgs[0].id, scope: 'read:projects write:projects' });
    // Without the prompt, the plain application's next sign-in is for no organization.
    const silent = await startSilent(agent, plain.id);
    const own = decodeJwt((await redeem(server, { clientId: plain.id }, { callback: silent.url, verifier: silent.verifier }, api)).access_token);
    expect(own).not.toHaveProperty('organization_id');
  });

  it('for a third-party application, the chooser lists only the organizations the user let it into on the consent page', async () => {
    const partner = await server.create('/api/applications', {
      name: 'Partner app',
      type: 'Traditional',
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      customClientMetadata: { requireOrganization: true },
    });
    const agent = browser();
    const { auth, url, html } = await signIn(agent, partner.id, 'chooser', { scope: 'openid urn:logto:scope:organizations' });
    expect(html).toContain('name="decision"');
    const consented = await agent.form(`${url.pathname}/consent`, { csrf: csrfOf(html), decision: 'allow', organizationIds: orgs[1].id });
    const { response, url: chooser } = await agent.follow(consented.headers.get('location')!, redirectUri);
    const page = await response.text();
    expect(page).toContain(`value="${orgs[1].id}"`);
    expect(page).not.toContain(`value="${orgs[0].id}"`);
    // Acme, which the user did not let the application into, typed into the form: refused at the chooser.
    const refused = await choose(agent, chooser.pathname, page, orgs[0].id);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('You have not allowed this application to act in this organization.');
    const answered = await choose(agent, chooser.pathname, page, orgs[1].id);
    const { url: callback } = await agent.follow(answered.headers.get('location')!, redirectUri);
    const tokens = await redeem(server, { clientId: partner.id, clientSecret: partner.secret }, { callback, verifier: auth.verifier }, api);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ organization_id: orgs[1].id });
  });

  it('two picks raced on one chooser: one code at most, for one of the organizations picked', async () => {
    const agent = browser();
    const { auth, url, html } = await signIn(agent, required.id, 'chooser');
    const answers = await Promise.all([choose(agent, url.pathname, html, orgs[0].id), choose(agent, url.pathname, html, orgs[1].id)]);
    const callbacks = [];
    for (const answer of answers) {
      if (answer.status !== 303) continue;
      callbacks.push((await agent.follow(answer.headers.get('location')!, redirectUri)).url);
    }
    const codes = callbacks.filter((callback) => callback.href.startsWith(redirectUri) && callback.searchParams.get('code'));
    expect(codes).toHaveLength(1);
    const claims = decodeJwt((await redeem(server, { clientId: required.id }, { callback: codes[0]!, verifier: auth.verifier }, api)).access_token);
    expect([orgs[0].id, orgs[1].id]).toContain(claims.organization_id);
  });

  it('the chooser cannot be posted to an interaction that does not ask for it', async () => {
    const agent = browser();
    const auth = await startAuthorization(agent, plain.id, redirectUri, scope, { resource: api });
    const answered = await agent.form(`${auth.page}/organization`, { csrf: auth.csrf, organizationId: orgs[0].id });
    expect(answered.status).toBe(400);
  });

  it('discovery lists the organization prompt (Initiating User Registration via OpenID Connect 1.0 §4.2: prompt_values_supported)', async () => {
    const config = await server.discover(plain.id);
    expect(config.serverMetadata().prompt_values_supported).toContain('organization');
  });

  /** An authorization with `prompt=none` in the browser's session: answers where it sent the browser. */
  async function startSilent(agent: TestBrowser, clientId: string) {
    const verifier = oauth.randomPKCECodeVerifier();
    const authorize = new URL(`${server.url}/oidc/auth`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope,
      resource: api,
      redirect_uri: redirectUri,
      state: 'state-1',
      nonce: 'nonce-1',
      prompt: 'none',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const { url } = await agent.follow(authorize, redirectUri);
    return { url, verifier };
  }
});
