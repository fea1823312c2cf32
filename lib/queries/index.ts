import type { ClientSession, Db } from 'mongodb';

import { providerCollection, providerModels } from '../database.js';
import { createEntityQueries } from '../entities.js';
import { ApiError } from '../errors.js';
import { createLinks } from '../links.js';
import type {
  OrganizationDocument, OrganizationRoleDocument, OrganizationScopeDocument, RoleDocument, ScopeDocument, UserDocument,
} from '../models.js';
import { createApplicationQueries } from './applications.js';
import { createImpersonationQueries } from './impersonations.js';
import { createOrganizationUserRoleQueries } from './organization-user-roles.js';
import { createResourceQueries } from './resources.js';
import { createSubjectTokenQueries } from './subject-tokens.js';

const inUse = (code: ApiError['code'], what: string) => () => new ApiError(code, `${what} is already in use`);

/** Every query factory, built once over one database and handed to whoever needs it. */
export function createQueries(db: Db) {
  const links = {
    usersRoles: createLinks(db, 'users_roles'),
    rolesUsers: createLinks(db, 'users_roles', { reversed: true }),
    applicationsRoles: createLinks(db, 'applications_roles'),
    rolesApplications: createLinks(db, 'applications_roles', { reversed: true }),
    rolesScopes: createLinks(db, 'roles_scopes'),
    organizationUsers: createLinks(db, 'organization_users'),
    organizationRoleScopes: createLinks(db, 'organization_role_scopes'),
  };

  return {
    applications: createApplicationQueries(db),
    resources: createResourceQueries(db),
    users: createEntityQueries<UserDocument>(db, {
      collection: 'users',
      label: 'user',
      conflicts: {
        username: inUse('user.username_already_in_use', 'this username'),
        emailKey: inUse('user.email_already_in_use', 'this email address'),
        primaryPhone: inUse('user.phone_already_in_use', 'this phone number'),
      },
    }),
    scopes: createEntityQueries<ScopeDocument>(db, { collection: 'scopes', label: 'scope' }),
    roles: createEntityQueries<RoleDocument>(db, { collection: 'roles', label: 'role', conflicts: { name: inUse('role.name_in_use', 'this role name') } }),
    organizations: createEntityQueries<OrganizationDocument>(db, { collection: 'organizations', label: 'organization' }),
    organizationRoles: createEntityQueries<OrganizationRoleDocument>(db, {
      collection: 'organization_roles', label: 'organization role',
      conflicts: { name: inUse('organization_role.name_in_use', 'this organization role name') },
    }),
    organizationScopes: createEntityQueries<OrganizationScopeDocument>(db, {
      collection: 'organization_scopes', label: 'organization permission',
      conflicts: { name: inUse('organization_scope.name_in_use', 'this organization permission name') },
    }),
    organizationUserRoles: createOrganizationUserRoleQueries(db),
    subjectTokens: createSubjectTokenQueries(db),
    impersonations: createImpersonationQueries(db),
    links,

    /** Scope ids an application holds through its roles. */
    async scopeIdsForApplication(applicationId: string): Promise<Set<string>> {
      return new Set(await links.rolesScopes.rightsOfMany(await links.applicationsRoles.rightsOf(applicationId)));
    },

    /** A user and the ids of its roles, in one round trip. */
    async userWithRoleIds(userId: string): Promise<{ user: UserDocument; roleIds: string[] } | undefined> {
      const [found] = await db.collection<UserDocument>('users').aggregate<UserDocument & { links: Array<{ roleId: string }> }>([
        { $match: { _id: userId } },
        { $lookup: { from: 'users_roles', localField: '_id', foreignField: 'userId', as: 'links' } },
      ]).toArray();
      if (!found) return undefined;
      const { links: held, ...user } = found;
      return { user: user as UserDocument, roleIds: held.map(({ roleId }) => roleId) };
    },

    /** Scope ids a user holds through its roles. */
    async scopeIdsForUser(userId: string): Promise<Set<string>> {
      return new Set(await links.rolesScopes.rightsOfMany(await links.usersRoles.rightsOf(userId)));
    },

    /** Ends everything the provider keeps for an account: sessions, grants and tokens. */
    async revokeAccount(accountId: string, session?: ClientSession) {
      await Promise.all(providerModels.map((model) => db.collection(providerCollection(model)).deleteMany({ accountId }, { session })));
    },
  };
}

export type Queries = ReturnType<typeof createQueries>;
