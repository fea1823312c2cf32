import type { IncomingMessage } from 'node:http';

import Router from '@koa/router';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { ApiError, assertThat } from '../lib/errors.js';
import type { ErrorLogger } from '../lib/http/api-errors.js';
import { jsonApiApp } from '../lib/http/api-app.js';
import { guard } from '../lib/http/guard.js';
import { jsonBody } from '../lib/http/json-body.js';
import { mountApp } from '../lib/http/mount.js';
import { userChanges, userToApi, type UserDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { ChangeKey } from '../hooks/catalog.js';
import { originOf } from '../management/origin.js';
import { profileSchema } from '../management/schemas/users.js';
import { usernamePattern } from '../experience/api.js';
import { createCounters } from '../experience/counters.js';
import { assertPasswordAllowed } from '../experience/password-policy.js';
import { hashPassword, verifyPassword } from '../lib/password.js';
import type { Db } from 'mongodb';
import { createVerificationRecords } from './verifications.js';

export const accountPrefix = '/api/my-account';
export const verificationsPrefix = '/api/verifications';
/** The header that carries a step-up verification record, as Logto names it. */
export const verificationHeader = 'logto-verification-id';

export interface AccountApiDeps {
  db: Db;
  provider: Provider;
  queries: Queries;
  write: Writer<ChangeKey>;
  bodyLimit: number;
  log: ErrorLogger;
  proxy: boolean;
  clientAddress: (req: IncomingMessage) => string;
}

/** Who is calling: the user of the access token, through which first-party application, with which scopes. */
interface AccountState {
  auth: { clientId: string; scopes: Set<string> };
  user: UserDocument;
}

const invalidToken = (message: string) => new ApiError('auth.invalid_token', message);

/** The account as its owner sees it, field by field as the token's scopes allow (OIDC Core §5.4). */
function accountView(user: UserDocument, scopes: Set<string>) {
  const { id, username, name, avatar, profile, primaryEmail, primaryPhone, hasPassword, createdAt, updatedAt, lastSignInAt } = userToApi(user);
  return {
    id,
    ...(scopes.has('profile') && { username, name, avatar, profile, createdAt, updatedAt, lastSignInAt, hasPassword }),
    ...(scopes.has('email') && { primaryEmail }),
    ...(scopes.has('phone') && { primaryPhone }),
  };
}

/** `{password}`, for the step-up and for a new password alike (the policy checks a new one). */
const passwordBody = {
  type: 'object',
  properties: { password: { type: 'string', minLength: 1, maxLength: 256 } },
  required: ['password'],
  additionalProperties: false,
} as const;

const accountResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    username: { type: ['string', 'null'] },
    name: { type: ['string', 'null'] },
    avatar: { type: ['string', 'null'] },
    profile: { type: 'object', additionalProperties: true },
    primaryEmail: { type: ['string', 'null'] },
    primaryPhone: { type: ['string', 'null'] },
    hasPassword: { type: 'boolean' },
    createdAt: { type: 'number' },
    updatedAt: { type: 'number' },
    lastSignInAt: { type: ['number', 'null'] },
  },
  required: ['id'],
} as const;

/**
 * Logto's Account API (`/api/my-account`): the signed-in user's own account, for the user's own
 * first-party application. Authorized by the user's access token for this provider (an opaque token
 * without an API audience, as UserInfo takes): a token of a third-party application is 403, a token
 * for an API (an impersonation token among them) or of another kind 401, and each field needs its
 * identity scope (`profile`, `email`, `phone`; 403 without it).
 */
export function accountApi(deps: AccountApiDeps): Middleware {
  const { provider, queries } = deps;
  const router = new Router<AccountState>();
  const records = createVerificationRecords(deps.db);
  // Wrong passwords at the step-up: 5 per account per 15 minutes, as at sign-in, so that a stolen token cannot guess the password.
  const counters = createCounters(deps.db);

  router.use(
    [accountPrefix, verificationsPrefix],
    async (ctx, next) => {
      const header = ctx.get('authorization');
      assertThat(header, () => new ApiError('auth.authorization_header_missing', 'the Authorization header is missing'));
      const [scheme, value] = header.split(' ');
      assertThat(scheme?.toLowerCase() === 'bearer' && value, () => invalidToken('the Authorization header is not a bearer token'));
      const token = await provider.AccessToken.find(value!);
      assertThat(token && token.accountId && token.clientId, () => invalidToken('the access token is invalid or has expired'));
      // A token for an API says nothing about the account: this is the identity provider's own resource.
      assertThat(token!.aud === undefined, () => invalidToken('the access token is for an API, not for the account'));
      const application = await queries.applications.findById(token!.clientId!);
      assertThat(application, () => invalidToken('the access token’s application no longer exists'));
      assertThat(!application!.isThirdParty, () => new ApiError('auth.forbidden', 'a third-party application cannot use the Account API'));
      const user = await queries.users.findById(token!.accountId!);
      assertThat(user && !user.isSuspended, () => invalidToken('the account does not exist or is suspended'));
      ctx.state.auth = { clientId: token!.clientId!, scopes: new Set((token!.scope ?? '').split(' ').filter(Boolean)) };
      ctx.state.user = user!;
      await next();
    },
    jsonBody(deps.bodyLimit),
  );

  router.get(accountPrefix, guard({ scopes: ['openid'], response: accountResponse }), async (ctx) => {
    ctx.body = accountView(ctx.state.user, ctx.state.auth.scopes);
  });

  /** Applies `set` to the caller's account in a unit of work, announced as `User.Data.Updated` with what changed. */
  const update = async (ctx: Parameters<typeof originOf>[0] & { state: AccountState }, set: Partial<UserDocument>) => {
    const userId = ctx.state.user._id;
    return deps.write(originOf(ctx), async ({ session, intend, record }) => {
      await intend({ entity: 'User', action: 'updated', id: userId });
      const before = await queries.users.findByIdOrThrow(userId, session);
      const after = await queries.users.update(userId, { ...set, updatedAt: Date.now() }, session);
      record({ entity: 'User', action: 'updated', id: userId, data: userToApi(after), changes: userChanges(before, after) });
      return after;
    });
  };

  router.patch(
    accountPrefix,
    guard({
      scopes: ['profile'],
      body: {
        type: 'object',
        properties: {
          name: { type: ['string', 'null'], maxLength: 128 },
          avatar: { type: ['string', 'null'], maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$' },
          username: { type: 'string', pattern: usernamePattern },
        },
        additionalProperties: false,
      },
      response: accountResponse,
    }),
    async (ctx) => {
      const after = await update(ctx, ctx.guard.body as Partial<UserDocument>);
      ctx.body = accountView(after, ctx.state.auth.scopes);
    },
  );

  router.patch(
    `${accountPrefix}/profile`,
    guard({ scopes: ['profile'], body: profileSchema, response: { type: 'object', additionalProperties: true } }),
    async (ctx) => {
      const after = await update(ctx, { profile: { ...ctx.state.user.profile, ...(ctx.guard.body as Record<string, unknown>) } });
      ctx.body = after.profile;
    },
  );

  // Step-up (Logto's `POST /api/verifications/password`): the password, checked now, answered with a record that
  // allows one sensitive change within ten minutes. A wrong one is 422; the fifth within 15 minutes locks (429).
  router.post(
    `${verificationsPrefix}/password`,
    guard({
      scopes: ['openid'],
      body: passwordBody,
      status: 201,
      response: {
        type: 'object',
        properties: { verificationRecordId: { type: 'string' }, expiresAt: { type: 'string' } },
        required: ['verificationRecordId', 'expiresAt'],
      },
    }),
    async (ctx) => {
      const { user, auth } = ctx.state;
      const attempt = await counters.hit('failedPassword', `step-up:${user._id}`);
      if (attempt.over) throw new ApiError('session.too_many_attempts', 'too many wrong passwords; try again later', { retryAfter: attempt.retryAfter });
      const matches = user.passwordHash !== null && (await verifyPassword(ctx.guard.body.password, user.passwordHash));
      if (!matches) {
        throw attempt.last
          ? new ApiError('session.too_many_attempts', 'too many wrong passwords; try again later', { retryAfter: attempt.retryAfter })
          : new ApiError('session.invalid_credentials', 'the password does not match');
      }
      await counters.clear('failedPassword', `step-up:${user._id}`);
      const record = await records.create(user._id, auth.clientId, 'password');
      ctx.status = 201;
      ctx.body = { verificationRecordId: record.id, expiresAt: record.expiresAt.toISOString() };
    },
  );

  /** The step-up this request carries, spent now: 401 without one, or with one expired, spent, or another's. */
  const spendStepUp = async (ctx: { get(name: string): string; state: AccountState }) => {
    const id = ctx.get(verificationHeader);
    assertThat(id, () => new ApiError('verification_record.permission_denied', `a recent verification is needed: send its id as ${verificationHeader}`));
    assertThat(
      await records.spend(id, ctx.state.user._id, ctx.state.auth.clientId),
      () => new ApiError('verification_record.permission_denied', 'the verification has expired, was used, or is not this account’s'),
    );
  };

  // A new password (Logto's `POST /api/my-account/password`): the policy's rules, a step-up, and the change announced.
  router.post(
    `${accountPrefix}/password`,
    guard({
      scopes: ['openid'],
      body: passwordBody,
      status: 204,
    }),
    async (ctx) => {
      const { user } = ctx.state;
      assertPasswordAllowed(ctx.guard.body.password, [user.username, user.primaryEmail]);
      await spendStepUp(ctx);
      await update(ctx, { passwordHash: await hashPassword(ctx.guard.body.password) });
      ctx.status = 204;
    },
  );

  const app = jsonApiApp(deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  const account = mountApp(accountPrefix, app);
  const verifications = mountApp(verificationsPrefix, app);
  return (ctx, next) => account(ctx, () => verifications(ctx, next));
}
