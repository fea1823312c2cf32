import type { Middleware } from 'koa';

import { ApiError, assertThat } from '../lib/errors.js';
import type { AccountApiDeps, AccountState } from './context.js';

const invalidToken = (message: string) => new ApiError('auth.invalid_token', message);

/**
 * Who is calling: the user's access token for this provider (an opaque token without an API
 * audience, as UserInfo takes), of a first-party application, for an account that exists and is
 * not suspended. A token of a third-party application is 403; a token for an API (an impersonation
 * token among them), of another kind, expired or revoked is 401.
 */
export function authenticate({ provider, queries }: Pick<AccountApiDeps, 'provider' | 'queries'>): Middleware<AccountState> {
  return async (ctx, next) => {
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
    ctx.state.auth = { clientId: token!.clientId!, scopes: new Set((token!.scope ?? '').split(' ').filter(Boolean)), sessionUid: token!.sessionUid };
    ctx.state.user = user!;
    await next();
  };
}
