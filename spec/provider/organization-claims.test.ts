import * as oauth from 'openid-client';

import { TestBrowser } from '../support/browser.js';
import { codeFlow } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const organizationScopes = 'urn:logto:scope:organizations urn:logto:scope:organization_roles';

/**
 * Logto's organization claims (issue 39, point 1, its first part): with the reserved scopes
 * `urn:logto:scope:organizations` and `urn:logto:scope:organization_roles`, UserInfo answers the
 * user's `organizations`, `organization_data` and `organization_roles` as Logto's
 * `getUserClaimsData` does (packages/core/src/oidc/scope.ts), read at each answer.
 */
describe('organization claims', () => {
  let server: TestServer;
  let web: { clientId: string; clientSecret: string };
  let userId: string;
  let alpha: { id: string };
  let beta: { id: string };
  let ip = 100;

  beforeAll(async () => {
    server = await startTestServer('organization-claims', { TRUST_PROXY: 'true' });
    const app = await server.create('/api/applications', {
      name: 'B2B app',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    web = { clientId: app.id, clientSecret: app.secret };
    userId = (await server.create('/api/users', { username: 'member', password })).id;
    alpha = await server.create('/api/organizations', { name: 'Alpha', description: 'The first' });
    beta = await server.create('/api/organizations', { name: 'Beta' });
    await server.create('/api/organizations', { name: 'Gamma, not joined' });
    const admin = await server.create('/api/organization-roles', { name: 'admin' });
    const viewer = await server.create('/api/organization-roles', { name: 'viewer' });
    for (const organization of [alpha, beta]) await server.create(`/api/organizations/${organization.id}/users`, { userIds: [userId] });
    await server.create(`/api/organizations/${alpha.id}/users/${userId}/roles`, { organizationRoleIds: [admin.id, viewer.id] });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Signs the member in with `scope` and asks UserInfo, as a relying party would. */
  async function userInfo(scope: string) {
    const flow = await codeFlow(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), {
      clientId: web.clientId,
      redirectUri,
      scope,
      identifier: 'member',
      password,
    });
    const config = await server.discover(web.clientId, web.clientSecret);
    const tokens = await oauth.authorizationCodeGrant(config, flow.callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: 'state-1',
      expectedNonce: 'nonce-1',
    });
    const fetch = () => oauth.fetchUserInfo(config, tokens.access_token, userId);
    return { tokens, fetch };
  }

  it('OIDC Core §5.4: the organization scopes release the user’s organizations, their data and the roles there, as Logto gives them', async () => {
    const claims = await (await userInfo(`openid ${organizationScopes}`)).fetch();
    expect(claims.organizations).toEqual([alpha.id, beta.id].sort());
    expect(claims.organization_data).toEqual(
      [
        { id: alpha.id, name: 'Alpha', description: 'The first' },
        { id: beta.id, name: 'Beta', description: null },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(claims.organization_roles).toEqual([`${alpha.id}:admin`, `${alpha.id}:viewer`]);
  });

  it('releases nothing of organizations without their scopes, and only what each scope releases', async () => {
    const plain = await (await userInfo('openid')).fetch();
    for (const claim of ['organizations', 'organization_data', 'organization_roles']) expect(plain).not.toHaveProperty(claim);
    const rolesOnly = await (await userInfo('openid urn:logto:scope:organization_roles')).fetch();
    expect(rolesOnly).not.toHaveProperty('organizations');
    expect(rolesOnly.organization_roles).toEqual([`${alpha.id}:admin`, `${alpha.id}:viewer`]);
  });

  it('reads membership at each answer: a member removed, or a role taken, is gone from the next one', async () => {
    const { fetch } = await userInfo(`openid ${organizationScopes}`);
    expect((await fetch()).organizations).toContain(beta.id);
    expect((await server.api('DELETE', `/api/organizations/${beta.id}/users/${userId}`)).status).toBe(204);
    const roles = (await server.api('GET', `/api/organizations/${alpha.id}/users/${userId}/roles`)).body as Array<{ id: string; name: string }>;
    const viewer = roles.find(({ name }) => name === 'viewer')!;
    expect((await server.api('DELETE', `/api/organizations/${alpha.id}/users/${userId}/roles/${viewer.id}`)).status).toBe(204);
    const after = await fetch();
    expect(after.organizations).toEqual([alpha.id]);
    expect(after.organization_roles).toEqual([`${alpha.id}:admin`]);
  });
});
