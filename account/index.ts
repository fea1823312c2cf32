import Router from '@koa/router';
import type { Middleware } from 'koa';

import { jsonApiApp } from '../lib/http/api-app.js';
import { jsonBody } from '../lib/http/json-body.js';
import { mountApp } from '../lib/http/mount.js';
import { authenticate } from './authentication.js';
import { accountPrefix, verificationsPrefix, type AccountApiDeps, type AccountState } from './context.js';
import { identifierRoutes } from './identifiers.js';
import { accountIdentityRoutes } from './identities.js';
import { createAccountKit } from './kit.js';
import { accountMfaRoutes } from './mfa.js';
import { profileRoutes } from './profile.js';
import { accountSessionRoutes } from './sessions.js';
import { stepUpRoutes } from './step-up.js';

export { accountPrefix, verificationsPrefix, verificationHeader, type AccountApiDeps } from './context.js';

/**
 * Logto's Account API (`/api/my-account`, and its `/api/verifications`): the signed-in user's own
 * account, for the user's own first-party application, authorized by the user's access token
 * (account/authentication.ts). Each field needs its identity scope (`profile`, `email`, `phone`;
 * 403 without it); every sensitive change needs a step-up (account/step-up.ts), spent in the unit
 * of work that makes the change and announced as `User.Data.Updated`.
 */
export function accountApi(deps: AccountApiDeps): Middleware {
  const router = new Router<AccountState>();
  const kit = createAccountKit(deps);
  router.use([accountPrefix, verificationsPrefix], authenticate(deps), jsonBody(deps.bodyLimit));

  profileRoutes(router, kit);
  stepUpRoutes(router, kit, deps);
  identifierRoutes(router, kit, deps);
  accountMfaRoutes(router, kit, deps);
  accountIdentityRoutes(router, kit, { ...deps, origin: deps.rp.origin });
  accountSessionRoutes(router, kit, deps);

  const app = jsonApiApp(deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  const account = mountApp(accountPrefix, app);
  const verifications = mountApp(verificationsPrefix, app);
  return (ctx, next) => account(ctx, () => verifications(ctx, next));
}
