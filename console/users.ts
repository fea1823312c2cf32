import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import type { Dispatch } from './dispatch.js';
import type { ConsoleStore } from './store.js';
import { admittedOf, drawNotFound, messageOf, refusedStatus, seeOther, type Admit, type Draw, noticeOf } from './routing.js';
import { userActionRoutes } from './user-actions.js';
import { confirmPage, userLabel, usersPage, userPage, type ApiUser, type UserDetail } from './user-views.js';
import { pageNumberOf } from './views.js';

const pageSize = 20;
/** The notices a redirect after an action names, by key. */
const notices = {
  suspended: 'console.user.suspend.done',
  reactivated: 'console.user.reactivate.done',
  password: 'console.user.password.done',
  factor: 'console.user.factor.done',
  unlinked: 'console.user.identity.done',
  session: 'console.user.session.done',
  signedOut: 'console.user.signOutEverywhere.done',
} as const;

/** Answers the user the route names (the Management API's answer), or draws the page that says there is none and answers undefined. */
export function userLoader(dispatch: Dispatch, draw: Draw) {
  return async function userOf(ctx: ParameterizedContext): Promise<ApiUser | undefined> {
    const { session, page } = admittedOf(ctx);
    const found = await dispatch(ctx, session.userId, 'GET', `/api/users/${encodeURIComponent(ctx.params.userId!)}`);
    if (found.status === 200) return found.body as ApiUser;
    drawNotFound(ctx, draw, page.t.t('console.user.notFound'), '/users');
    return undefined;
  };
}

/** The users pages: Logto's search, a user's detail, and what may be done to a user (each change confirmed on its own page). */
export function userRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw, store: Pick<ConsoleStore, 'reveal' | 'takeReveal'>) {
  const userOf = userLoader(dispatch, draw);

  router.get('/users', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const search = typeof ctx.query.search === 'string' ? ctx.query.search.trim().slice(0, 256) : '';
    const number = pageNumberOf(ctx.query.page);
    // As Logto's console asks: the words anywhere in a field (`like`, its wildcards in them escaped).
    const pattern = `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
    const query = new URLSearchParams({ page: String(number), page_size: String(pageSize), ...(search && { search: pattern }) });
    const answer = await dispatch(ctx, session.userId, 'GET', `/api/users?${query.toString()}`);
    if (answer.status !== 200) throw new Error(`the users could not be listed: ${answer.status} ${JSON.stringify(answer.body)}`);
    const total = Number(answer.headers['total-number'] ?? 0);
    const link = (to: number) => `${page.base}/users?${new URLSearchParams({ ...(search && { search }), page: String(to) }).toString()}`;
    draw(
      ctx,
      usersPage(page, {
        users: answer.body as ApiUser[],
        search,
        total,
        from: (number - 1) * pageSize + 1,
        previous: number > 1 ? link(number - 1) : undefined,
        next: number * pageSize < total ? link(number + 1) : undefined,
        notice: ctx.query.done === 'deleted' ? page.t.t('console.user.delete.done') : undefined,
      }),
    );
  });

  router.get('/users/:userId', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const user = await userOf(ctx);
    if (!user) return;
    const of = (path: string) => dispatch(ctx, session.userId, 'GET', `/api/users/${encodeURIComponent(user.id)}${path}`);
    const [roles, factors, sessions, organizations] = await Promise.all([of('/roles'), of('/mfa-verifications'), of('/sessions'), of('/organizations')]);
    const listed = <T>(answer: typeof roles, read: (body: any) => T[]): T[] => (answer.status === 200 ? read(answer.body) : []); // eslint-disable-line @typescript-eslint/no-explicit-any
    const detail: UserDetail = {
      roles: listed(roles, (body) => body),
      factors: listed(factors, (body) => body),
      sessions: listed(sessions, (body) => body.sessions),
      organizations: listed(organizations, (body) => body),
    };
    const { token } = admittedOf(ctx);
    const generated = await store.takeReveal(token, session, user.id);
    draw(ctx, userPage(page, { user, detail, notice: noticeOf(ctx, notices), generated: generated?.value }));
  });

  for (const action of ['suspend', 'reactivate'] as const) {
    const confirm = (ctx: ParameterizedContext, user: ApiUser, error?: string) => {
      const { t } = admittedOf(ctx).page;
      return confirmPage(admittedOf(ctx).page, {
        user,
        action,
        title: t.t(`console.user.${action}.title`, { user: userLabel(user) }),
        lead: t.t(`console.user.${action}.lead`),
        button: t.t(`console.user.${action}`),
        error,
      });
    };
    router.get(`/users/:userId/${action}`, admitted, async (ctx) => {
      const user = await userOf(ctx);
      if (user) draw(ctx, confirm(ctx, user));
    });
    // Logto's PATCH /api/users/:userId/is-suspended, through the API's own handler.
    router.post(`/users/:userId/${action}`, admitted, async (ctx) => {
      const { session } = admittedOf(ctx);
      const user = await userOf(ctx);
      if (!user) return;
      // Suspending the account in use would lock its administrator out of the console that asked.
      if (action === 'suspend' && user.id === session.userId) return draw(ctx, confirm(ctx, user, admittedOf(ctx).page.t.t('console.user.notToSelf')), 400);
      const answer = await dispatch(ctx, session.userId, 'PATCH', `/api/users/${encodeURIComponent(user.id)}/is-suspended`, {
        isSuspended: action === 'suspend',
      });
      if (answer.status !== 200) return draw(ctx, confirm(ctx, user, messageOf(answer)), refusedStatus(answer));
      seeOther(ctx, `/users/${encodeURIComponent(user.id)}?done=${action === 'suspend' ? 'suspended' : 'reactivated'}`);
    });
  }

  userActionRoutes(router, admitted, dispatch, draw, userOf, store);
}
