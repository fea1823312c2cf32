import { ApiError, asBrokenForeignKey, assertThat } from '../../lib/errors.js';
import { guard } from '../../lib/http/guard.js';
import { byName, withId, type OrganizationRoleDocument } from '../../lib/store/models.js';
import { keepLiveTargets } from '../../lib/store/links.js';
import { createOwnerLocks } from '../../lib/store/owner-lock.js';
import type { Queries } from '../../lib/store/queries/index.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { originOf } from '../origin.js';
import { idParams, idSchema, paginationQuery } from '../schemas/common.js';
import { pageOrAll, setPageHeaders } from '../../lib/http/pagination.js';
import { organizationRoleResponse, organizationScopeResponse } from '../../lib/shapes.js';

import { presentOrganizationRoles } from './entities.js';

/**
 * The two kinds of organization member: users, and machine-to-machine applications (Logto's
 * organization applications). Each holds only roles of its own type, and its changes are recorded
 * under an action of its own.
 */
const memberKinds = {
  user: {
    segment: 'users',
    roleType: 'User',
    action: 'membership.roles.updated',
    roles: (queries: Queries) => queries.organizationUserRoles,
    links: (queries: Queries) => queries.links.organizationUsers,
  },
  application: {
    segment: 'applications',
    roleType: 'MachineToMachine',
    action: 'applications.roles.updated',
    roles: (queries: Queries) => queries.organizationApplicationRoles,
    links: (queries: Queries) => queries.links.organizationApplications,
  },
} as const;

type MemberKind = keyof typeof memberKinds;

/** Both kinds' routes. */
export function memberRoleRoutes(router: ApiRouter, deps: ManagementDeps) {
  memberKindRoleRoutes(router, deps, 'user');
  memberKindRoleRoutes(router, deps, 'application');
}

/**
 * A member's organization roles, a relation of three (organization, member, role), as Logto's
 * (organization/user/role-relations.ts, organization/user/index.ts, organization/application/
 * role-relations.ts): listed, added, replaced and removed one member at a time under the member's
 * lock; for users, given to several members at once, and the organization permissions they give.
 * Below, `userId` names the member of either kind (its path parameter is `userId` or `applicationId`).
 */
function memberKindRoleRoutes(router: ApiRouter, deps: ManagementDeps, kind: MemberKind) {
  const { queries } = deps;
  const { organizationRoles, organizationScopes, links } = queries;
  const { segment, roleType, action } = memberKinds[kind];
  const organizationUserRoles = memberKinds[kind].roles(queries);
  const memberLinks = memberKinds[kind].links(queries);
  const withOwnerLock = createOwnerLocks(deps.database.db);
  const memberParam = kind === 'user' ? 'userId' : 'applicationId';
  /** The member's id, whichever kind's path parameter names it. */
  const memberOf = (params: Record<string, unknown>) => params[memberParam] as string;

  const memberRoles = `/organizations/:id/${segment}/:${memberParam}/roles`;
  /** Roles by id or, as Logto allows too, by name (`organizationRoleNames`); either may repeat. */
  const memberRoleBody = {
    type: 'object',
    properties: {
      organizationRoleIds: { type: 'array', items: idSchema, maxItems: 100 },
      organizationRoleNames: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 128 }, maxItems: 100 },
    },
    anyOf: [{ required: ['organizationRoleIds'] }, { required: ['organizationRoleNames'] }],
    additionalProperties: false,
  } as const;

  /**
   * The roles a body names, by id and by name, each once: an unknown id is a broken foreign key
   * (422 `entity.relation_foreign_key_not_found`), an unknown name 422
   * `organization.role_names_not_found`, both Logto's. At least `minimum` of them.
   */
  async function rolesNamed(body: { organizationRoleIds?: string[]; organizationRoleNames?: string[] }, minimum: number): Promise<OrganizationRoleDocument[]> {
    const ids = [...new Set(body.organizationRoleIds ?? [])];
    const names = [...new Set(body.organizationRoleNames ?? [])];
    const byId = await organizationRoles.assertAllExist(ids).catch(asBrokenForeignKey);
    const byName = names.length > 0 ? await organizationRoles.find({ name: { $in: names } }) : [];
    const unknown = names.filter((name) => !byName.some((role) => role.name === name));
    // Logto's code for names (organization/user/role-relations.ts); an unknown id stays a broken foreign key.
    assertThat(
      unknown.length === 0,
      () =>
        new ApiError('organization.role_names_not_found', `no organization role is named ${unknown.map((name) => `\`${name}\``).join(', ')}`, {
          roleNames: unknown,
        }),
    );
    const roles = [...new Map([...byId, ...byName].map((role) => [role._id, role])).values()];
    // A role of the other type is not for this member (users hold User roles, applications MachineToMachine ones); Logto's database refuses it (a check constraint).
    const wrong = roles.find(({ type }) => (type ?? 'User') !== roleType);
    assertThat(
      !wrong,
      () =>
        new ApiError('entity.db_constraint_violated', `organization role \`${wrong!.name}\` is not a ${roleType} role`, {
          organizationRoleId: wrong!._id,
        }),
    );
    assertThat(roles.length >= minimum, () => new ApiError('guard.invalid_input', 'body names no organization role', { field: 'body.organizationRoleIds' }));
    return roles;
  }

  /** As Logto's (organization/user/role-relations.ts): anyone but a member, an unknown organization or user too, is 422. */
  async function member(organizationId: string, userId: string) {
    assertThat(
      await memberLinks.has(organizationId, userId),
      () => new ApiError('organization.require_membership', `the ${kind} is not a member of this organization`),
    );
  }

  /**
   * Checked after adding a member's roles: a role deleted meanwhile keeps no assignment, and if the
   * membership itself ended meanwhile (the member removed, the organization or user deleted, each
   * under its own lock) none of the added ones stays. Answers the added roles still held.
   */
  async function liveMemberRoles(organizationId: string, userId: string, added: string[]) {
    if (added.length === 0) return added;
    const unassign = { remove: (_: string, roleId: string) => organizationUserRoles.remove(organizationId, userId, roleId) };
    try {
      await member(organizationId, userId);
    } catch (error) {
      for (const roleId of added) await unassign.remove(organizationId, roleId);
      throw error;
    }
    return keepLiveTargets(unassign, organizationId, added, organizationRoles.findByIds);
  }

  /** Checks the membership and runs `apply` in one unit of work, which records what it changed. */
  async function changeMemberRoles(
    ctx: Parameters<typeof originOf>[0],
    organizationId: string,
    userId: string,
    apply: () => Promise<{ added: string[]; removed: string[] }>,
  ) {
    // One change at a time to a member's roles, in every process (see relations.ts).
    await withOwnerLock(`organization-member-roles:${organizationId}:${userId}`, () =>
      deps.write(originOf(ctx), async ({ intend, record }) => {
        await member(organizationId, userId);
        // Announced (Organization.Membership.Roles.Updated): without transactions, what a crash leaves is told from the roles before.
        await intend({
          entity: 'Organization',
          action,
          id: organizationId,
          key: userId,
          before: () => organizationUserRoles.rolesOf(organizationId, userId),
        });
        const applied = await apply();
        const added = await liveMemberRoles(organizationId, userId, applied.added);
        const { removed } = applied;
        if (added.length + removed.length > 0) {
          record({
            entity: 'Organization',
            action,
            id: organizationId,
            data: { [memberParam]: userId, addedOrganizationRoleIds: added, removedOrganizationRoleIds: removed },
          });
        }
      }),
    );
  }

  // Paged when asked (`page`, `page_size`, `Total-Number`), else every role: optional, as Logto's (organization/user/role-relations.ts).
  router.get(
    memberRoles,
    guard({ params: idParams('id', memberParam), query: paginationQuery(), response: { type: 'array', items: organizationRoleResponse } }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const userId = memberOf(ctx.guard.params);
      await member(id, userId);
      const filter = { _id: { $in: await organizationUserRoles.rolesOf(id, userId) } };
      const page = pageOrAll(ctx.guard.query, { optional: true });
      const [total, found] = await Promise.all([page && organizationRoles.count(filter), organizationRoles.find(filter, page)]);
      setPageHeaders(ctx, page, total);
      ctx.body = await presentOrganizationRoles(queries, found);
    },
  );

  router.post(
    memberRoles,
    guard({
      params: idParams('id', memberParam),
      body: memberRoleBody,
      status: 201,
      response: {
        type: 'object',
        properties: {
          organizationRoleIds: { type: 'array', items: { type: 'string' } },
          organizationRoles: { type: 'array', items: organizationRoleResponse },
        },
        required: ['organizationRoleIds', 'organizationRoles'],
      },
    }),
    async (ctx) => {
      const {
        params: { id },
        body,
      } = ctx.guard;
      const userId = memberOf(ctx.guard.params);
      let roles: OrganizationRoleDocument[] = [];
      await changeMemberRoles(ctx, id, userId, async () => {
        roles = await rolesNamed(body, 1);
        return {
          added: await organizationUserRoles.add(
            id,
            userId,
            roles.map(({ _id }) => _id),
          ),
          removed: [],
        };
      });
      // Logto's answer, the ids (by name too), and ours beside it, the roles as the list shows them.
      ctx.body = { organizationRoleIds: roles.map(({ _id }) => _id), organizationRoles: await presentOrganizationRoles(queries, roles) };
      ctx.status = 201;
    },
  );

  router.put(memberRoles, guard({ params: idParams('id', memberParam), body: memberRoleBody, status: 204 }), async (ctx) => {
    const {
      params: { id },
      body,
    } = ctx.guard;
    const userId = memberOf(ctx.guard.params);
    await changeMemberRoles(ctx, id, userId, async () => {
      const roles = await rolesNamed(body, 0);
      return organizationUserRoles.replace(
        id,
        userId,
        roles.map(({ _id }) => _id),
      );
    });
    ctx.status = 204;
  });

  router.delete(`${memberRoles}/:organizationRoleId`, guard({ params: idParams('id', memberParam, 'organizationRoleId') }), async (ctx) => {
    const { id, organizationRoleId } = ctx.guard.params;
    const userId = memberOf(ctx.guard.params);
    await changeMemberRoles(ctx, id, userId, async () => {
      // Logto's answer for a role the member does not hold: 404 `entity.not_found`.
      assertThat(
        await organizationUserRoles.remove(id, userId, organizationRoleId),
        () => new ApiError('entity.not_found', `the ${kind} does not hold organization role \`${organizationRoleId}\``, { organizationRoleId }),
      );
      return { added: [], removed: [organizationRoleId] };
    });
    ctx.status = 204;
  });

  // What follows is for users only.
  if (kind !== 'user') return;

  // Logto's POST /organizations/:id/users/roles: these roles to each of these members (organization/user/index.ts).
  // Every member and role is checked first, so a bad id writes nothing; each member's change is then its own unit.
  router.post(
    '/organizations/:id/users/roles',
    guard({
      params: idParams('id'),
      body: {
        type: 'object',
        properties: {
          userIds: { type: 'array', items: idSchema, minItems: 1, maxItems: 100 },
          organizationRoleIds: { type: 'array', items: idSchema, minItems: 1, maxItems: 100 },
        },
        required: ['userIds', 'organizationRoleIds'],
        additionalProperties: false,
      },
      response: {
        type: 'object',
        properties: { userIds: { type: 'array', items: { type: 'string' } }, organizationRoleIds: { type: 'array', items: { type: 'string' } } },
      },
      status: 201,
    }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const userIds = [...new Set(ctx.guard.body.userIds)];
      const roleIds = (await rolesNamed({ organizationRoleIds: ctx.guard.body.organizationRoleIds }, 1)).map(({ _id }) => _id);
      for (const userId of userIds) {
        // Logto's insert breaks a foreign key for a non-member; so is it answered here.
        assertThat(
          await links.organizationUsers.has(id, userId),
          () => new ApiError('entity.relation_foreign_key_not_found', `user \`${userId}\` is not a member of this organization`, { userId }),
        );
      }
      for (const userId of userIds) {
        await changeMemberRoles(ctx, id, userId, async () => ({
          added: await organizationUserRoles.add(id, userId, roleIds),
          removed: [],
        }));
      }
      // Logto answers without a body; ours says what was given to whom.
      ctx.body = { userIds, organizationRoleIds: roleIds };
      ctx.status = 201;
    },
  );

  // Logto's GET /organizations/:id/users/:userId/scopes: the organization permissions a member's roles there give.
  router.get(
    '/organizations/:id/users/:userId/scopes',
    guard({ params: idParams('id', memberParam), response: { type: 'array', items: organizationScopeResponse } }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const userId = memberOf(ctx.guard.params);
      await member(id, userId);
      const scopeIds = await links.organizationRoleScopes.rightsOfMany(await organizationUserRoles.rolesOf(id, userId));
      const scopes = await organizationScopes.findByIds([...new Set(scopeIds)]);
      ctx.body = scopes.sort(byName).map(withId);
    },
  );
}
