import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import type { Admitted } from './access.js';
import type { Dispatch } from './dispatch.js';
import { confirmPage, usersPage, userPage, type ApiUser } from './user-views.js';
import { messagePage, pageNumberOf } from './views.js';

type Admit = (ctx: ParameterizedContext, next: () => Promise<unknown>) => Promise<unknown>;
type Draw = (ctx: ParameterizedContext, body: string, status?: number) => void;

const pageSize = 20;
/** The notices a redirect after an action names, by key. */
const notices = { suspended: 'console.user.suspend.done', reactivated: 'console.user.reactivate.done' } as const;

/** The users pages: Logto's search, a user's detail, suspending and reactivating (each confirmed on its own page). */
export function userRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const admittedOf = (ctx: ParameterizedContext) => ctx.state.console as Admitted;

  /** The user the route names, or the page that says there is none (answers undefined then). */
  async function userOf(ctx: ParameterizedContext): Promise<ApiUser | undefined> {
    const { session, page } = admittedOf(ctx);
    const found = await dispatch(ctx, session.userId, 'GET', `/api/users/${encodeURIComponent(ctx.params.userId!)}`);
    if (found.status === 200) return found.body as ApiUser;
    draw(
      ctx,
      messagePage(page, page.t.t('console.error.title'), page.t.t('console.user.notFound'), { href: `${page.base}/users`, label: page.t.t('console.back') }),
      404,
    );
    return undefined;
  }

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
      }),
    );
  });

  router.get('/users/:userId', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const user = await userOf(ctx);
    if (!user) return;
    const [roles, factors] = await Promise.all([
      dispatch(ctx, session.userId, 'GET', `/api/users/${encodeURIComponent(user.id)}/roles`),
      dispatch(ctx, session.userId, 'GET', `/api/users/${encodeURIComponent(user.id)}/mfa-verifications`),
    ]);
    const done = typeof ctx.query.done === 'string' && Object.hasOwn(notices, ctx.query.done) ? notices[ctx.query.done as keyof typeof notices] : undefined;
    draw(
      ctx,
      userPage(page, {
        user,
        roles: roles.status === 200 ? (roles.body as Array<{ name: string }>) : [],
        factors: factors.status === 200 ? (factors.body as Array<{ type: string }>) : [],
        notice: done && page.t.t(done),
      }),
    );
  });

  for (const action of ['suspend', 'reactivate'] as const) {
    router.get(`/users/:userId/${action}`, admitted, async (ctx) => {
      const user = await userOf(ctx);
      if (user) draw(ctx, confirmPage(admittedOf(ctx).page, { user, action }));
    });
    // Logto's PATCH /api/users/:userId/is-suspended, through the API's own handler.
    router.post(`/users/:userId/${action}`, admitted, async (ctx) => {
      const { session, page } = admittedOf(ctx);
      const user = await userOf(ctx);
      if (!user) return;
      const answer = await dispatch(ctx, session.userId, 'PATCH', `/api/users/${encodeURIComponent(user.id)}/is-suspended`, {
        isSuspended: action === 'suspend',
      });
      if (answer.status !== 200) {
        const message = (answer.body as { message?: string } | undefined)?.message ?? String(answer.status);
        draw(ctx, confirmPage(page, { user, action, error: message }), answer.status >= 500 ? 503 : 400);
        return;
      }
      ctx.status = 303;
      ctx.redirect(`${page.base}/users/${encodeURIComponent(user.id)}?done=${action === 'suspend' ? 'suspended' : 'reactivated'}`);
    });
  }
}
