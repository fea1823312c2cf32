import { ApiError, asBrokenForeignKey, assertThat, isDuplicateKeyError, notFound } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { email, emailKey } from '../../lib/identifiers.js';
import { generateId } from '../../lib/ids.js';
import type { InvitationDocument } from '../../lib/store/queries/invitations.js';
import type { Queries } from '../../lib/store/queries/index.js';
import { createOwnerLocks } from '../../lib/store/owner-lock.js';
import { joinOrganization } from '../../lib/store/jit-organizations.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams, idSchema } from '../schemas/common.js';

const invitationResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    inviterId: { type: ['string', 'null'] },
    invitee: { type: 'string' },
    acceptedUserId: { type: ['string', 'null'] },
    organizationId: { type: 'string' },
    status: { enum: ['Pending', 'Accepted', 'Expired', 'Revoked'] },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    expiresAt: { type: 'integer' },
    organizationRoles: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'] } },
  },
  required: ['id', 'inviterId', 'invitee', 'acceptedUserId', 'organizationId', 'status', 'createdAt', 'updatedAt', 'expiresAt', 'organizationRoles'],
} as const;

/** Logto's `sendMessagePayloadGuard`: what the email may carry (the link to accept by, above all); strings only. */
const messagePayload = {
  type: 'object',
  properties: { link: { type: 'string', maxLength: 2048 }, code: { type: 'string', maxLength: 256 }, locale: { type: 'string', maxLength: 64 } },
  additionalProperties: { type: 'string', maxLength: 2048 },
} as const;

/** What an invitation email says: the organization, who invites, and where to accept. */
export interface InvitationMessage {
  organizationName: string;
  inviterName?: string | undefined;
  link?: string | undefined;
}

/** Logto's `request.invalid_input`, at 422 where Logto answers it so. */
const invalid = (message: string, status = 422) => new ApiError('request.invalid_input', message, undefined, status);

/** Shown as Logto's `organizationInvitationEntityGuard`: with the organization roles it gives, by id and name. */
async function present(queries: Queries, invitations: InvitationDocument[]) {
  const names = new Map(
    (await queries.organizationRoles.findByIds([...new Set(invitations.flatMap(({ organizationRoleIds }) => organizationRoleIds))])).map((role) => [
      role._id,
      role.name,
    ]),
  );
  return invitations.map(({ _id, organizationRoleIds, ...rest }) => ({
    id: _id,
    ...rest,
    organizationRoles: organizationRoleIds.flatMap((id) => (names.has(id) ? [{ id, name: names.get(id)! }] : [])),
  }));
}

/**
 * Organization invitations as Logto's (routes/organization-invitation/index.ts, libraries/
 * organization-invitation.ts, RFC 0003): made for an email address with the roles it will give,
 * optionally sent by email (and sent again) through the email connector under the send limits;
 * `Expired` computed when read; accepted (by the user whose primary email it was sent to, which
 * adds the member and the roles in one unit of work, announced as membership changes) or revoked,
 * once. One pending invitation per invitee and organization.
 */
export function invitationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;
  const { invitations } = queries;
  const withOwnerLock = createOwnerLocks(deps.database.db);

  async function send(invitation: Pick<InvitationDocument, 'invitee' | 'organizationId' | 'inviterId'>, payload: { link?: string }) {
    assertThat(
      deps.sendInvitation,
      () => new ApiError('connector.not_found', 'no email connector is configured: the sign-in experience is off', undefined, 501),
    );
    const organization = await queries.organizations.findByIdOrThrow(invitation.organizationId);
    const inviter = invitation.inviterId ? await queries.users.findById(invitation.inviterId) : null;
    await deps.sendInvitation(invitation.invitee, {
      organizationName: organization.name,
      inviterName: inviter?.name ?? inviter?.username ?? undefined,
      link: payload.link,
    });
  }

  router.get(
    '/organization-invitations',
    guard({
      query: {
        type: 'object',
        properties: { organizationId: idSchema, inviterId: idSchema, invitee: { type: 'string', maxLength: 320 } },
        additionalProperties: false,
      },
      response: { type: 'array', items: invitationResponse },
    }),
    async (ctx) => {
      ctx.body = await present(queries, await invitations.find(ctx.guard.query));
    },
  );

  router.get('/organization-invitations/:id', guard({ params: idParams('id'), response: invitationResponse }), async (ctx) => {
    const invitation = await invitations.findById(ctx.guard.params.id);
    assertThat(invitation, () => notFound('organization invitation', ctx.guard.params.id));
    ctx.body = (await present(queries, [invitation]))[0];
  });

  router.post(
    '/organization-invitations',
    guard({
      body: {
        type: 'object',
        properties: {
          inviterId: { anyOf: [idSchema, { type: 'null' }] },
          invitee: email,
          organizationId: idSchema,
          expiresAt: { type: 'integer', minimum: 0 },
          organizationRoleIds: { type: 'array', items: idSchema, maxItems: 100 },
          messagePayload: { anyOf: [messagePayload, { const: false }] },
        },
        required: ['invitee', 'organizationId', 'expiresAt'],
        additionalProperties: false,
      },
      response: invitationResponse,
      status: 201,
    }),
    async (ctx) => {
      const { messagePayload: payload = false, organizationRoleIds = [], inviterId = null, ...body } = ctx.guard.body;
      const now = Date.now();
      // Logto's answer here is 400.
      assertThat(body.expiresAt > now, () => invalid('The value of `expiresAt` must be in the future.', 400));
      const invitee = emailKey(body.invitee);
      let invitation: InvitationDocument | undefined;
      await deps.write(originOf(ctx), async ({ record }) => {
        await queries.organizations.findByIdOrThrow(body.organizationId).catch(asBrokenForeignKey);
        if (inviterId) await queries.users.findByIdOrThrow(inviterId).catch(asBrokenForeignKey);
        const roles = await queries.organizationRoles.assertAllExist([...new Set(organizationRoleIds)]).catch(asBrokenForeignKey);
        const machine = roles.find(({ type }) => type === 'MachineToMachine');
        assertThat(!machine, () => new ApiError('entity.db_constraint_violated', `organization role \`${machine!.name}\` is for machines, not members`));
        // One look at the account of that address, one at its membership: not the organization's whole member list.
        const [account] = await queries.users.find({ emailKey: invitee }, { skip: 0, limit: 1 });
        assertThat(!account || !(await queries.links.organizationUsers.has(body.organizationId, account._id)), () =>
          invalid('The invitee is already a member of the organization.'),
        );
        await invitations.expirePast(invitee, body.organizationId, now);
        invitation = {
          _id: generateId(),
          inviterId,
          invitee,
          organizationId: body.organizationId,
          organizationRoleIds: roles.map(({ _id }) => _id),
          status: 'Pending',
          acceptedUserId: null,
          createdAt: now,
          updatedAt: now,
          expiresAt: body.expiresAt,
        };
        try {
          await invitations.insert(invitation);
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
          throw new ApiError('entity.unique_integrity_violation', 'a pending invitation for this invitee and organization exists already');
        }
        // Sent before the unit commits, as Logto's: an email that cannot go leaves no invitation.
        if (payload) await send(invitation, payload);
        record({ entity: 'OrganizationInvitation', action: 'created', id: invitation._id, data: (await present(queries, [invitation]))[0] });
      });
      ctx.body = (await present(queries, [invitation!]))[0];
      ctx.status = 201;
    },
  );

  router.post('/organization-invitations/:id/message', guard({ params: idParams('id'), body: messagePayload, status: 204 }), async (ctx) => {
    const invitation = await invitations.findById(ctx.guard.params.id);
    assertThat(invitation, () => notFound('organization invitation', ctx.guard.params.id));
    await send(invitation, ctx.guard.body);
    ctx.status = 204;
  });

  router.put(
    '/organization-invitations/:id/status',
    guard({
      params: idParams('id'),
      body: {
        type: 'object',
        properties: { status: { enum: ['Accepted', 'Revoked'] }, acceptedUserId: { anyOf: [idSchema, { type: 'null' }] } },
        required: ['status'],
        additionalProperties: false,
      },
      response: invitationResponse,
    }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const { status, acceptedUserId } = ctx.guard.body;
      const found = await invitations.findById(id);
      assertThat(found, () => notFound('organization invitation', id));
      const { organizationId } = found;
      const settle = () =>
        deps.write(originOf(ctx), async ({ intend, record }) => {
          const invitation = await invitations.findById(id);
          assertThat(invitation?.status === 'Pending', () => invalid('The status of the invitation cannot be changed anymore.'));
          if (status === 'Accepted') {
            assertThat(acceptedUserId, () => invalid('The `acceptedUserId` is required when accepting an invitation.'));
            // Logto answers an unknown user here 404 `entity.not_found`.
            const user = await queries.users.findById(acceptedUserId);
            assertThat(user, () => new ApiError('entity.not_found', `user \`${acceptedUserId}\` does not exist`));
            assertThat(user.emailKey === invitation.invitee, () => invalid('The accepted user must have the same email as the invitee.'));
          }
          // Once: of two requests at once, the one that settles it first wins.
          assertThat(await invitations.settle(id, status, status === 'Accepted' ? acceptedUserId! : null), () =>
            invalid('The status of the invitation cannot be changed anymore.'),
          );
          // The invitee joins with the roles invited to (those still there, for members).
          if (status === 'Accepted')
            await joinOrganization(queries, { intend, record }, invitation.organizationId, acceptedUserId!, invitation.organizationRoleIds);
          const [shown] = await present(queries, [(await invitations.findById(id))!]);
          record({ entity: 'OrganizationInvitation', action: 'updated', id, data: shown });
          ctx.body = shown;
        });
      // Accepting changes the organization's members and the member's roles: under the locks their own routes take, in the same order.
      if (status === 'Accepted' && acceptedUserId) {
        await withOwnerLock(`/organizations/:id/users:${organizationId}`, () =>
          withOwnerLock(`organization-member-roles:${organizationId}:${acceptedUserId}`, settle),
        );
      } else {
        await settle();
      }
    },
  );

  router.delete('/organization-invitations/:id', guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    await deps.write(originOf(ctx), async ({ record }) => {
      const invitation = await invitations.findById(id);
      assertThat(invitation && (await invitations.delete(id)), () => notFound('organization invitation', id));
      record({ entity: 'OrganizationInvitation', action: 'deleted', id, data: (await present(queries, [invitation!]))[0] });
    });
    ctx.status = 204;
  });
}
