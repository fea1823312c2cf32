import * as oauth from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';

import { startTestServer, type TestServer } from '../support/server.js';

const grantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * An impersonated organization token (issue 39, point 1): RFC 8693 token exchange with
 * `organization_id`, as Logto's token exchange takes it: the organization's own token, or with
 * `resource` the resource's permissions that the user's roles in that organization give.
 */
describe('impersonation into an organization', () => {
  let server: TestServer;
  let config: oauth.Configuration;
  let org: { id: string };
  let user: { id: string };
  const api = 'https://tickets.test';

  beforeAll(async () => {
    server = await startTestServer('organization-exchange');
    const post = server.create;
    const resource = await post('/api/resources', { name: 'Tickets', indicator: api });
    const read = await post(`/api/resources/${resource.id}/scopes`, { name: 'read:tickets' });
    const write = await post(`/api/resources/${resource.id}/scopes`, { name: 'write:tickets' });
    const triage = await post('/api/organization-scopes', { name: 'triage' });
    await post('/api/organization-scopes', { name: 'billing' });
    const agent = await post('/api/organization-roles', { name: 'agent', organizationScopeIds: [triage.id], resourceScopeIds: [write.id] });
    user = await post('/api/users', { username: 'agent_smith' });
    // Her own role gives read:tickets, outside any organization.
    const reader = await post('/api/roles', { name: 'Ticket reader', scopeIds: [read.id] });
    await post(`/api/users/${user.id}/roles`, { roleIds: [reader.id] });
    org = await post('/api/organizations', { name: 'Helpdesk' });
    await post(`/api/organizations/${org.id}/users`, { userIds: [user.id] });
    await post(`/api/organizations/${org.id}/users/${user.id}/roles`, { organizationRoleIds: [agent.id] });
    const console_ = await post('/api/applications', { name: 'Support console', type: 'SPA', customClientMetadata: { allowTokenExchange: true } });
    config = await server.discover(console_.id);
  });
  afterAll(async () => {
    await server.close();
  });

  const subjectToken = async (userId: string) => (await server.create('/api/subject-tokens', { userId, context: { ticketId: 'T-9' } })).subjectToken as string;
  const exchange = (subject: string, parameters: Record<string, string>) =>
    oauth.genericGrantRequest(config, grantType, { subject_token: subject, subject_token_type: accessTokenType, ...parameters });

  it('organization_id without resource: a token for urn:logto:organization:<id> with the permissions her roles give there, naming the impersonation', async () => {
    const tokens = await exchange(await subjectToken(user.id), { organization_id: org.id, scope: 'triage billing' });
    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`http://localhost:${server.port}/oidc/jwks`)), {
      issuer: server.issuer,
      audience: `urn:logto:organization:${org.id}`,
    });
    expect(payload).toMatchObject({ sub: user.id, scope: 'triage', impersonation_id: expect.any(String) });
    expect(tokens.scope).toBe('triage');
  });

  it('organization_id with resource: only what her roles in that organization give, and an organization_id claim', async () => {
    const inOrg = await exchange(await subjectToken(user.id), { organization_id: org.id, resource: api, scope: 'read:tickets write:tickets' });
    expect(decodeJwt(inOrg.access_token)).toMatchObject({ aud: api, organization_id: org.id, scope: 'write:tickets' });
    const plain = await exchange(await subjectToken(user.id), { resource: api, scope: 'read:tickets write:tickets' });
    expect(decodeJwt(plain.access_token)).toMatchObject({ aud: api, scope: 'read:tickets' });
    expect(decodeJwt(plain.access_token)).not.toHaveProperty('organization_id');
  });

  it('refuses an organization she is not a member of with access_denied (403), audited, and leaves the subject token unspent', async () => {
    const other = await server.create('/api/organizations', { name: 'Elsewhere' });
    const subject = await subjectToken(user.id);
    await expect(exchange(subject, { organization_id: other.id })).rejects.toMatchObject({ status: 403, error: 'access_denied' });
    const failed = await server.database.db.collection('impersonations').findOne({ kind: 'exchange.failed', targetUserId: user.id });
    expect(failed?.failureReason).toBe('user is not a member of the organization');
    // Refused before the subject token was spent: the same one still works once.
    expect((await exchange(subject, { organization_id: org.id })).access_token).toBeDefined();
    await expect(exchange(subject, { organization_id: org.id })).rejects.toMatchObject({ error: 'invalid_request' });
  });
});
