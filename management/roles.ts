import type { Filter } from 'mongodb';

import { builtIn } from './bootstrap.js';
import { keepLiveTargets } from '../lib/store/links.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { generateId } from '../lib/ids.js';
import { withId, type RoleDocument, type ScopeDocument } from '../lib/store/models.js';
import { pageOf, setPageHeaders } from '../lib/http/pagination.js';
import { parseSearch, searchFilter } from '../lib/http/search.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, paginationQuery } from './schemas/common.js';
import { roleCreateSchema, roleListQuery, rolePatchSchema } from './schemas/roles.js';
import { roleResponse } from '../lib/shapes.js';

/**
 * The Management API is for machine-to-machine applications: its permissions cannot be given to a
 * User role, whose holders sign in through pages anyone may reach (Logto answers the same 400).
 */
export function assertAssignable(type: RoleDocument['type'], scopes: ScopeDocument[]) {
  assertThat(
    type !== 'User' || scopes.every(({ resourceId }) => resourceId !== builtIn.managementResourceId),
    () => new ApiError('role.management_api_scopes_not_assignable_to_user_role', 'Management API permissions cannot be assigned to a User role'),
  );
}

const builtInRole = () => new ApiError('role.built_in', 'the Management API access role is built in and cannot be changed');

export function roleRoutes(router: ApiRouter, deps: ManagementDeps) {
  const {
    queries: { roles, links },
    queries,
  } = deps;

  router.get('/roles', guard({ query: paginationQuery(roleListQuery), response: { type: 'array', items: roleResponse } }), async (ctx) => {
    // Logto's filters (role.ts): a type, roles a user or an application does not hold, and its search (id, name, description).
    const { type, excludeUserId, excludeApplicationId } = ctx.guard.query;
    const search = parseSearch(ctx.URL.searchParams, ['id', 'name', 'description']);
    const held = [
      ...(excludeUserId ? await links.usersRoles.rightsOf(excludeUserId) : []),
      ...(excludeApplicationId ? await links.applicationsRoles.rightsOf(excludeApplicationId) : []),
    ];
    const filter: Filter<RoleDocument> = {
      ...(type && { type }),
      ...(held.length > 0 && { _id: { $nin: held } }),
      ...(search && { $and: [searchFilter<RoleDocument>(search, { id: '_id', name: 'name', description: 'description' })] }),
    };
    const page = pageOf(ctx.guard.query);
    const [total, found] = await deps.searching(search, (limits) => Promise.all([roles.count(filter, limits), roles.find(filter, page, limits)]));
    setPageHeaders(ctx, page, total);
    ctx.body = found.map(withId);
  });

  // Logto answers a create here with 200. With `scopeIds`, the role is created with those permissions.
  router.post('/roles', guard({ body: roleCreateSchema, response: roleResponse, status: 200 }), async (ctx) => {
    const { scopeIds = [], ...body } = ctx.guard.body;
    const role: RoleDocument = {
      _id: generateId(),
      name: body.name,
      description: body.description ?? '',
      type: body.type ?? 'User',
      isDefault: body.isDefault ?? false,
      createdAt: Date.now(),
    };
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      // Checked in the unit of work that links them, so that the check and the links are read and written together.
      if (scopeIds.length > 0) assertAssignable(role.type, await queries.scopes.assertAllExist(scopeIds));
      await intend({ entity: 'Role', action: 'created', id: role._id });
      if (scopeIds.length > 0) await intend({ entity: 'Role', action: 'scopes.updated', id: role._id, before: [] });
      await roles.insert(role);
      record({ entity: 'Role', action: 'created', id: role._id, data: withId(role) });
      if (scopeIds.length > 0) {
        await links.rolesScopes.add(role._id, scopeIds);
        // A permission deleted while the role was being created keeps no link (`keepLiveTargets`).
        const linked = await keepLiveTargets(links.rolesScopes, role._id, scopeIds, queries.scopes.findByIds);
        if (linked.length > 0) record({ entity: 'Role', action: 'scopes.updated', id: role._id, data: { addedScopeIds: linked, removedScopeIds: [] } });
      }
    });
    ctx.body = withId(role);
  });

  router.get('/roles/:id', guard({ params: idParams('id'), response: roleResponse }), async (ctx) => {
    ctx.body = withId(await roles.findByIdOrThrow(ctx.guard.params.id));
  });

  router.patch('/roles/:id', guard({ params: idParams('id'), body: rolePatchSchema, response: roleResponse }), async (ctx) => {
    const {
      params: { id },
      body,
    } = ctx.guard;
    assertThat(id !== builtIn.managementRoleId, builtInRole);
    ctx.body = withId(
      await deps.write(originOf(ctx), async ({ intend, record }) => {
        await intend({ entity: 'Role', action: 'updated', id });
        const updated = await roles.update(id, body);
        record({ entity: 'Role', action: 'updated', id, data: withId(updated) });
        return updated;
      }),
    );
  });

  router.delete('/roles/:id', guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    assertThat(id !== builtIn.managementRoleId, builtInRole);
    // Without it nobody could enter the admin console: take it away from users instead.
    assertThat(
      id !== builtIn.consoleRoleId,
      () => new ApiError('role.built_in', 'the console administrator role is built in and cannot be deleted; take it away from users instead'),
    );
    const holders = await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'Role', action: 'deleted', id });
      const before = await roles.delete(id);
      const users = await links.rolesUsers.rightsOf(id);
      await links.rolesUsers.removeAllOfLeft(id);
      await links.rolesApplications.removeAllOfLeft(id);
      await links.rolesScopes.removeAllOfLeft(id);
      record({ entity: 'Role', action: 'deleted', id, data: withId(before) });
      return users;
    });
    // Its users' subject tokens were sealed with it (`impersonation/voiding.ts` for the other changes).
    await deps.impersonation.voidSubjectTokens({ userIds: holders }, "one of the user's roles was deleted");
    ctx.status = 204;
  });
}
