import type { Middleware } from 'koa';
import Provider, { errors } from 'oidc-provider';

import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../lib/store/availability.js';

const description = 'the service cannot reach its database at the moment; retry later';

/**
 * oidc-provider's `temporarily_unavailable` (RFC 6749 §4.1.2.1) with the status a client retries
 * on: at the authorization endpoint it is the error the client is redirected with, at the others
 * a 503 answer.
 */
function temporarilyUnavailable(cause: unknown): Error {
  const error = new errors.TemporarilyUnavailable(description, { cause });
  Object.assign(error, { status: 503, statusCode: 503, expose: true });
  return error;
}

/**
 * Wraps each method of an adapter (or any object of async functions the provider calls) so that a
 * database that cannot be reached becomes `temporarily_unavailable` rather than a 500.
 */
export function reportingUnavailability<T extends object>(target: T): T {
  // Each method wrapped once, on first use (the token endpoint calls them on every request).
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, key, receiver) {
      const value: unknown = Reflect.get(object, key, receiver);
      if (typeof value !== 'function') return value;
      let method = wrapped.get(key);
      if (!method)
        wrapped.set(key, (method = failingAsUnavailable((...args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(object, args))));
      return method;
    },
  });
}

/** Wraps one async function the same way (`findAccount`, a grant's lookups). */
export function failingAsUnavailable<A extends unknown[], R>(fn: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (error) {
      throw isDatabaseUnavailable(error) ? temporarilyUnavailable(error) : error;
    }
  };
}

/**
 * Answers the provider's requests that met an unreachable database with 503 and `Retry-After`:
 * those whose error was converted at its source, and, as a backstop, any other that reached the
 * provider's error handler as a `server_error` (its JSON body then names the real error).
 */
export function answerUnavailability(provider: Provider): void {
  provider.on('server_error', (ctx, error) => {
    if (!isDatabaseUnavailable(error)) return;
    ctx.status = 503;
    const body: unknown = ctx.body;
    if (body && typeof body === 'object' && !Buffer.isBuffer(body) && (body as { error?: unknown }).error === 'server_error') {
      ctx.body = { error: 'temporarily_unavailable', error_description: description };
    }
  });
  const retryAfter: Middleware = async (ctx, next) => {
    await next();
    if (ctx.status === 503) ctx.set('Retry-After', String(databaseRetryAfterSeconds));
  };
  provider.use(retryAfter);
}
