import type { ClientSession, Document } from 'mongodb';

import { builtIn } from './bootstrap.js';
import { recordedChange } from '../hooks/catalog.js';
import { containsPattern, createEntityQueries, type EntityDocument } from '../lib/store/entities.js';
import { ApiError, asBrokenForeignKey, asNothingDeleted, assertThat, notFound, type ApiErrorCode } from '../lib/errors.js';
import { guard, type Schema } from '../lib/http/guard.js';
import { keepLiveTargets, type Links } from '../lib/store/links.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import {
  byName,
  userToApi,
  withId,
  type Page,
  type ApplicationDocument,
  type RoleDocument,
  type ScopeDocument,
  type UserDocument,
} from '../lib/store/models.js';
import { assertAssignable } from './roles.js';
import { assertOrganizationAssignable } from './organizations.js';
import { pageOrAll, setPageHeaders } from '../lib/http/pagination.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { applicationResponse } from './schemas/applications.js';
import { idParams, idSchema, paginationQuery } from './schemas/common.js';
import { memberResponse } from './schemas/organizations.js';
import { organizationScopeResponse } from '../lib/shapes.js';
import { scopeResponse } from '../lib/shapes.js';
import { roleResponse } from '../lib/shapes.js';
import { userResponse } from './schemas/users.js';

type Doc = EntityDocument & Document;

/** One end of a relation: which collection, how an id is named in paths and bodies, how it looks in answers. */
interface Side {
  collection: string;
  label: string;
  /** The entity name that change records use for it. */
  entity: string;
  toApi: (document: Doc) => unknown;
  response: Schema;
}

const sides = {
  user: { collection: 'users', label: 'user', entity: 'User', toApi: (d) => userToApi(d as unknown as UserDocument), response: userResponse },
  role: { collection: 'roles', label: 'role', entity: 'Role', toApi: withId, response: roleResponse },
  application: { collection: 'applications', label: 'application', entity: 'Application', toApi: withId, response: applicationResponse },
  scope: { collection: 'scopes', label: 'scope', entity: 'Scope', toApi: withId, response: scopeResponse },
  organization: { collection: 'organizations', label: 'organization', entity: 'Organization', toApi: withId, response: {} },
  organizationRole: { collection: 'organization_roles', label: 'organization role', entity: 'OrganizationRole', toApi: withId, response: {} },
  organizationScope: {
    collection: 'organization_scopes',
    label: 'organization permission',
    entity: 'OrganizationScope',
    toApi: withId,
    response: organizationScopeResponse,
  },
} satisfies Record<string, Side>;

interface Relation {
  /** e.g. `/roles/:id/scopes`; the owner's id is the path's only parameter. */
  path: string;
  ownerParam: string;
  owner: Side;
  target: Side;
  /** Request body key (`scopeIds`) and path parameter (`scopeId`) naming targets. */
  bodyKey: string;
  targetParam: string;
  links: (queries: Queries) => Links;
  /** Recorded on the owner, with the ids added and removed. */
  action: string;
  /** Whether PUT replaces the whole set. */
  replace?: boolean;
  /** Throws when the owner may not be linked to (or unlinked from) these targets. */
  check?: (owner: Doc, targets: Doc[]) => void;
  /** Throws when these targets may not be added to the owner (removing them stays possible). */
  checkAdded?: (owner: Doc, targets: Doc[]) => void;
  /** Further clean-up, inside the same unit of work, for targets just unlinked. */
  afterRemove?: (queries: Queries, ownerId: string, removed: string[], session: ClientSession | undefined) => Promise<unknown>;
  /** Answers for a page of targets, when they show more than the target itself. */
  present?: (queries: Queries, ownerId: string, targets: Doc[]) => Promise<unknown[]>;
  /** The answer schema for one target, when `present` shapes it. */
  response?: Schema;
  /** Stored fields the list's `q` looks in (anywhere in them, any case), as Logto's member search. */
  searchedBy?: string[];
  /** Whether the list answers every row when no page is asked for, as Logto's `koaPagination({ isOptional: true })`. */
  optionalPaging?: boolean;
  /** Throws when the owner cannot have this relation at all (checked by every method, the list too). */
  checkOwner?: (owner: Doc) => void;
  /** Logto's contract for the route: its answers, and what an id already linked or unknown gets. */
  contract: Contract;
}

/**
 * How Logto's route answers. Logto has two kinds of relation route: hand-written ones (a user's or
 * an application's roles, a role's users, applications and permissions), each with its own answers,
 * and the generic ones of its `SchemaRouter` (organization members, an organization role's
 * permissions), which answer alike.
 */
interface Contract {
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

const handWritten = (added: Contract['added'], more: Partial<Contract> = {}): Contract => ({ added, unknown: 'notFound', ...more });
const generic: Contract = { added: 'echo', replaced: 'none', unknown: 'foreignKey' };

const typeMismatch = (message: string) => new ApiError('role.type_mismatch', message);
/** Every role is of `type`; otherwise `mismatch` (by default ours, `role.type_mismatch`) names the first that is not. */
const roleTypes = (type: RoleDocument['type'], roles: Doc[], mismatch = (_role: Doc) => typeMismatch(`only ${type} roles can be assigned here`)) => {
  const wrong = roles.find((role) => (role as unknown as RoleDocument).type !== type);
  assertThat(!wrong, () => mismatch(wrong!));
};
const machineToMachine = (applications: Doc[]) =>
  assertThat(
    applications.every((app) => (app as unknown as ApplicationDocument).type === 'MachineToMachine'),
    () => typeMismatch('only machine-to-machine applications have roles'),
  );
const notBuiltIn = (role: Doc) =>
  assertThat(role._id !== builtIn.managementRoleId, () => new ApiError('role.built_in', 'the Management API access role is built in and cannot be changed'));

/** Every many-to-many relation the Management API exposes, and its rules. */
export const relations: Relation[] = [
  {
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
  },
  {
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
  },
  {
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
      assertThat(
        (application as unknown as ApplicationDocument).type === 'MachineToMachine',
        () => new ApiError('application.invalid_type', 'only machine-to-machine applications have roles'),
      ),
    check: (_application, roles) =>
      roleTypes(
        'MachineToMachine',
        roles,
        (role) => new ApiError('application.invalid_role_type', 'only MachineToMachine roles can be given to an application', { roleId: role._id }),
      ),
    contract: handWritten('ids', { replaced: 'ids' }),
  },
  {
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
  },
  {
    path: '/roles/:id/scopes',
    ownerParam: 'id',
    owner: sides.role,
    target: sides.scope,
    bodyKey: 'scopeIds',
    targetParam: 'scopeId',
    links: (q) => q.links.rolesScopes,
    action: 'scopes.updated',
    check: (role) => notBuiltIn(role),
    checkAdded: (role, scopes) => assertAssignable((role as unknown as RoleDocument).type, scopes as unknown as ScopeDocument[]),
    // packages/core/src/routes/role.scope.ts
    optionalPaging: true,
    contract: handWritten('all', { existing: { code: 'role.scope_exists', key: 'scopeId' } }),
  },
  {
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
    present: async (q, organizationId, users) => {
      const held = await Promise.all(users.map(({ _id }) => q.organizationUserRoles.rolesOf(organizationId, _id)));
      const roles = new Map((await q.organizationRoles.findByIds([...new Set(held.flat())])).map((role) => [role._id, role.name]));
      return users.map((user, index) => ({
        ...userToApi(user as unknown as UserDocument),
        // Sorted by name, as Logto shows them.
        organizationRoles: held[index].flatMap((id) => (roles.has(id) ? [{ id, name: roles.get(id)! }] : [])).sort(byName),
      }));
    },
    response: memberResponse(userResponse),
    // A member who leaves loses the organization roles it held there.
    afterRemove: (q, organizationId, userIds, session) => q.organizationUserRoles.removeMembership(organizationId, userIds, session),
    // packages/core/src/routes/organization/user/index.ts, through Logto's SchemaRouter
    contract: generic,
    searchedBy: ['_id', 'name', 'username', 'primaryEmail', 'primaryPhone'],
  },
  {
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
  },
  {
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
  },
];

export function relationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { db } = deps.database;
  const withOwnerLock = createOwnerLocks(db);
  for (const relation of relations) {
    const { path, ownerParam, targetParam, bodyKey, contract } = relation;
    const owners = createEntityQueries<Doc>(db, { collection: relation.owner.collection, label: relation.owner.label });
    const targets = createEntityQueries<Doc>(db, { collection: relation.target.collection, label: relation.target.label });
    const links = relation.links(deps.queries);
    // Change records name the ids as `addedScopeIds` / `removedScopeIds`.
    const changedKey = `${bodyKey[0].toUpperCase()}${bodyKey.slice(1)}`;
    const recorded = recordedChange(relation.owner.entity, relation.action);

    const change = async (
      origin: ReturnType<typeof originOf>,
      ownerId: string,
      apply: (session: ClientSession | undefined) => Promise<{ added: string[]; removed: string[] }>,
    ) => {
      // One write at a time to an owner's set (its read, difference and write), in every process.
      await withOwnerLock(`${path}:${ownerId}`, () =>
        deps.write(origin, async ({ session, intend, record }) => {
          // Read only when the intent is stored (without transactions, for a change that announces an event).
          await intend({ ...recorded, id: ownerId, before: () => links.rightsOf(ownerId, session) });
          const applied = await apply(session);
          const added = await keepLive(ownerId, applied.added, session);
          const { removed } = applied;
          if (removed.length > 0) await relation.afterRemove?.(deps.queries, ownerId, removed, session);
          // Recorded (and announced) even when it changed nothing, as Logto announces every such write.
          record({ ...recorded, id: ownerId, data: { [`added${changedKey}`]: added, [`removed${changedKey}`]: removed } });
        }),
      );
    };

    /**
     * Checked again after linking: a target (or the owner) deleted meanwhile, whose delete removed
     * its links before ours were written, must not keep ours. Either its delete comes after this
     * read, and removes our link itself (it deletes the document first, then its links), or this
     * read sees it gone and removes the link here. Answers the added ids still linked.
     */
    const keepLive = async (ownerId: string, added: string[], session: ClientSession | undefined) => {
      if (added.length === 0) return added;
      if (!(await owners.findById(ownerId, session))) {
        for (const id of added) await links.remove(ownerId, id, session);
        throw notFound(relation.owner.label, ownerId);
      }
      return keepLiveTargets(links, ownerId, added, targets.findByIds, session);
    };

    const unknownId = (error: unknown) => (contract.unknown === 'foreignKey' ? asBrokenForeignKey(error) : Promise.reject(error));

    const ownerOrThrow = async (ownerId: string, session?: ClientSession) => {
      const owner = await owners.findByIdOrThrow(ownerId, session);
      relation.checkOwner?.(owner);
      return owner;
    };

    /** The owner and the named targets, checked in the unit of work that then links or unlinks them. */
    const checked = async (ownerId: string, targetIds: string[], adding: boolean, session: ClientSession | undefined) => {
      const owner = await ownerOrThrow(ownerId, session);
      const found = await targets.assertAllExist(targetIds, session);
      relation.check?.(owner, found);
      if (adding) relation.checkAdded?.(owner, found);
      return found;
    };

    const listOf = async (ownerId: string, filter: Document, page?: Page) => {
      const found = await targets.find(filter, page);
      return relation.present ? relation.present(deps.queries, ownerId, found) : found.map(relation.target.toApi);
    };
    const answerSchema = { type: 'array', items: relation.response ?? relation.target.response } as const;

    const listQuery = paginationQuery({ q: { type: 'string', maxLength: 256 } });
    router.get(path, guard({ params: idParams(ownerParam), query: listQuery, response: answerSchema }), async (ctx) => {
      const ownerId = ctx.guard.params[ownerParam];
      await ownerOrThrow(ownerId);
      const { q } = ctx.guard.query;
      const searched = q && relation.searchedBy ? { $or: relation.searchedBy.map((field) => ({ [field]: containsPattern(q) })) } : {};
      const filter = { _id: { $in: await links.rightsOf(ownerId) }, ...searched };
      const page = pageOrAll(ctx.guard.query, { optional: relation.optionalPaging === true });
      const [total, answer] = await Promise.all([page && targets.count(filter), listOf(ownerId, filter, page)]);
      setPageHeaders(ctx, page, total);
      ctx.body = answer;
    });

    /**
     * A body's ids may repeat (each is taken once). POST needs at least one, except where Logto's
     * answers name the ids added (there, an empty list changes nothing); PUT may empty the set.
     */
    const bodyOf = (minItems: number) =>
      ({
        type: 'object',
        properties: { [bodyKey]: { type: 'array', items: idSchema, minItems, maxItems: 100 } as const },
        required: [bodyKey],
        additionalProperties: false,
      }) as const;
    const idsIn = (body: Record<string, unknown>) => [...new Set(body[bodyKey] as string[])];
    const addedKey = `added${changedKey}`;
    const ids = { type: 'array', items: { type: 'string' } } as const;
    const idsAnswer = { type: 'object', properties: { [bodyKey]: ids, [addedKey]: ids } } as const;

    const postAnswer = {
      ids: { status: 201, response: idsAnswer },
      echo: { status: 201, response: { type: 'object', properties: { [bodyKey]: ids } } },
      targets: { status: 201, response: answerSchema },
      all: { status: 200, response: answerSchema },
    }[contract.added];
    router.post(path, guard({ params: idParams(ownerParam), body: bodyOf(contract.added === 'ids' ? 0 : 1), ...postAnswer }), async (ctx) => {
      const ownerId = ctx.guard.params[ownerParam];
      const named = idsIn(ctx.guard.body);
      let linked: Doc[] = [];
      let added: string[] = [];
      await change(originOf(ctx), ownerId, async (session) => {
        linked = await checked(ownerId, named, true, session).catch(unknownId);
        if (contract.existing) {
          const held = new Set(await links.rightsOf(ownerId, session));
          const already = named.find((id) => held.has(id));
          if (already !== undefined) {
            throw new ApiError(contract.existing.code, `the ${relation.owner.label} already has the ${relation.target.label} \`${already}\``, {
              [contract.existing.key]: already,
            });
          }
        }
        added = await links.add(ownerId, named, session);
        return { added, removed: [] };
      });
      ctx.status = postAnswer.status;
      if (contract.added === 'ids') ctx.body = { [bodyKey]: named, [addedKey]: added };
      else if (contract.added === 'echo') ctx.body = { [bodyKey]: named };
      else if (contract.added === 'all') ctx.body = await listOf(ownerId, { _id: { $in: await links.rightsOf(ownerId) } });
      // The targets the request named, now linked.
      else ctx.body = relation.present ? await relation.present(deps.queries, ownerId, linked) : linked.map(relation.target.toApi);
    });

    if (relation.replace) {
      const answersIds = contract.replaced === 'ids';
      router.put(
        path,
        guard({ params: idParams(ownerParam), body: bodyOf(0), status: answersIds ? 200 : 204, ...(answersIds && { response: idsAnswer }) }),
        async (ctx) => {
          const ownerId = ctx.guard.params[ownerParam];
          const named = idsIn(ctx.guard.body);
          await change(originOf(ctx), ownerId, async (session) => {
            await checked(ownerId, named, true, session).catch(unknownId);
            return links.replace(ownerId, named, session);
          });
          if (answersIds) ctx.body = { [bodyKey]: named };
          else ctx.status = 204;
        },
      );
    }

    router.delete(`${path}/:${targetParam}`, guard({ params: idParams(ownerParam, targetParam) }), async (ctx) => {
      const { [ownerParam]: ownerId, [targetParam]: targetId } = ctx.guard.params;
      await change(originOf(ctx), ownerId, async (session) => {
        await checked(ownerId, [targetId], false, session);
        assertThat(await links.remove(ownerId, targetId, session), () => notFound(`${relation.owner.label}'s ${relation.target.label}`, targetId));
        return { added: [], removed: [targetId] };
      }).catch((error: unknown) => (contract.unknown === 'foreignKey' ? asNothingDeleted(error) : Promise.reject(error)));
      ctx.status = 204;
    });
  }
}
