import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { originOf } from '../management/origin.js';
import { grantsTargetQuery, grantViewSchema, sessionViewSchema } from '../provider/session-schemas.js';
import { accountPrefix, type AccountApiDeps, type AccountKit, type AccountRouter } from './context.js';

/** Logto's user scope for session management: no claims, only these routes. */
export const sessionsScope = 'urn:logto:scope:sessions';

const scopes = [sessionsScope];
const id = { type: 'string', minLength: 1, maxLength: 128 } as const;
const sessionsAnswer = {
  type: 'object',
  properties: { sessions: { type: 'array', items: { ...sessionViewSchema, properties: { ...sessionViewSchema.properties, isCurrent: { type: 'boolean' } } } } },
  required: ['sessions'],
} as const;
const grantsAnswer = { type: 'object', properties: { grants: { type: 'array', items: grantViewSchema } }, required: ['grants'] } as const;

/**
 * Logto's Account API for the user's own sessions and grants (account/sessions.ts, grants.ts):
 * with the `urn:logto:scope:sessions` scope and a step-up (`logto-verification-id`), as Logto asks,
 * since a session list tells where the user signs in from. Reading checks the step-up; ending a
 * session or a grant spends it in the unit of work that ends them, which announces them
 * (`Session.Revoked`, `Grant.Revoked` with `cause: "user"`).
 */
export function accountSessionRoutes(router: AccountRouter, kit: AccountKit, deps: Pick<AccountApiDeps, 'sessions' | 'announceEnded' | 'write'>) {
  const { sessions } = deps;
  const notFound = () => new ApiError('oidc.session_not_found', 'no live session of yours has this id', undefined, 404);

  router.get(`${accountPrefix}/sessions`, guard({ scopes, response: sessionsAnswer }), async (ctx) => {
    await kit.assertStepUpUsable(ctx.state, kit.stepUpOf(ctx));
    const current = ctx.state.auth.sessionUid;
    ctx.body = { sessions: (await sessions.list(ctx.state.user._id)).map((session) => ({ ...session, isCurrent: session.payload.uid === current })) };
  });

  router.delete(
    `${accountPrefix}/sessions/:sessionId`,
    guard({ scopes, params: { type: 'object', properties: { sessionId: id }, required: ['sessionId'] }, query: grantsTargetQuery, status: 204 }),
    async (ctx) => {
      const { state } = ctx;
      const stepUp = kit.stepUpOf(ctx);
      await kit.assertStepUpUsable(state, stepUp);
      // Another user's session is as unknown as none: the answer tells nothing of it.
      assertThat((await sessions.ownerOf(ctx.guard.params.sessionId)) === state.user._id, notFound);
      await deps.write(originOf(ctx), async () => {
        await kit.spendStepUp(state, stepUp);
        const ended = await sessions.end(state.user._id, { uid: ctx.guard.params.sessionId, target: ctx.guard.query.revokeGrantsTarget });
        assertThat(ended.sessions.length > 0, notFound);
        await deps.announceEnded(state.user._id, ended, 'user');
      });
      ctx.status = 204;
    },
  );

  router.get(
    `${accountPrefix}/grants`,
    guard({
      scopes,
      query: { type: 'object', properties: { appType: { enum: ['firstParty', 'thirdParty'] } }, additionalProperties: false },
      response: grantsAnswer,
    }),
    async (ctx) => {
      await kit.assertStepUpUsable(ctx.state, kit.stepUpOf(ctx));
      ctx.body = { grants: await sessions.grants(ctx.state.user._id, ctx.guard.query.appType) };
    },
  );

  router.delete(
    `${accountPrefix}/grants/:grantId`,
    guard({ scopes, params: { type: 'object', properties: { grantId: id }, required: ['grantId'] }, status: 204 }),
    async (ctx) => {
      const { state } = ctx;
      const stepUp = kit.stepUpOf(ctx);
      await kit.assertStepUpUsable(state, stepUp);
      await deps.write(originOf(ctx), async () => {
        await kit.spendStepUp(state, stepUp);
        const ended = await sessions.revokeGrant(state.user._id, ctx.guard.params.grantId);
        assertThat(ended.grants.length > 0, () => new ApiError('oidc.invalid_grant', 'you have no such grant', undefined, 404));
        await deps.announceEnded(state.user._id, ended, 'user');
      });
      ctx.status = 204;
    },
  );
}
