import type { Filter } from 'mongodb';

import { emailKey } from '../lib/identifiers.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { newUser, userChanges, userToApi, type UserDocument } from '../lib/store/models.js';
import { pageOf, setPageHeaders } from '../lib/http/pagination.js';
import { parseSearch, searchFilter } from '../lib/http/search.js';
import { requirePhone } from '../lib/phone.js';
import { importedDigestProblem, importedHash } from '../lib/password.js';
import { assignDefaultRoles } from '../lib/store/default-roles.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, paginationQuery } from './schemas/common.js';
import { organizationWithRolesResponse } from './schemas/organizations.js';
import { organizationsOfMember } from './organizations/memberships.js';
import {
  customDataBody,
  passwordBody,
  profileBody,
  suspensionBody,
  userCreateSchema,
  userListQuery,
  userPatchSchema,
  userResponse,
  type UserEditable,
} from './schemas/users.js';

const listQuery = paginationQuery(userListQuery);

/** The fields Logto searches users by, in its spellings (camel and snake case), and where we store each. */
const searchFields: Record<string, string> = {
  id: '_id',
  username: 'username',
  primaryEmail: 'primaryEmail',
  primary_email: 'primaryEmail',
  primaryPhone: 'primaryPhone',
  primary_phone: 'primaryPhone',
  name: 'name',
};

/** A phone number in its one stored form (E.164 digits), or 422 `user.invalid_phone` for one that cannot exist. */

/** The identifying fields as stored: the email also under its lower-cased key, the phone normalized, for uniqueness. */
function identifiers(body: UserEditable): Partial<UserDocument> {
  return {
    ...(body.username !== undefined && { username: body.username }),
    ...(body.primaryEmail !== undefined && { primaryEmail: body.primaryEmail, emailKey: body.primaryEmail === null ? null : emailKey(body.primaryEmail) }),
    ...(body.primaryPhone !== undefined && { primaryPhone: body.primaryPhone === null ? null : requirePhone(body.primaryPhone, 'body.primaryPhone') }),
    ...(body.name !== undefined && { name: body.name }),
    ...(body.avatar !== undefined && { avatar: body.avatar }),
  };
}

export function userRoutes(router: ApiRouter, deps: ManagementDeps) {
  const {
    queries: { users },
    queries,
  } = deps;

  /** Updates one user in a unit of work and records the change as `action`. */
  const updateUser = (
    origin: ReturnType<typeof originOf>,
    userId: string,
    action: 'updated' | 'suspension.updated',
    set: (current: UserDocument) => Promise<Partial<UserDocument>> | Partial<UserDocument>,
  ) =>
    deps.write(origin, async ({ intend, record }) => {
      const current = await users.findByIdOrThrow(userId);
      await intend({ entity: 'User', action, id: userId });
      const updated = await users.update(userId, { ...(await set(current)), updatedAt: Date.now() });
      record({ entity: 'User', action, id: userId, data: userToApi(updated), changes: userChanges(current, updated) });
      return updated;
    });

  router.get('/users', guard({ query: listQuery, response: { type: 'array', items: userResponse } }), async (ctx) => {
    const { excludeRoleId, excludeOrganizationId } = ctx.guard.query;
    // As Logto's (admin-user/search.ts): one exclusion at a time, 422.
    assertThat(
      !(excludeRoleId && excludeOrganizationId),
      () => new ApiError('request.invalid_input', 'Parameter `excludeRoleId` and `excludeOrganizationId` cannot be used at the same time.', undefined, 422),
    );
    const search = parseSearch(ctx.URL.searchParams, Object.keys(searchFields));
    const filter = searchFilter<UserDocument>(search, searchFields);
    const excluded = excludeRoleId
      ? await deps.queries.links.rolesUsers.rightsOf(excludeRoleId)
      : excludeOrganizationId
        ? await deps.queries.links.organizationUsers.rightsOf(excludeOrganizationId)
        : [];
    const scoped: Filter<UserDocument> = excluded.length > 0 ? { $and: [filter, { _id: { $nin: excluded } }] } : filter;
    const page = pageOf(ctx.guard.query);
    const [total, found] = await deps.searching(search, (limits) => Promise.all([users.count(scoped, limits), users.find(scoped, page, limits)]));
    setPageHeaders(ctx, page, total);
    ctx.body = found.map(userToApi);
  });

  // Logto answers a create here with 200.
  router.post('/users', guard({ body: userCreateSchema, response: userResponse, status: 200 }), async (ctx) => {
    const { password, passwordDigest, passwordAlgorithm, customData, profile, ...fields } = ctx.guard.body;
    // Logto's rules and codes for an imported digest (admin-user/basics.ts); its shape and cost are checked too.
    assertThat(!(password && passwordDigest), () => new ApiError('user.password_and_digest', 'give either password or passwordDigest, not both'));
    assertThat(!passwordDigest || passwordAlgorithm, () => new ApiError('user.password_algorithm_required', 'passwordDigest needs its passwordAlgorithm'));
    const digestProblem = passwordDigest && importedDigestProblem(passwordAlgorithm!, passwordDigest);
    assertThat(!digestProblem, () => new ApiError('guard.invalid_input', `body.passwordDigest ${digestProblem}`, { field: 'body.passwordDigest' }));
    const passwordHash = passwordDigest
      ? importedHash(passwordAlgorithm!, passwordDigest)
      : password === undefined
        ? null
        : await deps.passwords.hash(password);
    const user = newUser({ ...identifiers(fields), customData, profile, passwordHash });
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'User', action: 'created', id: user._id });
      await users.insert(user);
      record({ entity: 'User', action: 'created', id: user._id, data: userToApi(user) });
      await assignDefaultRoles(queries, { intend, record }, user._id);
    });
    ctx.body = userToApi(user);
  });

  // `includeSsoIdentities` (Logto's): the user's enterprise SSO identities beside the rest.
  router.get(
    '/users/:userId',
    guard({
      params: idParams('userId'),
      query: { type: 'object', properties: { includeSsoIdentities: { type: 'string', maxLength: 8 } } },
      response: userResponse,
    }),
    async (ctx) => {
      const user = await users.findByIdOrThrow(ctx.guard.params.userId);
      const include = ['true', '1', 'yes'].includes(ctx.guard.query.includeSsoIdentities ?? '');
      ctx.body = {
        ...userToApi(user),
        ...(include && { ssoIdentities: (user.ssoIdentities ?? []).map((identity) => ({ ...identity, userId: user._id })) }),
      };
    },
  );

  // Logto's read-only views of a user (packages/core/src/routes/admin-user/basics.ts, organization.ts).
  router.get('/users/:userId/custom-data', guard({ params: idParams('userId'), response: { type: 'object', additionalProperties: true } }), async (ctx) => {
    ctx.body = (await users.findByIdOrThrow(ctx.guard.params.userId)).customData;
  });
  router.get(
    '/users/:userId/has-password',
    guard({ params: idParams('userId'), response: { type: 'object', properties: { hasPassword: { type: 'boolean' } }, required: ['hasPassword'] } }),
    async (ctx) => {
      ctx.body = { hasPassword: (await users.findByIdOrThrow(ctx.guard.params.userId)).passwordHash !== null };
    },
  );
  // The organizations a user is a member of, each with the user's roles there (sorted by name); not paged, as in Logto.
  router.get(
    '/users/:userId/organizations',
    guard({ params: idParams('userId'), response: { type: 'array', items: organizationWithRolesResponse } }),
    async (ctx) => {
      const { userId } = ctx.guard.params;
      await users.findByIdOrThrow(userId);
      ctx.body = await organizationsOfMember(queries, 'user', userId);
    },
  );

  router.patch('/users/:userId', guard({ params: idParams('userId'), body: userPatchSchema, response: userResponse }), async (ctx) => {
    const { customData, profile, ...fields } = ctx.guard.body;
    // As in Logto, customData and profile given here replace the old ones whole.
    ctx.body = userToApi(
      await updateUser(originOf(ctx), ctx.guard.params.userId, 'updated', () => ({
        ...identifiers(fields),
        ...(customData !== undefined && { customData }),
        ...(profile !== undefined && { profile }),
      })),
    );
  });

  // Partial updates of one free-form field: merged into what is there, answered with the result.
  const mergedFields = [
    { path: '/users/:userId/custom-data', field: 'customData', body: customDataBody },
    { path: '/users/:userId/profile', field: 'profile', body: profileBody },
  ] as const;
  for (const { path, field, body } of mergedFields) {
    router.patch(path, guard({ params: idParams('userId'), body, response: { type: 'object', additionalProperties: true } }), async (ctx) => {
      const updated = await updateUser(originOf(ctx), ctx.guard.params.userId, 'updated', (current) => ({
        [field]: { ...current[field], ...(ctx.guard.body as Record<typeof field, object>)[field] },
      }));
      ctx.body = updated[field];
    });
  }

  // Logto's `logto-configs`, as far as this service keeps one: whether the user skipped enrolling a second factor.
  const logtoConfigResponse = {
    type: 'object',
    properties: { mfa: { type: 'object', properties: { skipped: { type: 'boolean' } }, required: ['skipped'] } },
    required: ['mfa'],
  } as const;
  const logtoConfigOf = (user: UserDocument) => ({ mfa: { skipped: user.mfaSkipped === true } });
  router.get('/users/:userId/logto-configs', guard({ params: idParams('userId'), response: logtoConfigResponse }), async (ctx) => {
    ctx.body = logtoConfigOf(await users.findByIdOrThrow(ctx.guard.params.userId));
  });
  router.patch(
    '/users/:userId/logto-configs',
    guard({
      params: idParams('userId'),
      body: {
        type: 'object',
        properties: { mfa: { type: 'object', properties: { skipped: { type: 'boolean' } }, additionalProperties: false } },
        additionalProperties: false,
      } as const,
      response: logtoConfigResponse,
    }),
    async (ctx) => {
      const skipped = ctx.guard.body.mfa?.skipped;
      const { userId } = ctx.guard.params;
      const user =
        skipped === undefined ? await users.findByIdOrThrow(userId) : await updateUser(originOf(ctx), userId, 'updated', () => ({ mfaSkipped: skipped }));
      ctx.body = logtoConfigOf(user);
    },
  );

  router.patch('/users/:userId/password', guard({ params: idParams('userId'), body: passwordBody, response: userResponse }), async (ctx) => {
    const passwordHash = await deps.passwords.hash(ctx.guard.body.password);
    ctx.body = userToApi(await updateUser(originOf(ctx), ctx.guard.params.userId, 'updated', () => ({ passwordHash })));
  });

  router.post(
    '/users/:userId/password/verify',
    guard({ params: idParams('userId'), body: { ...passwordBody, properties: { password: { type: 'string', minLength: 1, maxLength: 256 } } } }),
    async (ctx) => {
      const user = await users.findByIdOrThrow(ctx.guard.params.userId);
      // Logto's answer either way (its verifyUserPassword): 422 session.invalid_credentials.
      const invalid = () => new ApiError('session.invalid_credentials', 'the password does not match');
      assertThat(user.passwordHash, invalid);
      assertThat(await deps.passwords.verify(ctx.guard.body.password, user.passwordHash), invalid);
      ctx.status = 204;
    },
  );

  router.patch('/users/:userId/is-suspended', guard({ params: idParams('userId'), body: suspensionBody, response: userResponse }), async (ctx) => {
    const {
      params: { userId },
      body: { isSuspended },
    } = ctx.guard;
    ctx.body = userToApi(
      await updateUser(originOf(ctx), userId, 'suspension.updated', async (_current) => {
        // A suspended user keeps its data but loses every live session, grant and token.
        if (isSuspended) await deps.revokeAccount(userId, 'suspension');
        return { isSuspended };
      }),
    );
  });

  router.delete('/users/:userId', guard({ params: idParams('userId') }), async (ctx) => {
    const { userId } = ctx.guard.params;
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'User', action: 'deleted', id: userId });
      const before = await users.delete(userId);
      await queries.links.usersRoles.removeAllOfLeft(userId);
      await queries.links.organizationUsers.removeAllOfRight(userId);
      await queries.organizationUserRoles.removeAllOfMember(userId);
      await queries.consentOrganizations.removeAllOfUser(userId);
      await queries.personalAccessTokens.removeAllOfUser(userId);
      await deps.revokeAccount(userId, 'deletion');
      record({ entity: 'User', action: 'deleted', id: userId, data: userToApi(before) });
    });
    ctx.status = 204;
  });
}
