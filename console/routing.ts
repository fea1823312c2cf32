import type { ParameterizedContext } from 'koa';

import type { MessageKey } from '../i18n/index.js';
import type { Admitted } from './access.js';
import type { Answer, Dispatch } from './dispatch.js';
import { messagePage } from './views.js';

/** The console's gate for a route (`index.ts`): a live, admitted session, and for a form its origin and token. */
export type Admit = (ctx: ParameterizedContext, next: () => Promise<unknown>) => Promise<unknown>;
/** Answers a page with the console's headers. */
export type Draw = (ctx: ParameterizedContext, body: string, status?: number) => void;

/** The session and page the gate admitted the request with. */
export const admittedOf = (ctx: ParameterizedContext) => ctx.state.console as Admitted;
/** The form the gate read (a POST's fields). */
export const formOf = (ctx: ParameterizedContext) => ctx.state.form as URLSearchParams;

/** What the Management API said was wrong, in its own words. */
export const messageOf = (answer: Answer) => (answer.body as { message?: string } | undefined)?.message ?? String(answer.status);
/** The field the API's error names (`data.field`, such as `body.reason`), when it names one. */
export const apiFieldOf = (answer: Answer) => {
  const field = (answer.body as { data?: { field?: unknown } } | undefined)?.data?.field;
  return typeof field === 'string' ? field : undefined;
};
/**
 * The status a page answers a refused action with: the API's 404, 409 and 501 (nothing set up to do
 * it, such as no email connector) as they are, another 4xx as 400, anything worse as 503. With
 * `notFoundIsInput`, a 404 is about an id the form gave (a user to add), so the form is the bad input: 400.
 */
export const refusedStatus = (answer: Answer, { notFoundIsInput = false } = {}) =>
  answer.status === 404 && notFoundIsInput ? 400 : [404, 409, 501].includes(answer.status) ? answer.status : answer.status >= 500 ? 503 : 400;

/** The page that says the thing a route names does not exist, with the way back to its list. */
export function drawNotFound(ctx: ParameterizedContext, draw: Draw, text: string, back: string) {
  const { page } = admittedOf(ctx);
  draw(ctx, messagePage(page, page.t.t('console.error.title'), text, { href: `${page.base}${back}`, label: page.t.t('console.back') }), 404);
}

/** Answers the POST with a redirect to a page of the console (POST, then redirect). */
export function seeOther(ctx: ParameterizedContext, path: string) {
  ctx.status = 303;
  ctx.redirect(`${admittedOf(ctx).page.base}${path}`);
}

/**
 * The Management API as the admitted administrator: `api` answers whatever the route answered;
 * `read` answers a GET's body, and throws (a 500 page, logged) when the route fails.
 */
export function managementCaller(dispatch: Dispatch) {
  const api = (ctx: ParameterizedContext, method: string, path: string, body?: unknown): Promise<Answer> =>
    dispatch(ctx, admittedOf(ctx).session.userId, method, path, body);
  /** The answer of a GET that must succeed; a refusal here is the console's fault, not the visitor's. */
  const got = async (ctx: ParameterizedContext, path: string): Promise<Answer> => {
    const answer = await api(ctx, 'GET', path);
    if (answer.status !== 200) throw new Error(`${path} could not be read: ${answer.status} ${messageOf(answer)}`);
    return answer;
  };
  const read = async <T>(ctx: ParameterizedContext, path: string): Promise<T> => (await got(ctx, path)).body as T;
  /** One page of a list, and how many there are in all (`Total-Number`; undefined when the answer lacks it). */
  const readPage = async <T>(ctx: ParameterizedContext, path: string, page: number, size: number): Promise<{ items: T[]; total?: number }> => {
    const answer = await got(ctx, `${path}${path.includes('?') ? '&' : '?'}page=${page}&page_size=${size}`);
    const total = answer.headers['total-number'];
    return { items: answer.body as T[], ...(total !== undefined && { total: Number(total) }) };
  };
  /** The first page of a list, and how many there are in all. */
  const readFirst = async <T>(ctx: ParameterizedContext, path: string, size = 100): Promise<{ items: T[]; total: number }> => {
    const { items, total = items.length } = await readPage<T>(ctx, path, 1, size);
    return { items, total };
  };
  /**
   * A whole list, a page of 100 at a time: what a choice offers (roles to give, permissions to add)
   * must not stop at the first page. At most `limit` items, for a page that must stay drawable.
   */
  const readAll = async <T>(ctx: ParameterizedContext, path: string, limit = 5000): Promise<T[]> => {
    const all: T[] = [];
    for (let page = 1; all.length < limit; page += 1) {
      const { items, total } = await readPage<T>(ctx, path, page, 100);
      all.push(...items);
      if (items.length < 100 || (total !== undefined && all.length >= total)) break;
    }
    return all;
  };
  return { api, read, readFirst, readAll };
}

/** The notice a redirect after a change names (`?done=`), among the page's own, translated. */
export function noticeOf<K extends string>(ctx: ParameterizedContext, notices: Record<K, MessageKey>): string | undefined {
  const done = ctx.query.done;
  return typeof done === 'string' && Object.hasOwn(notices, done) ? admittedOf(ctx).page.t.t(notices[done as K]) : undefined;
}
