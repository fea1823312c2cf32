import type { IncomingMessage } from 'node:http';

import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { ApiError, assertThat } from '../lib/errors.js';
import { apiErrors, type ErrorLogger } from '../lib/http/api-errors.js';
import { useClientAddress } from '../lib/http/client-address.js';
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

export const accountPrefix = '/api/my-account';

export interface AccountApiDeps {
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
  const router = new Router<AccountState>({ prefix: accountPrefix });

  router.use(async (ctx, next) => {
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
  }, jsonBody(deps.bodyLimit));

  router.get('/', guard({ scopes: ['openid'], response: accountResponse }), async (ctx) => {
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
    '/',
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

  router.patch('/profile', guard({ scopes: ['profile'], body: profileSchema, response: { type: 'object', additionalProperties: true } }), async (ctx) => {
    const after = await update(ctx, { profile: { ...ctx.state.user.profile, ...(ctx.guard.body as Record<string, unknown>) } });
    ctx.body = after.profile;
  });

  const app = new Koa();
  app.silent = true;
  app.proxy = deps.proxy;
  app.use(useClientAddress(deps.clientAddress));
  app.use(apiErrors(deps.log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return mountApp(accountPrefix, app);
}
