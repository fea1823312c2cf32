import type { Db } from 'mongodb';

import { createBatch } from '../batch.js';
import { createEntityQueries } from '../entities.js';
import { ApiError } from '../../errors.js';
import { sha256 } from '../../ids.js';
import { createLinks } from '../links.js';
import type { OrganizationDocument, OrganizationRoleDocument, OrganizationScopeDocument, RoleDocument, ScopeDocument, UserDocument } from '../models.js';
import { createApplicationQueries } from './applications.js';
import { createImpersonationQueries } from './impersonations.js';
import { createChangeQueries } from './changes.js';
import { createOrganizationUserRoleQueries } from './organization-user-roles.js';
import { createResourceQueries } from './resources.js';
import { createSubjectTokenQueries, type SubjectTokenDocument } from './subject-tokens.js';

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
    organizationRoleResourceScopes: createLinks(db, 'organization_role_resource_scopes'),
  };

  type Joined = SubjectTokenDocument & { users: UserDocument[]; links: Array<{ roleId: string }>; revocations: unknown[] };
  type WithUser = { subject: SubjectTokenDocument; user?: UserDocument; roleIds: string[]; revoked: boolean };
  const subjectTokensWithUsers = createBatch(async (hashes: string[]): Promise<Array<WithUser | undefined>> => {
    const found = await db
      .collection<SubjectTokenDocument>('subject_tokens')
      .aggregate<Joined>([
        { $match: { _id: { $in: [...new Set(hashes)] } } },
        { $lookup: { from: 'users', localField: 'userId', foreignField: '_id', as: 'users' } },
        { $lookup: { from: 'users_roles', localField: 'userId', foreignField: 'userId', as: 'links' } },
        // Whether its impersonation was revoked (the kill switch), in the same round trip.
        { $lookup: { from: 'impersonation_revocations', localField: 'impersonationId', foreignField: '_id', as: 'revocations' } },
      ])
      .toArray();
    const byHash = new Map(
      found.map(({ users: [user], links: held, revocations, ...subject }) => [
        subject._id,
        { subject, ...(user && { user }), roleIds: held.map(({ roleId }) => roleId), revoked: revocations.length > 0 },
      ]),
    );
    return hashes.map((hash) => byHash.get(hash));
  });

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
    organizationUserRoles: createOrganizationUserRoleQueries(db),
    subjectTokens: createSubjectTokenQueries(db),
    impersonations: createImpersonationQueries(db),
    changes: createChangeQueries(db),
    links,

    /**
     * A stored subject token with its user and the user's role ids, in one round trip: both
     * lookups follow the token's `userId`; concurrent calls share one aggregate. The token comes
     * back live or not (the caller checks); it is spent by the exchange's audit record, whose id
     * is unique per token (`impersonations.claimExchange`), not here.
     */
    subjectTokenWithUser: (token: string) => subjectTokensWithUsers(sha256(token)),
  };
}

export type Queries = ReturnType<typeof createQueries>;
