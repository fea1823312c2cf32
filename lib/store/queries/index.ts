import type { Db } from 'mongodb';

import { createEntityQueries } from '../entities.js';
import { ApiError } from '../../errors.js';
import { createLinks } from '../links.js';
import type { OrganizationDocument, OrganizationRoleDocument, OrganizationScopeDocument, RoleDocument, ScopeDocument, UserDocument } from '../models.js';
import { createApplicationQueries } from './applications.js';
import { createChangeQueries } from './changes.js';
import { createConsentOrganizationQueries } from './consent-organizations.js';
import { createInvitationQueries } from './invitations.js';
import { createOneTimeTokenQueries } from './one-time-tokens.js';
import { createOrganizationMemberRoleQueries } from './organization-member-roles.js';
import { createPersonalAccessTokenQueries } from './personal-access-tokens.js';
import { createResourceQueries } from './resources.js';

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
    organizationApplications: createLinks(db, 'organization_applications'),
    organizationJitRoles: createLinks(db, 'organization_jit_roles'),
    organizationJitEmailDomains: createLinks(db, 'organization_jit_email_domains'),
    organizationJitSsoConnectors: createLinks(db, 'organization_jit_sso_connectors'),
    organizationRoleScopes: createLinks(db, 'organization_role_scopes'),
    organizationRoleResourceScopes: createLinks(db, 'organization_role_resource_scopes'),
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
        identityKeys: inUse('user.identity_already_in_use', 'this upstream account'),
      },
    }),
    scopes: createEntityQueries<ScopeDocument>(db, { collection: 'scopes', label: 'scope' }),
    roles: createEntityQueries<RoleDocument>(db, { collection: 'roles', label: 'role', conflicts: { name: inUse('role.name_in_use', 'this role name') } }),
    organizations: createEntityQueries<OrganizationDocument>(db, { collection: 'organizations', label: 'organization' }),
    organizationRoles: createEntityQueries<OrganizationRoleDocument>(db, {
      collection: 'organization_roles',
      label: 'organization role',
      // Logto's code for these (its SchemaRouter's, organization/utils.ts): entity.unique_integrity_violation.
      conflicts: { name: inUse('entity.unique_integrity_violation', 'this organization role name') },
    }),
    organizationScopes: createEntityQueries<OrganizationScopeDocument>(db, {
      collection: 'organization_scopes',
      label: 'organization permission',
      conflicts: { name: inUse('entity.unique_integrity_violation', 'this organization permission name') },
    }),
    organizationUserRoles: createOrganizationMemberRoleQueries(db, 'user'),
    organizationApplicationRoles: createOrganizationMemberRoleQueries(db, 'application'),
    consentOrganizations: createConsentOrganizationQueries(db),
    invitations: createInvitationQueries(db),
    oneTimeTokens: createOneTimeTokenQueries(db),
    personalAccessTokens: createPersonalAccessTokenQueries(db),
    changes: createChangeQueries(db),
    links,
  };
}

export type Queries = ReturnType<typeof createQueries>;
