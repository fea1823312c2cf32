import type { Document } from 'mongodb';

import type { ApiErrorCode } from '../../lib/errors.js';
import type { Schema } from '../../lib/http/guard.js';
import type { EntityDocument } from '../../lib/store/entities.js';
import type { Links } from '../../lib/store/links.js';
import {
  userToApi,
  organizationToApi,
  withId,
  type ApplicationDocument,
  type OrganizationDocument,
  type OrganizationRoleDocument,
  type OrganizationScopeDocument,
  type RoleDocument,
  type ScopeDocument,
  type UserDocument,
} from '../../lib/store/models.js';
import type { Queries } from '../../lib/store/queries/index.js';
import { organizationScopeResponse, roleResponse, scopeResponse } from '../../lib/shapes.js';
import { applicationResponse } from '../schemas/applications.js';
import { userResponse } from '../schemas/users.js';
import type { SsoConnectorDocument } from '../../sso/connectors.js';

export type Doc = EntityDocument & Document;

/** One end of a relation: which collection, how an id is named in paths and bodies, how it looks in answers. */
export interface Side<D extends Doc> {
  collection: string;
  label: string;
  /** The entity name that change records use for it. */
  entity: string;
  toApi: (document: D) => unknown;
  response: Schema;
}

const side = <D extends Doc>(definition: Side<D>) => definition;

export const sides = {
  user: side<UserDocument>({ collection: 'users', label: 'user', entity: 'User', toApi: userToApi, response: userResponse }),
  role: side<RoleDocument>({ collection: 'roles', label: 'role', entity: 'Role', toApi: withId, response: roleResponse }),
  application: side<ApplicationDocument>({
    collection: 'applications',
    label: 'application',
    entity: 'Application',
    toApi: withId,
    response: applicationResponse,
  }),
  scope: side<ScopeDocument>({ collection: 'scopes', label: 'scope', entity: 'Scope', toApi: withId, response: scopeResponse }),
  organization: side<OrganizationDocument>({
    collection: 'organizations',
    label: 'organization',
    entity: 'Organization',
    toApi: organizationToApi,
    response: {},
  }),
  organizationRole: side<OrganizationRoleDocument>({
    collection: 'organization_roles',
    label: 'organization role',
    entity: 'OrganizationRole',
    toApi: withId,
    response: {},
  }),
  // Shown without their configuration: a relation list is no place for an identity provider's settings.
  ssoConnector: side<SsoConnectorDocument>({
    collection: 'sso_connectors',
    label: 'SSO connector',
    entity: 'SsoConnector',
    toApi: ({ _id, providerName, connectorName, domains, branding }) => ({ id: _id, providerName, connectorName, domains, branding }),
    response: {},
  }),
  organizationScope: side<OrganizationScopeDocument>({
    collection: 'organization_scopes',
    label: 'organization permission',
    entity: 'OrganizationScope',
    toApi: withId,
    response: organizationScopeResponse,
  }),
};

/** A many-to-many relation between an owner (`O`) and its targets (`T`), and its rules. */
export interface Relation<O extends Doc, T extends Doc> {
  /** e.g. `/roles/:id/scopes`; the owner's id is the path's only parameter. */
  path: string;
  ownerParam: string;
  owner: Side<O>;
  target: Side<T>;
  /** Request body key (`scopeIds`) and path parameter (`scopeId`) naming targets. */
  bodyKey: string;
  targetParam: string;
  links: (queries: Queries) => Links;
  /** Recorded on the owner, with the ids added and removed. */
  action: string;
  /** Whether PUT replaces the whole set. */
  replace?: boolean;
  /** Throws when the owner may not be linked to (or unlinked from) these targets. */
  check?: (owner: O, targets: T[]) => void;
  /** Throws when these targets may not be added to the owner (removing them stays possible). */
  checkAdded?: (owner: O, targets: T[]) => void;
  /** Further clean-up, inside the same unit of work, for targets just unlinked. */
  afterRemove?: (queries: Queries, ownerId: string, removed: string[]) => Promise<unknown>;
  /** Answers for a page of targets, when they show more than the target itself. */
  present?: (queries: Queries, ownerId: string, targets: T[]) => Promise<unknown[]>;
  /** The answer schema for one target, when `present` shapes it. */
  response?: Schema;
  /** Stored fields the list's `q` looks in (anywhere in them, any case), as Logto's member search. */
  searchedBy?: string[];
  /** Whether the list answers every row when no page is asked for, as Logto's `koaPagination({ isOptional: true })`. */
  optionalPaging?: boolean;
  /** Throws when the owner cannot have this relation at all (checked by every method, the list too). */
  checkOwner?: (owner: O) => void;
  /** Logto's contract for the route: its answers, and what an id already linked or unknown gets. */
  contract: Contract;
}

/**
 * How Logto's route answers. Logto has two kinds of relation route: hand-written ones (a user's or
 * an application's roles, a role's users, applications and permissions), each with its own answers,
 * and the generic ones of its `SchemaRouter` (organization members, an organization role's
 * permissions), which answer alike.
 */
export interface Contract {
  /**
   * POST's answer: `ids` is 201 `{<bodyKey>, added<BodyKey>}` (and the list may be empty); `echo` 201
   * `{<bodyKey>}`; `targets` 201 with the targets named (Logto answers 201 without a body there: ours
   * says more); `all` 200 with every target the owner now has.
   */
  added: 'ids' | 'echo' | 'targets' | 'all';
  /** PUT's answer: 200 `{<bodyKey>}`, or 204. */
  replaced?: 'ids' | 'none';
  /** An id already linked, in a POST: taken as done, or this 422 error naming it under `key`. */
  existing?: { code: ApiErrorCode; key: string };
  /**
   * An unknown owner or target in a POST or PUT: 404 `entity.not_exists_with_id` naming it, or, as
   * Logto's generic routes (whose insert breaks a foreign key), 422 `entity.relation_foreign_key_not_found`.
   */
  unknown: 'notFound' | 'foreignKey';
}

export const handWritten = (added: Contract['added'], more: Partial<Contract> = {}): Contract => ({ added, unknown: 'notFound', ...more });
export const generic: Contract = { added: 'echo', replaced: 'none', unknown: 'foreignKey' };

/** Change records name the ids as `addedScopeIds` / `removedScopeIds`. */
export const changedKeyOf = (bodyKey: string) => `${bodyKey[0].toUpperCase()}${bodyKey.slice(1)}`;
