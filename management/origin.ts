import type { ParameterizedContext } from 'koa';

import type { Origin } from '../lib/unit-of-work.js';

/** The request behind a write, as its change records keep it. */
export function originOf(ctx: ParameterizedContext & { params?: Record<string, string>; _matchedRoute?: string | RegExp }): Origin {
  return {
    method: ctx.method,
    path: ctx.path,
    ...(typeof ctx._matchedRoute === 'string' && { route: ctx._matchedRoute }),
    params: { ...ctx.params },
    ...(ctx.state.auth?.clientId && { clientId: ctx.state.auth.clientId }),
  };
}
