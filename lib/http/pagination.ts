import type { Page } from '../store/models.js';

/** Pagination as Logto does it: `page` (from 1) and `page_size`, the total in a `Total-Number` header. */

export const defaultPageSize = 20;
export const maxPageSize = 100;

export const paginationQuerySchema = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000 },
  page_size: { type: 'integer', minimum: 1, maximum: maxPageSize },
} as const;

export function pageOf(query: { page?: number; page_size?: number }): Page {
  const limit = query.page_size ?? defaultPageSize;
  return { skip: ((query.page ?? 1) - 1) * limit, limit };
}
