import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'openid-client';

import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const api = 'https://reports.example.com/api';

/**
 * Organization applications (issue 39, point 2): machine-to-machine applications as members, with
 * MachineToMachine organization roles, as Logto's routes (`packages/core/src/routes/organization/
 * application/*`, `applications/application-organization.ts`) and the expectations of its
 * integration test `api/organization/organization-application.test.ts`; and their organization
 * tokens by `client_credentials` (Logto's `oidc/grants/client-credentials.ts`).
 */
describe('organization applications', () => {
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer('organization-applications', hookTestEnv);
    await subscribe(server, receiver, ['Organization.Membership.Updated']);
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  const machine = async (name: string) =>
    (await server.create('/api/applications', { name, type: 'MachineToMachine' })) as { id: string; secret: string; name: string };
  const post = (path: string, body: unknown) => server.api('POST', path, { body });

  it('adds, lists (with their roles, paged and searched), and removes machine-to-machine members', async () => {
    const org = await server.create('/api/organizations', { name: 'Acme' });
    const apps = [];
    for (const name of ['reporting bot', 'billing bot', 'audit bot']) apps.push(await machine(name));
    expect((await post(`/api/organizations/${org.id}/applications`, { applicationIds: apps.map(({ id }) => id) })).status).toBe(201);

    const all = await server.api('GET', `/api/organizations/${org.id}/applications`);
    expect(all.status).toBe(200);
    expect(all.body.map(({ id }: { id: string }) => id).sort()).toEqual(apps.map(({ id }) => id).sort());
    expect(all.body[0]).toMatchObject({ type: 'MachineToMachine', organizationRoles: [] });
    expect(all.body[0]).not.toHaveProperty('secret');
    const firstPage = await server.api('GET', `/api/organizations/${org.id}/applications?page=1&page_size=2`);
    const secondPage = await server.api('GET', `/api/organizations/${org.id}/applications?page=2&page_size=2`);
    expect(firstPage.headers.get('total-number')).toBe('3');
    expect([...firstPage.body, ...secondPage.body].map(({ id }: { id: string }) => id).sort()).toEqual(apps.map(({ id }) => id).sort());
    const found = await server.api('GET', `/api/organizations/${org.id}/applications?q=billing`);
    expect(found.body.map(({ id }: { id: string }) => id)).toEqual([apps[1].id]);

    const role = await server.create('/api/organization-roles', { name: 'bot', type: 'MachineToMachine' });
    expect((await post(`/api/organizations/${org.id}/applications/${apps[0].id}/roles`, { organizationRoleIds: [role.id] })).status).toBe(201);
    const [withRole] = (await server.api('GET', `/api/organizations/${org.id}/applications?q=reporting`)).body;
    expect(withRole.organizationRoles).toEqual([{ id: role.id, name: 'bot' }]);
    const roles = await server.api('GET', `/api/organizations/${org.id}/applications/${apps[0].id}/roles`);
    expect(roles.body.map(({ id }: { id: string }) => id)).toEqual([role.id]);
    const organizations = await server.api('GET', `/api/applications/${apps[0].id}/organizations`);
    expect(organizations.body).toEqual([expect.objectContaining({ id: org.id, name: 'Acme', organizationRoles: [{ id: role.id, name: 'bot' }] })]);

    expect((await server.api('DELETE', `/api/organizations/${org.id}/applications/${apps[0].id}/roles/${role.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/organizations/${org.id}/applications/${apps[0].id}/roles`)).body).toEqual([]);
    expect((await server.api('DELETE', `/api/organizations/${org.id}/applications/${apps[0].id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/applications/${apps[0].id}/organizations`)).body).toEqual([]);
    // PUT replaces the whole set (204, as Logto's generic relation).
    expect((await server.api('PUT', `/api/organizations/${org.id}/applications`, { body: { applicationIds: [apps[2].id] } })).status).toBe(204);
    expect((await server.api('GET', `/api/organizations/${org.id}/applications`)).body.map(({ id }: { id: string }) => id)).toEqual([apps[2].id]);
  });

  it('refuses as Logto: an empty list 400, an unknown organization 422, a non machine-to-machine application 422, a User role 422; a role of a non-member 422; each writes nothing', async () => {
    const org = await server.create('/api/organizations', { name: 'Strict' });
    expect((await post(`/api/organizations/${org.id}/applications`, { applicationIds: [] })).status).toBe(400);
    const app = await machine('strict bot');
    const unknownOrg = await post('/api/organizations/no-such-org/applications', { applicationIds: [app.id] });
    expect({ status: unknownOrg.status, code: unknownOrg.body.code }).toEqual({ status: 422, code: 'entity.relation_foreign_key_not_found' });
    expect((await server.api('DELETE', `/api/organizations/no-such-org/applications/${app.id}`)).status).toBe(404);

    const native = await server.create('/api/applications', {
      name: 'native',
      type: 'Native',
      oidcClientMetadata: { redirectUris: ['com.example.app://callback'], postLogoutRedirectUris: [] },
    });
    const wrongType = await post(`/api/organizations/${org.id}/applications`, { applicationIds: [app.id, native.id] });
    expect({ status: wrongType.status, code: wrongType.body.code }).toEqual({ status: 422, code: 'entity.db_constraint_violated' });
    expect((await server.api('GET', `/api/organizations/${org.id}/applications`)).body).toEqual([]);

    const userRole = await server.create('/api/organization-roles', { name: 'person only' });
    const strangers = await post(`/api/organizations/${org.id}/applications/${app.id}/roles`, { organizationRoleIds: [userRole.id] });
    expect({ status: strangers.status, code: strangers.body.code }).toEqual({ status: 422, code: 'organization.require_membership' });
    expect((await server.api('DELETE', `/api/organizations/no-such-org/applications/${app.id}/roles/${userRole.id}`)).status).toBe(422);

    await post(`/api/organizations/${org.id}/applications`, { applicationIds: [app.id] });
    const userType = await post(`/api/organizations/${org.id}/applications/${app.id}/roles`, { organizationRoleIds: [userRole.id] });
    expect({ status: userType.status, code: userType.body.code }).toEqual({ status: 422, code: 'entity.db_constraint_violated' });
    const unknownRole = await post(`/api/organizations/${org.id}/applications/${app.id}/roles`, { organizationRoleIds: ['no-such-role'] });
    expect({ status: unknownRole.status, code: unknownRole.body.code }).toEqual({ status: 422, code: 'entity.relation_foreign_key_not_found' });
    expect((await server.api('GET', `/api/organizations/${org.id}/applications/${app.id}/roles`)).body).toEqual([]);
    // And a machine role is not for a person.
    const machineRole = await server.create('/api/organization-roles', { name: 'machine only', type: 'MachineToMachine' });
    const user = await server.create('/api/users', { username: 'person' });
    await post(`/api/organizations/${org.id}/users`, { userIds: [user.id] });
    expect((await post(`/api/organizations/${org.id}/users/${user.id}/roles`, { organizationRoleIds: [machineRole.id] })).body.code).toBe(
      'entity.db_constraint_violated',
    );
  });

  it('announces Organization.Membership.Updated with addedApplicationIds and removedApplicationIds, as Logto', async () => {
    const org = await server.create('/api/organizations', { name: 'Announced' });
    const [one, two] = [await machine('one'), await machine('two')];
    const membership = (received: Array<{ body: Record<string, unknown> }>) =>
      received.map(({ body }) =>
        Object.fromEntries(
          Object.entries(body).filter(([key]) => ['event', 'organizationId', 'addedApplicationIds', 'removedApplicationIds', 'addedUserIds'].includes(key)),
        ),
      );
    expect(membership(await eventsDuring(server, receiver, () => post(`/api/organizations/${org.id}/applications`, { applicationIds: [one.id] })))).toEqual([
      { event: 'Organization.Membership.Updated', organizationId: org.id, addedApplicationIds: [one.id] },
    ]);
    expect(
      membership(
        await eventsDuring(server, receiver, () => server.api('PUT', `/api/organizations/${org.id}/applications`, { body: { applicationIds: [two.id] } })),
      ),
    ).toEqual([{ event: 'Organization.Membership.Updated', organizationId: org.id, addedApplicationIds: [two.id], removedApplicationIds: [one.id] }]);
    expect(membership(await eventsDuring(server, receiver, () => server.api('DELETE', `/api/organizations/${org.id}/applications/${two.id}`)))).toEqual([
      { event: 'Organization.Membership.Updated', organizationId: org.id, removedApplicationIds: [two.id] },
    ]);
  });

  it('deleting the application or the organization removes its memberships and roles', async () => {
    const org = await server.create('/api/organizations', { name: 'Cascade' });
    const app = await machine('short-lived');
    const role = await server.create('/api/organization-roles', { name: 'cascading', type: 'MachineToMachine' });
    await post(`/api/organizations/${org.id}/applications`, { applicationIds: [app.id] });
    await post(`/api/organizations/${org.id}/applications/${app.id}/roles`, { organizationRoleIds: [role.id] });
    expect((await server.api('DELETE', `/api/applications/${app.id}`)).status).toBe(204);
    const { db } = server.database;
    expect(await db.collection('organization_applications').countDocuments({ applicationId: app.id })).toBe(0);
    expect(await db.collection('organization_application_roles').countDocuments({ applicationId: app.id })).toBe(0);

    const other = await machine('stays');
    await post(`/api/organizations/${org.id}/applications`, { applicationIds: [other.id] });
    await post(`/api/organizations/${org.id}/applications/${other.id}/roles`, { organizationRoleIds: [role.id] });
    expect((await server.api('DELETE', `/api/organizations/${org.id}`)).status).toBe(204);
    expect(await db.collection('organization_applications').countDocuments({ organizationId: org.id })).toBe(0);
    expect(await db.collection('organization_application_roles').countDocuments({ organizationId: org.id })).toBe(0);
  });

  describe('organization tokens by client_credentials', () => {
    let org: { id: string };
    let bot: { id: string; secret: string };
    let config: oauth.Configuration;

    beforeAll(async () => {
      org = await server.create('/api/organizations', { name: 'Tokens' });
      bot = await machine('token bot');
      config = await server.discover(bot.id, bot.secret);
      const resource = await server.create('/api/resources', { name: 'Reports', indicator: api });
      const read = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'read:reports' });
      const write = await server.create(`/api/resources/${resource.id}/scopes`, { name: 'write:reports' });
      const [export_, archive] = [
        await server.create('/api/organization-scopes', { name: 'export' }),
        await server.create('/api/organization-scopes', { name: 'archive' }),
      ];
      const role = await server.create('/api/organization-roles', {
        name: 'exporter',
        type: 'MachineToMachine',
        organizationScopeIds: [export_.id],
        resourceScopeIds: [write.id],
      });
      await server.create('/api/organization-roles', { name: 'archiver', type: 'MachineToMachine', organizationScopeIds: [archive.id] });
      await post(`/api/organizations/${org.id}/applications`, { applicationIds: [bot.id] });
      await post(`/api/organizations/${org.id}/applications/${bot.id}/roles`, { organizationRoleIds: [role.id] });
      // The application's own role gives read:reports, outside any organization.
      const own = await server.create('/api/roles', { name: 'report reader', type: 'MachineToMachine', scopeIds: [read.id] });
      await post(`/api/applications/${bot.id}/roles`, { roleIds: [own.id] });
    });

    it('organization_id without resource: a JWT for urn:logto:organization:<id> with the permissions its roles give there that were asked for', async () => {
      const tokens = await oauth.clientCredentialsGrant(config, { organization_id: org.id, scope: 'export archive' });
      const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${server.url}/oidc/jwks`)), {
        issuer: `${server.url}/oidc`,
        audience: `urn:logto:organization:${org.id}`,
      });
      expect(payload).toMatchObject({ sub: bot.id, client_id: bot.id, scope: 'export' });
      expect(tokens.scope).toBe('export');
      expect(tokens.expires_in).toBe(3600);
    });

    it('organization_id with resource: only what its organization roles give for the resource, and an organization_id claim', async () => {
      const tokens = await oauth.clientCredentialsGrant(config, { organization_id: org.id, resource: api, scope: 'read:reports write:reports' });
      expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: api, organization_id: org.id, scope: 'write:reports' });
      const plain = await oauth.clientCredentialsGrant(config, { resource: api, scope: 'read:reports write:reports' });
      const claims = decodeJwt(plain.access_token);
      expect(claims.scope).toBe('read:reports');
      expect(claims).not.toHaveProperty('organization_id');
    });

    it('refuses a non-member with access_denied (403), and a member removed from its next token on', async () => {
      const stranger = await machine('stranger bot');
      const strangerConfig = await server.discover(stranger.id, stranger.secret);
      await expect(oauth.clientCredentialsGrant(strangerConfig, { organization_id: org.id })).rejects.toMatchObject({
        status: 403,
        error: 'access_denied',
        error_description: 'app has not associated with the organization',
      });
      await expect(oauth.clientCredentialsGrant(strangerConfig, { organization_id: org.id, resource: api })).rejects.toMatchObject({ status: 403 });
      const leaving = await machine('leaving bot');
      await post(`/api/organizations/${org.id}/applications`, { applicationIds: [leaving.id] });
      const leavingConfig = await server.discover(leaving.id, leaving.secret);
      expect((await oauth.clientCredentialsGrant(leavingConfig, { organization_id: org.id })).access_token).toBeDefined();
      expect((await server.api('DELETE', `/api/organizations/${org.id}/applications/${leaving.id}`)).status).toBe(204);
      await expect(oauth.clientCredentialsGrant(leavingConfig, { organization_id: org.id })).rejects.toMatchObject({ status: 403, error: 'access_denied' });
    });
  });
});
