import { asBrokenForeignKey } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { organizationToApi, withId, type OrganizationRoleDocument, type ScopeDocument } from '../../lib/store/models.js';
import type { ChangeOf } from '../../lib/store/changes.js';
import type { ChangeKey } from '../../hooks/catalog.js';
import { assertAssignable } from '../roles.js';
import { keepLiveTargets } from '../../lib/store/links.js';
import type { Queries } from '../../lib/store/queries/index.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { namedEntityRoutes } from '../named-entities.js';
import {
  namedCreateSchema,
  namedPatchSchema,
  organizationCreateSchema,
  organizationPatchSchema,
  organizationRoleCreateSchema,
} from '../schemas/organizations.js';
import { organizationResponse, organizationRoleResponse, organizationScopeResponse } from '../../lib/shapes.js';

/** Organization roles are shown with their permissions' ids and names. */
export async function presentOrganizationRoles({ links, organizationScopes, scopes: apiScopes, resources }: Queries, roles: OrganizationRoleDocument[]) {
  // Two reads for the page's permissions of either kind, whatever the number of roles.
  const ids = roles.map(({ _id }) => _id);
  // One read after the other: shown inside a unit of work too, whose session takes one operation at a time.
  const grantsOf = await links.organizationRoleScopes.rightsByLeft(ids);
  const resourceGrantsOf = await links.organizationRoleResourceScopes.rightsByLeft(ids);
  const grants = ids.map((id) => grantsOf.get(id)!);
  const resourceGrants = ids.map((id) => resourceGrantsOf.get(id)!);
  const scopes = new Map((await organizationScopes.findByIds([...new Set(grants.flat())])).map((scope) => [scope._id, scope]));
  const resourceScopes = new Map((await apiScopes.findByIds([...new Set(resourceGrants.flat())])).map((scope) => [scope._id, scope]));
  const resourcesById = new Map(
    (await resources.findByIds([...new Set([...resourceScopes.values()].map(({ resourceId }) => resourceId))])).map((resource) => [resource._id, resource]),
  );
  return roles.map((role, index) => ({
    ...withId(role),
    type: role.type ?? 'User',
    scopes: grants[index].flatMap((id) => (scopes.has(id) ? [{ id, name: scopes.get(id)!.name }] : [])),
    // Logto's `resourceScopes`: each API permission with its resource.
    resourceScopes: resourceGrants[index].flatMap((id) => {
      const scope = resourceScopes.get(id);
      const resource = scope && resourcesById.get(scope.resourceId);
      return scope && resource ? [{ id, name: scope.name, resource: { id: resource._id, name: resource.name } }] : [];
    }),
  }));
}

/**
 * API permissions an organization role may hold: any but the Management API's, which reach only
 * machine-to-machine roles of the tenant itself (as a User role may not hold them, `roles.ts`).
 */
export const assertOrganizationAssignable = (scopes: ScopeDocument[]) => assertAssignable('User', scopes);

/** Organizations, organization permissions and organization roles, each a named entity (`named-entities.ts`). */
export function organizationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;
  const { organizations, organizationRoles, organizationScopes, organizationUserRoles, links } = queries;

  namedEntityRoutes(router, deps, {
    path: '/organizations',
    entity: 'Organization',
    queries: organizations,
    createSchema: organizationCreateSchema,
    patchSchema: organizationPatchSchema,
    response: organizationResponse,
    build: (body) => ({
      _id: generateId(),
      name: body.name,
      description: body.description ?? null,
      customData: body.customData ?? {},
      isMfaRequired: body.isMfaRequired ?? false,
      branding: body.branding ?? {},
      color: body.color ?? {},
      createdAt: Date.now(),
    }),
    present: async (documents) => documents.map(organizationToApi),
    // Logto's `showFeatured=true`: each organization with its member count and up to three members to show.
    async presentFeatured(documents) {
      const samples = await Promise.all(documents.map(({ _id }) => links.organizationUsers.sampleOf(_id, 3)));
      const users = new Map((await queries.users.findByIds(samples.flatMap(({ rights }) => rights))).map((user) => [user._id, user]));
      return documents.map((organization, index) => ({
        ...organizationToApi(organization),
        usersCount: samples[index].count,
        featuredUsers: samples[index].rights.flatMap((id) => {
          const user = users.get(id);
          return user ? [{ id, avatar: user.avatar, name: user.name }] : [];
        }),
      }));
    },
    async cascade(id) {
      await links.organizationUsers.removeAllOfLeft(id);
      await organizationUserRoles.removeAllOfOrganization(id);
      await links.organizationApplications.removeAllOfLeft(id);
      await queries.organizationApplicationRoles.removeAllOfOrganization(id);
      await queries.consentOrganizations.removeAllOfOrganization(id);
      await queries.invitations.removeAllOfOrganization(id);
      await links.organizationJitRoles.removeAllOfLeft(id);
      await links.organizationJitSsoConnectors.removeAllOfLeft(id);
      await links.organizationJitEmailDomains.removeAllOfLeft(id);
    },
  });

  namedEntityRoutes(router, deps, {
    path: '/organization-scopes',
    entity: 'OrganizationScope',
    queries: organizationScopes,
    // As Logto's: the whole list unless a page is asked for.
    optionalPaging: true,
    createSchema: namedCreateSchema(),
    patchSchema: namedPatchSchema,
    response: organizationScopeResponse,
    build: (body) => ({ _id: generateId(), name: body.name, description: body.description ?? null, createdAt: Date.now() }),
    present: async (documents) => documents.map(withId),
    cascade: (id) => links.organizationRoleScopes.removeAllOfRight(id),
  });

  namedEntityRoutes(router, deps, {
    path: '/organization-roles',
    entity: 'OrganizationRole',
    queries: organizationRoles,
    createSchema: organizationRoleCreateSchema,
    patchSchema: namedPatchSchema,
    response: organizationRoleResponse,
    build: (body) => ({ _id: generateId(), name: body.name, description: body.description ?? null, type: body.type ?? 'User', createdAt: Date.now() }),
    present: (roles) => presentOrganizationRoles(queries, roles),
    async beforeCreate({ organizationScopeIds = [], resourceScopeIds = [] }) {
      // Logto's code for an unknown one (organization-role/index.ts, through its SchemaRouter's error handler).
      await organizationScopes.assertAllExist(organizationScopeIds).catch(asBrokenForeignKey);
      assertOrganizationAssignable(await queries.scopes.assertAllExist(resourceScopeIds).catch(asBrokenForeignKey));
    },
    async afterCreate(role, { organizationScopeIds = [], resourceScopeIds = [] }, { intend }) {
      const changes: Array<ChangeOf<ChangeKey>> = [];
      if (organizationScopeIds.length > 0) {
        await intend({ entity: 'OrganizationRole', action: 'scopes.updated', id: role._id, before: [] });
        await links.organizationRoleScopes.add(role._id, organizationScopeIds);
        // A permission deleted while the role was being created keeps no link (`keepLiveTargets`).
        const linked = await keepLiveTargets(links.organizationRoleScopes, role._id, organizationScopeIds, organizationScopes.findByIds);
        if (linked.length > 0) {
          changes.push({
            entity: 'OrganizationRole',
            action: 'scopes.updated',
            id: role._id,
            data: { addedOrganizationScopeIds: linked, removedOrganizationScopeIds: [] },
          });
        }
      }
      if (resourceScopeIds.length > 0) {
        await intend({ entity: 'OrganizationRole', action: 'resourceScopes.updated', id: role._id, before: [] });
        await links.organizationRoleResourceScopes.add(role._id, resourceScopeIds);
        const linked = await keepLiveTargets(links.organizationRoleResourceScopes, role._id, resourceScopeIds, queries.scopes.findByIds);
        if (linked.length > 0) {
          changes.push({ entity: 'OrganizationRole', action: 'resourceScopes.updated', id: role._id, data: { addedScopeIds: linked, removedScopeIds: [] } });
        }
      }
      return changes;
    },
    async cascade(id) {
      await links.organizationRoleScopes.removeAllOfLeft(id);
      await links.organizationRoleResourceScopes.removeAllOfLeft(id);
      await organizationUserRoles.removeAllOfRole(id);
      await queries.organizationApplicationRoles.removeAllOfRole(id);
      await queries.invitations.removeRole(id);
      await links.organizationJitRoles.removeAllOfRight(id);
    },
  });
}
