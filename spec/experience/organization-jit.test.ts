import { eventsDuring, subscribe } from '../support/hooks.js';
import type { TestServer } from '../support/server.js';
import { experienceWorld, strong } from './world.js';

/**
 * Just-in-time membership (issue 39, point 5): an organization's email domains and just-in-time
 * roles, as Logto's routes/organization/jit/*; a new account whose email address the interaction
 * proved at one of the domains joins the organization with those roles, announced; never an
 * account made through the Management API.
 */
describe('just-in-time organization membership', () => {
  const { world, newSignIn, codeFrom } = experienceWorld('organization-jit');
  let server: TestServer;
  let org: { id: string };
  let role: { id: string };

  beforeAll(async () => {
    ({ server } = world);
    org = await server.create('/api/organizations', { name: 'Domain Corp' });
    role = await server.create('/api/organization-roles', { name: 'staff' });
    await subscribe(server, world.receiver, ['Organization.Membership.Updated', 'Organization.Membership.Roles.Updated'], 'jit hook');
  });

  const domains = (id = org.id) => `/api/organizations/${id}/jit/email-domains`;

  it('manages email domains and just-in-time roles as Logto', async () => {
    const added = await server.api('POST', domains(), { body: { emailDomain: 'Corp.Example' } });
    expect({ status: added.status, body: added.body }).toEqual({ status: 201, body: { organizationId: org.id, emailDomain: 'corp.example' } });
    expect((await server.api('POST', domains(), { body: { emailDomain: 'corp.example' } })).body.code).toBe('entity.unique_integrity_violation');
    expect((await server.api('POST', domains(), { body: { emailDomain: 'not a domain' } })).status).toBe(400);
    expect((await server.api('POST', domains('no-such-org'), { body: { emailDomain: 'x.example' } })).status).toBe(404);
    expect((await server.api('PUT', domains(), { body: { emailDomains: ['corp.example', 'subsidiary.example'] } })).status).toBe(204);
    expect((await server.api('GET', domains())).body.map(({ emailDomain }: { emailDomain: string }) => emailDomain)).toEqual([
      'corp.example',
      'subsidiary.example',
    ]);
    expect((await server.api('DELETE', `${domains()}/subsidiary.example`)).status).toBe(204);
    expect((await server.api('DELETE', `${domains()}/subsidiary.example`)).status).toBe(404);

    const jitRoles = `/api/organizations/${org.id}/jit/roles`;
    expect((await server.api('POST', jitRoles, { body: { organizationRoleIds: [role.id] } })).status).toBe(201);
    expect((await server.api('GET', jitRoles)).body.map(({ id }: { id: string }) => id)).toEqual([role.id]);
    const machine = await server.create('/api/organization-roles', { name: 'robot', type: 'MachineToMachine' });
    expect((await server.api('POST', jitRoles, { body: { organizationRoleIds: [machine.id] } })).body.code).toBe('entity.db_constraint_violated');
  });

  it('a registration with a proved address at the domain joins, with the just-in-time roles, announced; the Management API adds nobody', async () => {
    const { browser } = await newSignIn();
    let userId = '';
    const events = await eventsDuring(server, world.receiver, async () => {
      await browser.json('PUT', '/api/experience', { interactionEvent: 'Register' });
      const identifier = { type: 'email', value: 'new.hire@corp.example' };
      const sent = await browser.json('POST', '/api/experience/verification/verification-code', { identifier, interactionEvent: 'Register' });
      const code = await world.mail.nextCode('new.hire@corp.example');
      const verified = await browser.json('POST', '/api/experience/verification/verification-code/verify', {
        identifier,
        verificationId: sent.body.verificationId,
        code,
      });
      expect((await browser.json('POST', '/api/experience/identification', { verificationId: verified.body.verificationId })).status).toBe(201);
      expect((await browser.json('POST', '/api/experience/profile', { type: 'password', value: strong })).status).toBe(204);
      const submitted = await browser.json('POST', '/api/experience/submit');
      expect(submitted.status).toBe(200);
      expect(await codeFrom(browser, submitted.body.redirectTo)).toEqual(expect.any(String));
      [{ id: userId }] = (await server.api('GET', '/api/users?search.primaryEmail=new.hire@corp.example')).body;
    });
    const about = events.filter(({ body }) => body.organizationId === org.id).map(({ body }) => [body.event, body.addedUserIds ?? body.addedRoleIds]);
    expect(about).toEqual([
      ['Organization.Membership.Updated', [userId]],
      ['Organization.Membership.Roles.Updated', [role.id]],
    ]);
    const [membership] = (await server.api('GET', `/api/users/${userId}/organizations`)).body;
    expect(membership).toMatchObject({ id: org.id, organizationRoles: [{ id: role.id, name: 'staff' }] });

    // An administrator's new user at the same domain is not made a member.
    const made = await server.create('/api/users', { primaryEmail: 'admin.made@corp.example' });
    expect((await server.api('GET', `/api/users/${made.id}/organizations`)).body).toEqual([]);
  });
});
