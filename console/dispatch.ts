import { IncomingMessage, ServerResponse } from 'node:http';

import type Koa from 'koa';
import type { Middleware, ParameterizedContext } from 'koa';
import compose from 'koa-compose';

import { ApiError } from '../lib/errors.js';
import { managementScope } from '../management/bootstrap.js';
import { consoleBuiltIn } from './built-in.js';

/** What a Management API route answered the console. */
export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the route's JSON, read by the page that asked
  headers: Record<string, string | string[] | number | undefined>;
}

/** The administrator a call is made for, as the console's session proved them. */
interface Acting {
  userId: string;
}

/**
 * The Management API's authentication for calls the console makes in process: the administrator
 * the console's session admitted, with the whole API (the console permission is that), and named
 * as the origin of every change (`origin: {type: 'user', id}`). A request that did not come
 * through the console has no administrator and is refused.
 */
export const consoleAuthentication: Middleware = async (ctx, next) => {
  const acting = ctx.state.consoleActing as Acting | undefined;
  if (!acting) throw new ApiError('auth.forbidden', 'only the console calls these routes');
  ctx.state.auth = { clientId: consoleBuiltIn.applicationId, scopes: new Set([managementScope]), userId: acting.userId };
  await next();
};

/**
 * Calls the Management API's own handlers, in process, for the administrator of a console
 * request: the same guards, write path and errors as `/api` over HTTP, with the browser's address
 * and user agent for the change records. Nothing reaches the browser but what the page draws.
 */
export function createDispatcher(api: Koa) {
  const handle = compose(api.middleware);
  return async function call(from: ParameterizedContext, userId: string, method: string, path: string, body?: unknown): Promise<Answer> {
    // A request of our own over the browser's connection, which it never reads: its address is the browser's.
    const req = new IncomingMessage(from.req.socket);
    req.method = method;
    req.url = path;
    const { 'user-agent': userAgent, 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': forwardedProto, host } = from.req.headers;
    req.headers = Object.fromEntries(
      Object.entries({ host, 'user-agent': userAgent, 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': forwardedProto }).filter(
        ([, value]) => value !== undefined,
      ),
    );
    const res = new ServerResponse(req);
    const ctx = api.createContext(req, res);
    ctx.state.consoleActing = { userId } satisfies Acting;
    if (body !== undefined) ctx.request.body = body;
    await handle(ctx);
    return { status: ctx.status, body: ctx.body, headers: ctx.response.headers as Answer['headers'] };
  };
}

export type Dispatch = ReturnType<typeof createDispatcher>;
