import type { Middleware } from 'koa';

import type { Logger } from '../logger.js';
import { currentRequest } from '../request-context.js';

/**
 * One line per request, once it is answered: method, path (never the query string, which can
 * carry codes and tokens), the route that answered it, status, duration and the calling client.
 * Runs inside `requestIds`, whose state the inner layers fill with the route and the client.
 */
export function accessLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const request = currentRequest();
      // A mounted app answers on the raw response: its status is there.
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      logger.info('request', {
        method: ctx.method,
        path: ctx.path,
        ...(request?.route && { route: request.route }),
        status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...(request?.clientId && { clientId: request.clientId }),
      });
    }
  };
}
