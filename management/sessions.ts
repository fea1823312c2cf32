import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { grantsTargetQuery, grantViewSchema, sessionViewSchema } from '../provider/session-schemas.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams } from './schemas/common.js';

const sessionsAnswer = { type: 'object', properties: { sessions: { type: 'array', items: sessionViewSchema } }, required: ['sessions'] } as const;
const grantsAnswer = { type: 'object', properties: { grants: { type: 'array', items: grantViewSchema } }, required: ['grants'] } as const;
const appTypeQuery = { type: 'object', properties: { appType: { enum: ['firstParty', 'thirdParty'] } }, additionalProperties: false } as const;

/**
 * Logto's session and grant routes for a user (admin-user/session.ts, grants.ts): see a user's
 * sessions (where each began, when it was last active) and grants, end one, and, beyond Logto,
 * end every session at once ("sign out everywhere"). Each session and grant ended is announced
 * (`Session.Revoked`, `Grant.Revoked` with `cause: "administrator"`) in the unit of work that ends it.
 */
export function sessionRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { sessions } = deps;

  /** 404 as Logto answers it: no such live session, or another user's. */
  async function assertSessionOf(userId: string, uid: string) {
    const owner = await sessions.ownerOf(uid);
    assertThat(owner !== undefined, () => new ApiError('oidc.session_not_found', 'no live session has this id', undefined, 404));
    assertThat(owner === userId, () => new ApiError('oidc.invalid_session_account_id', 'the session is not this user’s', undefined, 404));
  }

  router.get('/users/:userId/sessions', guard({ params: idParams('userId'), response: sessionsAnswer }), async (ctx) => {
    ctx.body = { sessions: await sessions.list(ctx.guard.params.userId) };
  });

  router.get('/users/:userId/sessions/:sessionId', guard({ params: idParams('userId', 'sessionId'), response: sessionViewSchema }), async (ctx) => {
    const { userId, sessionId } = ctx.guard.params;
    await assertSessionOf(userId, sessionId);
    const found = await sessions.find(userId, sessionId);
    assertThat(found, () => new ApiError('oidc.session_not_found', 'no live session has this id', undefined, 404));
    ctx.body = found;
  });

  router.delete(
    '/users/:userId/sessions/:sessionId',
    guard({ params: idParams('userId', 'sessionId'), query: grantsTargetQuery, status: 204 }),
    async (ctx) => {
      const { userId, sessionId } = ctx.guard.params;
      await assertSessionOf(userId, sessionId);
      await deps.write(originOf(ctx), async () => {
        const ended = await sessions.end(userId, { uid: sessionId, target: ctx.guard.query.revokeGrantsTarget });
        // Ended meanwhile by another request, which announced it.
        assertThat(ended.sessions.length > 0, () => new ApiError('oidc.session_not_found', 'no live session has this id', undefined, 404));
        await deps.announceEnded(userId, ended, 'administrator');
      });
      ctx.status = 204;
    },
  );

  // Ours: "sign out everywhere". Every live session of the user ends, with the grants `revokeGrantsTarget` names.
  router.delete(
    '/users/:userId/sessions',
    guard({ params: idParams('userId'), query: grantsTargetQuery, status: 204, summary: 'End every session of the user (sign out everywhere)' }),
    async (ctx) => {
      const { userId } = ctx.guard.params;
      await deps.write(originOf(ctx), async () => {
        const ended = await sessions.end(userId, { target: ctx.guard.query.revokeGrantsTarget });
        await deps.announceEnded(userId, ended, 'administrator');
      });
      ctx.status = 204;
    },
  );

  router.get('/users/:userId/grants', guard({ params: idParams('userId'), query: appTypeQuery, response: grantsAnswer }), async (ctx) => {
    ctx.body = { grants: await sessions.grants(ctx.guard.params.userId, ctx.guard.query.appType) };
  });

  router.delete('/users/:userId/grants/:grantId', guard({ params: idParams('userId', 'grantId'), status: 204 }), async (ctx) => {
    const { userId, grantId } = ctx.guard.params;
    await deps.write(originOf(ctx), async () => {
      const ended = await sessions.revokeGrant(userId, grantId);
      assertThat(ended.grants.length > 0, () => new ApiError('oidc.invalid_grant', 'the user has no such grant', undefined, 404));
      await deps.announceEnded(userId, ended, 'administrator');
    });
    ctx.status = 204;
  });
}
