import { builtIn } from '../bootstrap.js';
import { ApiError, assertThat } from '../../lib/errors.js';
import type { Links } from '../../lib/store/links.js';
import { createOwnerLocks } from '../../lib/store/owner-lock.js';
import { byName, userToApi, withId, type ApplicationDocument, type RoleDocument } from '../../lib/store/models.js';
import type { Queries } from '../../lib/store/queries/index.js';
import type { ApiRouter, ManagementDeps } from '../deps.js';
import { assertAssignable } from '../roles.js';
import { assertOrganizationAssignable } from '../organizations/entities.js';
import { memberResponse } from '../schemas/organizations.js';
import { userResponse } from '../schemas/users.js';
import { applicationResponse } from '../schemas/applications.js';
import { generic, handWritten, sides, type Doc, type Relation } from './relation.js';
import { routesOf } from './routes.js';

/** A relation as the rest of the API sees it, whatever the documents at its ends: how its changes are recorded, and its routes. */
export interface CatalogedRelation {
  owner: { entity: string };
  action: string;
  bodyKey: string;
  links: (queries: Queries) => Links;
  install: (router: ApiRouter, deps: ManagementDeps, withOwnerLock: ReturnType<typeof createOwnerLocks>) => void;
}

const relation = <O extends Doc, T extends Doc>(definition: Relation<O, T>): CatalogedRelation => ({
  owner: definition.owner,
  action: definition.action,
  bodyKey: definition.bodyKey,
  links: definition.links,
  install: (router, deps, withOwnerLock) => routesOf(definition, router, deps, withOwnerLock),
});

const typeMismatch = (message: string) => new ApiError('role.type_mismatch', message);
/** Every role is of `type`; otherwise `mismatch` (by default ours, `role.type_mismatch`) names the first that is not. */
const roleTypes = (
  type: RoleDocument['type'],
  roles: RoleDocument[],
  mismatch = (_role: RoleDocument) => typeMismatch(`only ${type} roles can be assigned here`),
) => {
  const wrong = roles.find((role) => role.type !== type);
  assertThat(!wrong, () => mismatch(wrong!));
};
const machineToMachine = (applications: ApplicationDocument[]) =>
  assertThat(
    applications.every((app) => app.type === 'MachineToMachine'),
    () => typeMismatch('only machine-to-machine applications have roles'),
  );
const notBuiltIn = (role: RoleDocument) =>
  assertThat(
    role._id !== builtIn.managementRoleId && role._id !== builtIn.consoleRoleId,
    () =>
      new ApiError(
        'role.built_in',
        `the ${role._id === builtIn.consoleRoleId ? 'console administrator' : 'Management API access'} role is built in and cannot be changed`,
      ),
  );

/** Members (users or applications) as Logto shows them: each with the organization roles it holds there, sorted by name. */
async function withOrganizationRoles<D extends { _id: string }>(
  q: Queries,
  memberRoles: Queries['organizationUserRoles'],
  organizationId: string,
  members: D[],
  toApi: (member: D) => object,
) {
  const held = await Promise.all(members.map(({ _id }) => memberRoles.rolesOf(organizationId, _id)));
  const roles = new Map((await q.organizationRoles.findByIds([...new Set(held.flat())])).map((role) => [role._id, role.name]));
  return members.map((member, index) => ({
    ...toApi(member),
    organizationRoles: held[index].flatMap((id) => (roles.has(id) ? [{ id, name: roles.get(id)! }] : [])).sort(byName),
  }));
}

/** Every many-to-many relation the Management API exposes, and its rules. */
export const relations: CatalogedRelation[] = [
  relation({
    path: '/users/:userId/roles',
    ownerParam: 'userId',
    owner: sides.user,
    target: sides.role,
    bodyKey: 'roleIds',
    targetParam: 'roleId',
    links: (q) => q.links.usersRoles,
    action: 'roles.updated',
    replace: true,
    // Logto's code here (packages/core/src/routes/admin-user/role.ts): user.invalid_role_type, naming the role.
    check: (_user, roles) =>
      roleTypes('User', roles, (role) => new ApiError('user.invalid_role_type', 'only User roles can be assigned to a user', { roleId: role._id })),
    // packages/core/src/routes/admin-user/role.ts
    contract: handWritten('ids', { replaced: 'ids' }),
  }),
  relation({
    path: '/roles/:id/users',
    ownerParam: 'id',
    owner: sides.role,
    target: sides.user,
    bodyKey: 'userIds',
    targetParam: 'userId',
    links: (q) => q.links.rolesUsers,
    action: 'users.updated',
    check: (role) => roleTypes('User', [role]),
    // packages/core/src/routes/role.user.ts
    contract: handWritten('targets', { existing: { code: 'role.user_exists', key: 'userId' } }),
  }),
  relation({
    path: '/applications/:id/roles',
    ownerParam: 'id',
    owner: sides.application,
    target: sides.role,
    bodyKey: 'roleIds',
    targetParam: 'roleId',
    links: (q) => q.links.applicationsRoles,
    action: 'roles.updated',
    replace: true,
    // Logto's codes here (packages/core/src/routes/applications/application-role.ts).
    checkOwner: (application) =>
      assertThat(application.type === 'MachineToMachine', () => new ApiError('application.invalid_type', 'only machine-to-machine applications have roles')),
    check: (_application, roles) =>
      roleTypes(
        'MachineToMachine',
        roles,
        (role) => new ApiError('application.invalid_role_type', 'only MachineToMachine roles can be given to an application', { roleId: role._id }),
      ),
    contract: handWritten('ids', { replaced: 'ids' }),
  }),
  relation({
    path: '/roles/:id/applications',
    ownerParam: 'id',
    owner: sides.role,
    target: sides.application,
    bodyKey: 'applicationIds',
    targetParam: 'applicationId',
    links: (q) => q.links.rolesApplications,
    action: 'applications.updated',
    check: (role, applications) => {
      roleTypes('MachineToMachine', [role]);
      machineToMachine(applications);
    },
    // packages/core/src/routes/role.application.ts
    contract: handWritten('targets', { existing: { code: 'role.application_exists', key: 'applicationId' } }),
  }),
  relation({
    path: '/roles/:id/scopes',
    ownerParam: 'id',
    owner: sides.role,
    target: sides.scope,
    bodyKey: 'scopeIds',
    targetParam: 'scopeId',
    links: (q) => q.links.rolesScopes,
    action: 'scopes.updated',
    check: (role) => notBuiltIn(role),
    checkAdded: (role, scopes) => assertAssignable(role.type, scopes),
    // packages/core/src/routes/role.scope.ts
    optionalPaging: true,
    contract: handWritten('all', { existing: { code: 'role.scope_exists', key: 'scopeId' } }),
  }),
  relation({
    path: '/organizations/:id/users',
    ownerParam: 'id',
    owner: sides.organization,
    target: sides.user,
    bodyKey: 'userIds',
    targetParam: 'userId',
    links: (q) => q.links.organizationUsers,
    action: 'membership.updated',
    replace: true,
    // Members are shown with the organization roles they hold there, as in Logto.
    present: async (q, organizationId, users) => withOrganizationRoles(q, q.organizationUserRoles, organizationId, users, userToApi),
    response: memberResponse(userResponse),
    // A member who leaves loses the organization roles it held there.
    afterRemove: (q, organizationId, userIds) => q.organizationUserRoles.removeMembership(organizationId, userIds),
    // packages/core/src/routes/organization/user/index.ts, through Logto's SchemaRouter
    contract: generic,
    searchedBy: ['_id', 'name', 'username', 'primaryEmail', 'primaryPhone'],
  }),
  relation({
    // Logto's organization applications: machine-to-machine applications as members (organization/application/index.ts).
    path: '/organizations/:id/applications',
    ownerParam: 'id',
    owner: sides.organization,
    target: sides.application,
    bodyKey: 'applicationIds',
    targetParam: 'applicationId',
    links: (q) => q.links.organizationApplications,
    action: 'applications.updated',
    replace: true,
    // Logto's database refuses any other type (a check constraint).
    checkAdded: (_organization, applications) => {
      const wrong = applications.find(({ type }) => type !== 'MachineToMachine');
      assertThat(
        !wrong,
        () =>
          new ApiError('entity.db_constraint_violated', 'only machine-to-machine applications can be members of an organization', {
            applicationId: wrong!._id,
          }),
      );
    },
    // Shown with the organization roles they hold there, as Logto's `ApplicationWithOrganizationRoles`.
    present: async (q, organizationId, applications) => withOrganizationRoles(q, q.organizationApplicationRoles, organizationId, applications, withId),
    response: memberResponse(applicationResponse),
    afterRemove: (q, organizationId, applicationIds) => q.organizationApplicationRoles.removeMembership(organizationId, applicationIds),
    contract: generic,
    searchedBy: ['_id', 'name'],
  }),
  relation({
    // Logto's just-in-time roles: what a member who joins by just-in-time membership gets (organization/jit/index.ts).
    path: '/organizations/:id/jit/roles',
    ownerParam: 'id',
    owner: sides.organization,
    target: sides.organizationRole,
    bodyKey: 'organizationRoleIds',
    targetParam: 'organizationRoleId',
    links: (q) => q.links.organizationJitRoles,
    action: 'jit.roles.updated',
    replace: true,
    // For people: a machine role is not given to a member (Logto's database refuses it).
    checkAdded: (_organization, roles) => {
      const machine = roles.find(({ type }) => type === 'MachineToMachine');
      assertThat(!machine, () => new ApiError('entity.db_constraint_violated', `organization role \`${machine!.name}\` is for machines, not members`));
    },
    optionalPaging: true,
    contract: generic,
  }),
  relation({
    // Logto's just-in-time SSO connectors: a person who signs up (or links an account) through one joins the organization.
    path: '/organizations/:id/jit/sso-connectors',
    ownerParam: 'id',
    owner: sides.organization,
    target: sides.ssoConnector,
    bodyKey: 'ssoConnectorIds',
    targetParam: 'ssoConnectorId',
    links: (q) => q.links.organizationJitSsoConnectors,
    action: 'jit.ssoConnectors.updated',
    replace: true,
    optionalPaging: true,
    contract: generic,
  }),
  relation({
    path: '/organization-roles/:id/scopes',
    ownerParam: 'id',
    owner: sides.organizationRole,
    target: sides.organizationScope,
    bodyKey: 'organizationScopeIds',
    targetParam: 'organizationScopeId',
    links: (q) => q.links.organizationRoleScopes,
    action: 'scopes.updated',
    replace: true,
    // packages/core/src/routes/organization-role/index.ts, through Logto's SchemaRouter
    optionalPaging: true,
    contract: generic,
  }),
  relation({
    // An organization role's API resource permissions (Logto's `resource-scopes`, the same SchemaRouter relation).
    path: '/organization-roles/:id/resource-scopes',
    ownerParam: 'id',
    owner: sides.organizationRole,
    target: sides.scope,
    bodyKey: 'scopeIds',
    targetParam: 'scopeId',
    links: (q) => q.links.organizationRoleResourceScopes,
    action: 'resourceScopes.updated',
    replace: true,
    checkAdded: (_role, scopes) => assertOrganizationAssignable(scopes),
    contract: generic,
  }),
];

/** Every relation's routes, sharing one set of owner locks. */
export function relationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const withOwnerLock = createOwnerLocks(deps.database.db);
  for (const { install } of relations) install(router, deps, withOwnerLock);
}
