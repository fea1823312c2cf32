import type { Context } from 'koa';

import type { Page } from '../store/models.js';

/**
 * Pagination as Logto's (packages/core/src/middleware/koa-pagination.ts): `page` (from 1) and
 * `page_size`; a paged answer gives the total in a `Total-Number` header and the neighbouring pages
 * in `Link` (RFC 8288). Where Logto makes it optional, a request without either parameter gets
 * every row and neither header.
 */

export const defaultPageSize = 20;
export const maxPageSize = 100;

export const paginationQuerySchema = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000 },
  page_size: { type: 'integer', minimum: 1, maximum: maxPageSize },
} as const;

export interface PageQuery {
  page?: number;
  page_size?: number;
}

export function pageOf(query: PageQuery): Page {
  const limit = query.page_size ?? defaultPageSize;
  return { skip: ((query.page ?? 1) - 1) * limit, limit };
}

/** The page asked for; none (every row) when the list's paging is optional and the request names neither parameter. */
export function pageOrAll(query: PageQuery, { optional }: { optional: boolean }): Page | undefined {
  return optional && query.page === undefined && query.page_size === undefined ? undefined : pageOf(query);
}

/** Sets `Total-Number` and the `Link` header of a paged answer; an unpaged one gets neither. */
export function setPageHeaders(ctx: Pick<Context, 'set' | 'append' | 'URL'>, page: Page | undefined, total: number | undefined) {
  if (!page || total === undefined) return;
  ctx.set('Total-Number', String(total));
  const last = Math.max(1, Math.ceil(total / page.limit));
  const current = Math.floor(page.skip / page.limit) + 1;
  const link = (number: number, rel: string) => {
    const url = new URL(ctx.URL.href);
    url.searchParams.set('page', String(number));
    return `<${url.pathname}${url.search}>; rel="${rel}"`;
  };
  const links = [link(1, 'first'), link(last, 'last')];
  if (current > 1) links.push(link(Math.min(current - 1, last), 'prev'));
  if (current < last) links.push(link(current + 1, 'next'));
  ctx.set('Link', links.join(', '));
}
