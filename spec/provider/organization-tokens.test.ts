import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'openid-client';

import { TestBrowser } from '../support/browser.js';
import { codeFlow, redeem } from '../support/flows.js';
import { startTestServer, type TestServer } from '../support/server.js';

const redirectUri = 'http://127.0.0.1:9/callback';
const password = 'correct horse battery staple';
const organizationsResource = 'urn:logto:resource:organizations';
const api = 'https://docs.example.com/api';

/** A token endpoint refusal as openid-client reports it. */
async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const { status, error: code, error_description: description } = error as { status: number; error: string; error_description: string };
    return { status, code, description };
  }
  throw new Error('the token endpoint answered a token');
}

/**
 * Organization tokens as Logto issues them (issue 39, point 1): `organization_id` on the refresh
 * grant (Logto's `packages/core/src/oidc/grants/refresh-token.ts` and `utils.ts`; the expectations
 * of its integration tests `oidc/organization-token.test.ts` and `organization-token-grant.test.ts`).
 */
describe('organization tokens', () => {
  let server: TestServer;
  let config: oauth.Configuration;
  // A single-page application: a public client, whose refresh tokens rotate at every use.
  let web: { clientId: string };
  let userId: string;
  let orgs: Array<{ id: string }>;
  let roles: Array<{ id: string }>;
  let ip = 10;

  beforeAll(async () => {
    server = await startTestServer('organization-tokens', { TRUST_PROXY: 'true' });
    const app = await server.create('/api/applications', {
      name: 'B2B app',
      type: 'SPA',
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    web = { clientId: app.id };
    config = await server.discover(web.clientId);
    userId = (await server.create('/api/users', { username: 'member', password })).id;
    // As Logto's organization-token-grant test: three organizations joined with different roles, a fourth not joined.
    orgs = [];
    for (const name of ['org1', 'org2', 'org3', 'org4']) orgs.push(await server.create('/api/organizations', { name }));
    const scopes = [];
    for (const name of ['scope1', 'scope2', 'scope3']) scopes.push(await server.create('/api/organization-scopes', { name }));
    const resource = await server.create('/api/resources', { name: 'Docs', indicator: api });
    const read = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'read:docs' });
    const write = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'write:docs' });
    roles = [
      await server.create('/api/organization-roles', { name: 'role1', organizationScopeIds: [scopes[0].id, scopes[1].id], resourceScopeIds: [write.id] }),
      await server.create('/api/organization-roles', { name: 'role2', organizationScopeIds: [scopes[1].id, scopes[2].id] }),
      await server.create('/api/organization-roles', { name: 'role3', organizationScopeIds: [scopes[0].id, scopes[2].id] }),
      await server.create('/api/organization-roles', { name: 'role4' }),
    ];
    // The user's own role gives `read:docs`; `write:docs` only through role1, in an organization.
    const reader = await server.create('/api/roles', { name: 'reader', type: 'User', scopeIds: [read.id] });
    await server.create(`/api/users/${userId}/roles`, { roleIds: [reader.id] });
    for (const org of orgs.slice(0, 3)) await server.create(`/api/organizations/${org.id}/users`, { userIds: [userId] });
    await server.create(`/api/organizations/${orgs[0].id}/users/${userId}/roles`, { organizationRoleIds: [roles[0].id] });
    await server.create(`/api/organizations/${orgs[1].id}/users/${userId}/roles`, { organizationRoleIds: [roles[0].id, roles[1].id] });
    await server.create(`/api/organizations/${orgs[2].id}/users/${userId}/roles`, { organizationRoleIds: [roles[3].id] });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Signs the member in, asking `scope` for `resource`, and answers the refresh token. */
  async function signIn(scope: string, resource: string[] = [organizationsResource, api]) {
    const flow = await codeFlow(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), {
      clientId: web.clientId,
      redirectUri,
      scope: `openid offline_access ${scope}`,
      resource,
      prompt: 'consent',
      identifier: 'member',
      password,
    });
    const tokens = await redeem(server, web, flow);
    expect(tokens.refresh_token).toBeDefined();
    return tokens.refresh_token!;
  }

  /** A holder of a refresh token, as a relying party keeps it: each refresh keeps the rotated token. */
  async function holder(scope = 'urn:logto:scope:organizations scope1 scope2 scope3 read:docs write:docs') {
    let refreshToken = await signIn(scope);
    return {
      get refreshToken() {
        return refreshToken;
      },
      async refresh(parameters: Record<string, string> = {}) {
        const tokens = await oauth.refreshTokenGrant(config, refreshToken, parameters);
        if (tokens.refresh_token) refreshToken = tokens.refresh_token;
        return { tokens, claims: decodeJwt(tokens.access_token) };
      },
    };
  }

  it('issues a JWT for the organization: aud urn:logto:organization:<id>, the permissions of the roles held there that were asked for', async () => {
    const client = await holder();
    const expected = [['scope1', 'scope2'], ['scope1', 'scope2', 'scope3'], []];
    for (const [index, scopes] of expected.entries()) {
      const { tokens, claims } = await client.refresh({ organization_id: orgs[index].id });
      expect(claims.aud).toBe(`urn:logto:organization:${orgs[index].id}`);
      expect(claims.sub).toBe(userId);
      expect(claims.client_id).toBe(web.clientId);
      expect(
        String(claims.scope ?? '')
          .split(' ')
          .filter(Boolean)
          .sort(),
      ).toEqual(scopes);
      expect(
        String(tokens.scope ?? '')
          .split(' ')
          .filter(Boolean)
          .sort(),
      ).toEqual(scopes);
      expect(tokens.expires_in).toBe(3600);
      // Signed with the provider's keys, as any access token of ours.
      await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${server.url}/oidc/jwks`)), { issuer: `${server.url}/oidc` });
    }
    // `scope` narrows further; a refresh token's scopes bound it (Logto's "down-scope according to the refresh token").
    expect((await client.refresh({ organization_id: orgs[1].id, scope: 'scope3' })).claims.scope).toBe('scope3');
    const narrow = await holder('urn:logto:scope:organizations scope1');
    expect((await narrow.refresh({ organization_id: orgs[1].id })).claims.scope).toBe('scope1');
  });

  it('carries no organization permission when the organizations resource was not asked for at sign-in', async () => {
    const refreshToken = await signIn('urn:logto:scope:organizations scope1 scope2', [api]);
    const tokens = await oauth.refreshTokenGrant(config, refreshToken, { organization_id: orgs[0].id });
    const claims = decodeJwt(tokens.access_token);
    expect(claims.aud).toBe(`urn:logto:organization:${orgs[0].id}`);
    expect(claims.scope ?? '').toBe('');
  });

  it('refuses as Logto does: access_denied (403) for a non-member or an unknown organization, insufficient_scope without the organizations scope; a refusal leaves the refresh token usable', async () => {
    const client = await holder();
    for (const organizationId of [orgs[3].id, 'no-such-organization']) {
      expect(await refusal(client.refresh({ organization_id: organizationId }))).toEqual({
        status: 403,
        code: 'access_denied',
        description: 'user is not a member of the organization',
      });
    }
    // Refused before the refresh token was spent: the same token still works.
    expect((await client.refresh({ organization_id: orgs[0].id })).claims.aud).toBe(`urn:logto:organization:${orgs[0].id}`);

    const withoutScope = await signIn('scope1');
    expect(await refusal(oauth.refreshTokenGrant(config, withoutScope, { organization_id: orgs[0].id }))).toEqual({
      status: 403,
      code: 'insufficient_scope',
      description: 'refresh token missing required scope',
    });
    expect((await oauth.refreshTokenGrant(config, withoutScope)).access_token).toBeDefined();
  });

  it('reads membership and roles at every refresh: a role given or taken shows in the next token, a member removed is refused', async () => {
    const client = await holder();
    expect((await client.refresh({ organization_id: orgs[0].id })).claims.scope).toBe('scope1 scope2');
    await server.create(`/api/organizations/${orgs[0].id}/users/${userId}/roles`, { organizationRoleIds: [roles[2].id] });
    expect(
      String((await client.refresh({ organization_id: orgs[0].id })).claims.scope)
        .split(' ')
        .sort(),
    ).toEqual(['scope1', 'scope2', 'scope3']);
    expect((await server.api('DELETE', `/api/organizations/${orgs[0].id}/users/${userId}/roles/${roles[2].id}`)).status).toBe(204);
    expect((await client.refresh({ organization_id: orgs[0].id })).claims.scope).toBe('scope1 scope2');

    const joined = await server.create('/api/organizations', { name: 'joined later' });
    expect((await refusal(client.refresh({ organization_id: joined.id }))).code).toBe('access_denied');
    await server.create(`/api/organizations/${joined.id}/users`, { userIds: [userId] });
    expect((await client.refresh({ organization_id: joined.id })).claims.aud).toBe(`urn:logto:organization:${joined.id}`);
    expect((await server.api('DELETE', `/api/organizations/${joined.id}/users/${userId}`)).status).toBe(204);
    expect(await refusal(client.refresh({ organization_id: joined.id }))).toMatchObject({ status: 403, code: 'access_denied' });
  });

  it('refuses an organization that requires MFA to a member without a second factor, and issues once the member has one', async () => {
    const client = await holder();
    const strict = await server.create('/api/organizations', { name: 'strict', isMfaRequired: true });
    expect(strict.isMfaRequired).toBe(true);
    await server.create(`/api/organizations/${strict.id}/users`, { userIds: [userId] });
    expect(await refusal(client.refresh({ organization_id: strict.id }))).toEqual({
      status: 403,
      code: 'access_denied',
      description: 'organization requires MFA but user has no MFA configured',
    });
    const factor = await server.api('POST', `/api/users/${userId}/mfa-verifications`, { body: { type: 'Totp' } });
    expect(factor.status).toBe(200);
    expect((await client.refresh({ organization_id: strict.id })).claims.aud).toBe(`urn:logto:organization:${strict.id}`);
    const factorId = ((await server.api('GET', `/api/users/${userId}/mfa-verifications`)).body as Array<{ id: string }>)[0].id;
    expect((await server.api('DELETE', `/api/users/${userId}/mfa-verifications/${factorId}`)).status).toBe(204);
    expect((await refusal(client.refresh({ organization_id: strict.id }))).code).toBe('access_denied');
  });

  it('with resource too: an API token with only the permissions of the roles held in that organization, and an organization_id claim', async () => {
    const client = await holder();
    const inOrg1 = (await client.refresh({ organization_id: orgs[0].id, resource: api })).claims;
    expect(inOrg1).toMatchObject({ aud: api, organization_id: orgs[0].id, scope: 'write:docs' });
    // org3's role gives no API permission; the user's own `read:docs` is not the organization's.
    const inOrg3 = (await client.refresh({ organization_id: orgs[2].id, resource: api })).claims;
    expect(inOrg3.organization_id).toBe(orgs[2].id);
    expect(inOrg3.scope ?? '').toBe('');
    // Without organization_id, the user's own permissions only: what an organization role gives is for that organization.
    const plain = (await client.refresh({ resource: api })).claims;
    expect(plain.scope).toBe('read:docs');
    expect(plain).not.toHaveProperty('organization_id');
    expect(await refusal(client.refresh({ organization_id: orgs[3].id, resource: api }))).toMatchObject({ status: 403, code: 'access_denied' });
  });

  it('a spent refresh token presented with organization_id is a replay: the grant ends, whatever the organization', async () => {
    const client = await holder();
    const spent = client.refreshToken;
    await client.refresh({ organization_id: orgs[0].id });
    expect(await refusal(oauth.refreshTokenGrant(config, spent, { organization_id: orgs[3].id }))).toMatchObject({ status: 400, code: 'invalid_grant' });
    // The reuse ended the grant: the token the holder got is refused too.
    expect((await refusal(client.refresh())).code).toBe('invalid_grant');
  });

  // Beyond Logto (logto#7485): issue 39, point 7.
  it('organization_id on the authorization request binds the grant: its API tokens carry the organization and only its permissions', async () => {
    const flow = await codeFlow(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid offline_access read:docs write:docs',
      resource: api,
      prompt: 'consent',
      identifier: 'member',
      password,
      extra: { organization_id: orgs[0].id },
    });
    const tokens = await redeem(server, web, flow, api);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: api, organization_id: orgs[0].id, scope: 'write:docs' });
    // Each refresh of the grant, for the resource, stays in the organization.
    const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!, { resource: api });
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ organization_id: orgs[0].id, scope: 'write:docs' });

    // An organization the user is not a member of: the application hears access_denied, and gets no code.
    const refused = await codeFlow(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid read:docs',
      resource: api,
      identifier: 'member',
      password,
      extra: { organization_id: orgs[3].id },
    });
    expect(refused.callback.searchParams.get('error')).toBe('access_denied');
    expect(refused.callback.searchParams.get('code')).toBeNull();

    // Without organization_id, a new authorization unbinds the grant: the user's own permissions again.
    const plainFlow = await codeFlow(new TestBrowser(server.url, `198.51.100.${(ip += 1)}`), {
      clientId: web.clientId,
      redirectUri,
      scope: 'openid read:docs write:docs',
      resource: api,
      identifier: 'member',
      password,
    });
    const plain = decodeJwt((await redeem(server, web, plainFlow, api)).access_token);
    expect(plain.scope).toBe('read:docs');
    expect(plain).not.toHaveProperty('organization_id');
  });
});
