import type { ParameterizedContext } from 'koa';

import type { Origin } from '../lib/store/changes.js';

export type RouteContext = ParameterizedContext & { params?: Record<string, string>; _matchedRoute?: string | RegExp };

/** The request behind a write, as its change records (and the webhooks they announce) keep it. */
export function originOf(ctx: RouteContext): Origin {
  const userAgent = ctx.get('user-agent');
  return {
    method: ctx.method,
    path: ctx.path,
    ...(typeof ctx._matchedRoute === 'string' && { route: ctx._matchedRoute }),
    params: { ...ctx.params },
    // The status the route's guard declares for success: the change commits only if the request succeeds.
    status: ctx.state.successStatus ?? 200,
    // A person acting through the console is named, not the console's application.
    ...(ctx.state.auth?.userId ? { type: 'user' as const, id: ctx.state.auth.userId } : ctx.state.auth?.clientId && { clientId: ctx.state.auth.clientId }),
    ip: ctx.ip,
    ...(userAgent && { userAgent }),
  };
}
