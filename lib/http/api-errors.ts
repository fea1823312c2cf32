import type { Middleware } from 'koa';

import { ApiError } from '../errors.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../store/availability.js';

export type ErrorLogger = (error: unknown, context: { method: string; path: string }) => void;

/** Statuses that Koa or the router raise themselves, with our code for each. */
const frameworkErrors: Record<number, ApiError['code']> = {
  400: 'guard.invalid_input',
  413: 'guard.payload_too_large',
  415: 'guard.unsupported_media_type',
};

const unansweredRoutes: Record<number, ApiError['code']> = {
  404: 'route.not_found',
  405: 'route.method_not_allowed',
  501: 'route.method_not_implemented',
};
const routeProblems: Partial<Record<ApiError['code'], string>> = {
  'route.not_found': 'matches no route',
  'route.method_not_allowed': 'is not allowed on this route (see the Allow header)',
  'route.method_not_implemented': 'uses a method the Management API does not implement',
};

/**
 * Answers every failure of the Management API as JSON `{ code, message }`: never HTML, never a
 * stack. Errors we did not expect are logged and reported as a bare 500.
 */
export function apiErrors(log: ErrorLogger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // The router leaves 404, and 405 or 501 with `Allow`, as a bare status.
      const code = ctx.body === undefined ? unansweredRoutes[ctx.status] : undefined;
      if (code) throw new ApiError(code, `${ctx.method} ${ctx.path} ${routeProblems[code]}`);
    } catch (error) {
      const known = error instanceof ApiError ? error : isDatabaseUnavailable(error) ? databaseUnavailable() : fromFramework(error);
      // Our own faults too (a response that does not fit its schema), not only the unexpected.
      if (!known || known.status >= 500) log(error, { method: ctx.method, path: ctx.path });
      const answer = known ?? new ApiError('internal_error', 'internal server error');
      ctx.status = answer.status;
      ctx.body = {
        code: answer.code,
        message: answer.expose ? answer.message : 'internal server error',
        ...(answer.expose && answer.data && { data: answer.data }),
      };
      // RFC 6750 §3: no error code when the request carried no credentials at all.
      if (answer.code === 'auth.authorization_header_missing') ctx.set('WWW-Authenticate', 'Bearer');
      else if (answer.status === 401) ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
      if (answer.status === 403 && answer.code.startsWith('auth.')) ctx.set('WWW-Authenticate', 'Bearer error="insufficient_scope"');
      const retryAfter = answer.data?.retryAfter;
      // A limit or a lockout (429, or Logto's 400 for a locked account) and an outage say when to come back.
      if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
    }
  };
}

function fromFramework(error: unknown): ApiError | undefined {
  const { status, expose, message } = (error ?? {}) as { status?: number; expose?: boolean; message?: string };
  const code = status === undefined ? undefined : frameworkErrors[status];
  return code && expose ? new ApiError(code, message ?? code) : undefined;
}
