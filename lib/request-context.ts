import { AsyncLocalStorage } from 'node:async_hooks';

import type { Middleware } from 'koa';

import { generateId } from './ids.js';

/** What one request is, as its log lines need it: its id, and what the layer that answered it found out (its route, its client). */
interface RequestState {
  requestId: string;
  route?: string;
  clientId?: string;
}

const storage = new AsyncLocalStorage<RequestState>();

/** Notes the matched route and the calling client, for the request's access-log line. */
export function noteRequest(found: { route?: string | undefined; clientId?: string | undefined }) {
  const state = storage.getStore();
  if (!state) return;
  if (found.route) state.route = found.route;
  if (found.clientId) state.clientId = found.clientId;
}

/** The request's state, as the access log reads it. */
export const currentRequest = (): Readonly<RequestState> | undefined => storage.getStore();

/** The id of the request being served, if any: on its log lines, its change records and the events they announce. */
export const currentRequestId = (): string | undefined => storage.getStore()?.requestId;

/** A caller's own `X-Request-Id` is kept when it is a plain token; anything else gets a fresh id. */
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives each request an id (the caller's `X-Request-Id` when it looks like one, else a new one),
 * answers it in `X-Request-Id` (and Logto's `Logto-Core-Request-Id`), and makes it current for everything the request does. A request
 * that already has one (an outer layer of ours set it) keeps it.
 */
export const requestIds: Middleware = async (ctx, next) => {
  const current = currentRequestId();
  if (current) {
    ctx.state.requestId = current;
    return next();
  }
  const given = ctx.get('x-request-id');
  const requestId = acceptable.test(given) ? given : generateId();
  ctx.state.requestId = requestId;
  ctx.set('X-Request-Id', requestId);
  // Logto's name for it, which its clients and SDKs read.
  ctx.set('Logto-Core-Request-Id', requestId);
  await storage.run({ requestId }, next);
};

/** Runs `work` as part of the request `requestId` (a webhook delivery of what it announced). */
export const withRequestId = <T>(requestId: string | undefined, work: () => T): T => (requestId ? storage.run({ requestId }, work) : work());
