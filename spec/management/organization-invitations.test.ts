import { eventsDuring, hookTestEnv, subscribe } from '../support/hooks.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { bodyOf, startMailCatcher, type MailCatcher } from '../support/smtp.js';
import { startTestServer, type TestServer } from '../support/server.js';

const hour = 3_600_000;

/**
 * Organization invitations (issue 39, point 4), as Logto's routes/organization-invitation/index.ts
 * and libraries/organization-invitation.ts, and its integration tests
 * api/organization/organization-invitation*.test.ts: statuses Pending, Accepted, Expired (computed
 * when read), Revoked; one pending per invitee and organization; acceptance that adds the member and
 * the invited roles at once, announced; sending through the email connector under the send limits.
 */
describe('organization invitations', () => {
  let server: TestServer;
  let mail: MailCatcher;
  let receiver: Receiver;
  let org: { id: string };
  let role: { id: string; name: string };

  beforeAll(async () => {
    mail = await startMailCatcher();
    receiver = await startReceiver();
    server = await startTestServer('organization-invitations', { ...hookTestEnv, SMTP_URL: mail.url, EMAIL_FROM: 'Acme <no-reply@acme.test>' });
    await subscribe(server, receiver, ['Organization.Membership.Updated', 'Organization.Membership.Roles.Updated']);
    org = await server.create('/api/organizations', { name: 'Invitech' });
    role = await server.create('/api/organization-roles', { name: 'editor' });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await mail.close();
  });

  const invite = (body: Record<string, unknown>) =>
    server.api('POST', '/api/organization-invitations', { body: { organizationId: org.id, expiresAt: Date.now() + hour, ...body } });
  const accept = (id: string, acceptedUserId?: string) =>
    server.api('PUT', `/api/organization-invitations/${id}/status`, { body: { status: 'Accepted', ...(acceptedUserId && { acceptedUserId }) } });

  it('makes an invitation with the roles it gives, lists and reads it; one pending per invitee and organization', async () => {
    const made = await invite({ invitee: 'Ann@Example.com', organizationRoleIds: [role.id] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      invitee: 'ann@example.com',
      organizationId: org.id,
      status: 'Pending',
      inviterId: null,
      acceptedUserId: null,
      organizationRoles: [{ id: role.id, name: 'editor' }],
    });
    expect((await server.api('GET', `/api/organization-invitations/${made.body.id}`)).body).toEqual(made.body);
    expect(
      (await server.api('GET', `/api/organization-invitations?organizationId=${org.id}&invitee=ann@example.com`)).body.map(({ id }: { id: string }) => id),
    ).toEqual([made.body.id]);
    const again = await invite({ invitee: 'ann@example.com' });
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 422, code: 'entity.unique_integrity_violation' });
  });

  it('refuses bad input as Logto, writing nothing: a past expiresAt 400, an unknown organization or role 422, a member 422, a bad address 400', async () => {
    const count = async () => (await server.api('GET', '/api/organization-invitations?invitee=bob@example.com')).body.length;
    expect((await invite({ invitee: 'bob@example.com', expiresAt: Date.now() - 1 })).status).toBe(400);
    expect((await invite({ invitee: 'bob@example.com', organizationId: 'no-such-org' })).body.code).toBe('entity.relation_foreign_key_not_found');
    expect((await invite({ invitee: 'bob@example.com', organizationRoleIds: ['no-such-role'] })).body.code).toBe('entity.relation_foreign_key_not_found');
    expect((await invite({ invitee: 'not an address' })).status).toBe(400);
    const member = await server.create('/api/users', { username: 'already', primaryEmail: 'member@example.com' });
    await server.create(`/api/organizations/${org.id}/users`, { userIds: [member.id] });
    const memberInvite = await invite({ invitee: 'member@example.com' });
    expect({ status: memberInvite.status, code: memberInvite.body.code }).toEqual({ status: 422, code: 'request.invalid_input' });
    expect(await count()).toBe(0);
  });

  it('acceptance adds the member and the invited roles in one change, announced; only by the invitee, only once', async () => {
    const carol = await server.create('/api/users', { username: 'carol', primaryEmail: 'carol@example.com' });
    const mallory = await server.create('/api/users', { username: 'mallory', primaryEmail: 'mallory@example.com' });
    const { body: invitation } = await invite({ invitee: 'carol@example.com', organizationRoleIds: [role.id] });
    expect((await accept(invitation.id)).status).toBe(422);
    const nobody = await accept(invitation.id, 'no-such-user');
    expect({ status: nobody.status, code: nobody.body.code }).toEqual({ status: 404, code: 'entity.not_found' });
    const wrongUser = await accept(invitation.id, mallory.id);
    expect({ status: wrongUser.status, code: wrongUser.body.code }).toEqual({ status: 422, code: 'request.invalid_input' });

    let answer: Awaited<ReturnType<typeof accept>> | undefined;
    const events = await eventsDuring(server, receiver, async () => (answer = await accept(invitation.id, carol.id)));
    expect(answer!.status).toBe(200);
    expect(answer!.body).toMatchObject({ status: 'Accepted', acceptedUserId: carol.id });
    expect(events.map(({ body }) => [body.event, body.addedUserIds ?? body.addedRoleIds])).toEqual([
      ['Organization.Membership.Updated', [carol.id]],
      ['Organization.Membership.Roles.Updated', [role.id]],
    ]);
    const members = (await server.api('GET', `/api/organizations/${org.id}/users`)).body as Array<{ id: string; organizationRoles: unknown[] }>;
    expect(members.find(({ id }) => id === carol.id)?.organizationRoles).toEqual([{ id: role.id, name: 'editor' }]);
    expect((await accept(invitation.id, carol.id)).body.code).toBe('request.invalid_input');
    expect((await server.api('PUT', `/api/organization-invitations/${invitation.id}/status`, { body: { status: 'Revoked' } })).status).toBe(422);
  });

  it('two acceptances at once: one wins, the member is added once', async () => {
    const dave = await server.create('/api/users', { username: 'dave', primaryEmail: 'dave@example.com' });
    const { body: invitation } = await invite({ invitee: 'dave@example.com', organizationRoleIds: [role.id] });
    const answers = await Promise.all([accept(invitation.id, dave.id), accept(invitation.id, dave.id), accept(invitation.id, dave.id)]);
    expect(answers.map(({ status }) => status).sort()).toEqual([200, 422, 422]);
    const { db } = server.database;
    expect(await db.collection('organization_users').countDocuments({ organizationId: org.id, userId: dave.id })).toBe(1);
    expect(await db.collection('organization_user_roles').countDocuments({ organizationId: org.id, userId: dave.id })).toBe(1);
  });

  it('says Expired once past its time, refuses to settle it, and lets a new one be made; a revoked one stays revoked', async () => {
    const erin = await server.create('/api/users', { username: 'erin', primaryEmail: 'erin@example.com' });
    const { body: short } = await invite({ invitee: 'erin@example.com' });
    // Its time passes (set in the store, so that no timing of a loaded machine matters): still Pending there.
    await server.database.db.collection('organization_invitations').updateOne({ _id: short.id }, { $set: { expiresAt: Date.now() - 1 } });
    expect((await server.api('GET', `/api/organization-invitations/${short.id}`)).body.status).toBe('Expired');
    expect((await accept(short.id, erin.id)).status).toBe(422);
    const { body: renewed, status } = await invite({ invitee: 'erin@example.com' });
    expect(status).toBe(201);
    const revoked = await server.api('PUT', `/api/organization-invitations/${renewed.id}/status`, { body: { status: 'Revoked' } });
    expect(revoked.body.status).toBe('Revoked');
    expect((await accept(renewed.id, erin.id)).status).toBe(422);
    expect((await server.api('DELETE', `/api/organization-invitations/${renewed.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/organization-invitations/${renewed.id}`)).status).toBe(404);
  });

  it('a deleted role is no longer given by a pending invitation', async () => {
    const temporary = await server.create('/api/organization-roles', { name: 'temporary' });
    const { body: invitation } = await invite({ invitee: 'gina@example.com', organizationRoleIds: [temporary.id, role.id] });
    expect((await server.api('DELETE', `/api/organization-roles/${temporary.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/organization-invitations/${invitation.id}`)).body.organizationRoles).toEqual([{ id: role.id, name: 'editor' }]);
    const stored = await server.database.db.collection('organization_invitations').findOne({ _id: invitation.id });
    expect(stored?.organizationRoleIds).toEqual([role.id]);
  });

  it('sends the invitation through the email connector with its link, sends it again, and stops at the send limit (429)', async () => {
    const { body: invitation } = await invite({ invitee: 'frank@example.com', messagePayload: { link: 'https://app.example.com/join?invitation=abc' } });
    const first = await waitForMail('frank@example.com', 1);
    expect(bodyOf(first.raw)).toContain('https://app.example.com/join?invitation=abc');
    expect(bodyOf(first.raw)).toContain('Invitech');
    const statuses = [];
    for (let i = 0; i < 5; i += 1)
      statuses.push(
        (await server.api('POST', `/api/organization-invitations/${invitation.id}/message`, { body: { link: 'https://app.example.com/join' } })).status,
      );
    // Five per address and hour, the first included.
    expect(statuses).toEqual([204, 204, 204, 204, 429]);
  });

  async function waitForMail(to: string, count: number) {
    for (let i = 0; i < 100; i += 1) {
      const sent = mail.messages.filter((message) => message.to.includes(to));
      if (sent.length >= count) return sent[count - 1]!;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no message to ${to}`);
  }
});
