import * as oauth from 'openid-client';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';

/**
 * Per-organization consent for third-party applications (issue 39, point 3): the consent page lets
 * the user choose the organizations the application may act in, the Management API manages them as
 * Logto's (`applications/application-user-consent-organization.ts`), and an organization token for
 * a third-party application is refused without it (Logto's `grants/utils.ts`).
 */
describe('per-organization consent', () => {
  let server: TestServer;
  let thirdParty: { id: string; secret: string };
  let firstParty: { id: string };
  let userId: string;
  let orgs: Array<{ id: string; name: string }>;

  beforeAll(async () => {
    server = await startTestServer('organization-consent');
    thirdParty = await server.create('/api/applications', {
      name: 'Partner app',
      type: 'Traditional',
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    firstParty = await server.create('/api/applications', {
      name: 'Ours',
      type: 'Traditional',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    userId = (await server.create('/api/users', { username: 'consenting', password })).id;
    orgs = [];
    for (const name of ['Alpha', 'Beta', 'Gamma (not joined)']) orgs.push(await server.create('/api/organizations', { name }));
    await server.create(`/api/organizations/${orgs[0].id}/users`, { userIds: [userId] });
    await server.create(`/api/organizations/${orgs[1].id}/users`, { userIds: [userId] });
  });
  afterAll(async () => {
    await server.close();
  });

  const consents = `/api/applications/${'{app}'}/users/{user}/consent-organizations`;
  const pathOf = (applicationId: string, user = userId) => consents.replace('{app}', applicationId).replace('{user}', user);
  const consented = async () => ((await server.api('GET', pathOf(thirdParty.id))).body.organizations as Array<{ id: string }>).map(({ id }) => id);

  it("manages a user's consented organizations as Logto: members only, third-party applications only", async () => {
    expect((await server.api('POST', pathOf(thirdParty.id), { body: { organizationIds: [orgs[0].id] } })).status).toBe(201);
    expect(await consented()).toEqual([orgs[0].id]);
    const outside = await server.api('POST', pathOf(thirdParty.id), { body: { organizationIds: [orgs[2].id] } });
    expect({ status: outside.status, code: outside.body.code }).toEqual({ status: 422, code: 'organization.require_membership' });
    const ours = await server.api('POST', pathOf(firstParty.id), { body: { organizationIds: [orgs[0].id] } });
    expect({ status: ours.status, code: ours.body.code }).toEqual({ status: 422, code: 'application.third_party_application_only' });
    expect((await server.api('POST', pathOf(thirdParty.id), { body: { organizationIds: [] } })).status).toBe(400);
    expect((await server.api('GET', pathOf(thirdParty.id, 'no-such-user'))).status).toBe(404);
    expect((await server.api('PUT', pathOf(thirdParty.id), { body: { organizationIds: [orgs[1].id] } })).status).toBe(204);
    expect(await consented()).toEqual([orgs[1].id]);
    expect((await server.api('DELETE', `${pathOf(thirdParty.id)}/${orgs[1].id}`)).status).toBe(204);
    expect((await server.api('DELETE', `${pathOf(thirdParty.id)}/${orgs[1].id}`)).status).toBe(404);
    expect(await consented()).toEqual([]);
  });

  it('the consent page lists the organizations to choose; an organization token goes only to those chosen or consented since', async () => {
    let page = '';
    const flow = await codeFlow(new TestBrowser(server.url, '198.51.100.7'), {
      clientId: thirdParty.id,
      redirectUri,
      scope: 'openid offline_access urn:logto:scope:organizations',
      prompt: 'consent',
      identifier: 'consenting',
      password,
      onConsentPage: (html) => (page = html),
      // Beta chosen, and an organization the user is not a member of slipped in: it counts for nothing.
      consentFields: { organizationIds: [orgs[1].id, orgs[2].id] },
    });
    expect(page).toContain('name="organizationIds"');
    expect(page).toContain(`value="${orgs[0].id}"`);
    expect(page).toContain(`value="${orgs[1].id}"`);
    expect(page).not.toContain(`value="${orgs[2].id}"`);
    expect(await consented()).toEqual([orgs[1].id]);

    const tokens = await redeem(server, { clientId: thirdParty.id, clientSecret: thirdParty.secret }, flow);
    const config = await server.discover(thirdParty.id, thirdParty.secret);
    let refreshToken = tokens.refresh_token!;
    const organizationToken = async (organizationId: string) => {
      const answer = await oauth.refreshTokenGrant(config, refreshToken, { organization_id: organizationId });
      refreshToken = answer.refresh_token ?? refreshToken;
      return answer;
    };
    expect((await organizationToken(orgs[1].id)).access_token).toBeDefined();
    await expect(organizationToken(orgs[0].id)).rejects.toMatchObject({
      status: 403,
      error: 'access_denied',
      error_description: 'organization access is not granted to the application',
    });
    await server.api('POST', pathOf(thirdParty.id), { body: { organizationIds: [orgs[0].id] } });
    expect((await organizationToken(orgs[0].id)).access_token).toBeDefined();
    await server.api('DELETE', `${pathOf(thirdParty.id)}/${orgs[1].id}`);
    await expect(organizationToken(orgs[1].id)).rejects.toMatchObject({ status: 403, error: 'access_denied' });
  });
});
