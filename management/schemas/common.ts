import { paginationQuerySchema } from '../../lib/http/pagination.js';
import type { TypedSchema } from '../../lib/http/guard.js';

/** Ids are ours (21 lower-case alphanumerics) or an operator's bootstrap id: letters, digits and `._~-`. */
export const idSchema = { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' } as const;

/** Path parameters that are ids, each required. */
export const idParams = <const N extends readonly string[]>(...names: N) =>
  ({
    type: 'object',
    properties: Object.fromEntries(names.map((name) => [name, idSchema])) as { [K in N[number]]: typeof idSchema },
    required: names,
  }) as const;

/** A page of a list (`page`, `page_size`) and the list's own filters; nothing else. */
export const paginationQuery = <const E extends Record<string, TypedSchema> = Record<never, never>>(extra?: E) =>
  ({
    type: 'object',
    properties: { ...paginationQuerySchema, ...(extra as E) },
    additionalProperties: false,
  }) as const;

/** A search value: one, or several of them (`exact` mode); read from the query string by lib/http/search.ts. */
export const searchValue = {
  anyOf: [
    { type: 'string', maxLength: 256 },
    { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 20 },
  ],
} as const;

/** Logto's search parameters (`search.<field>` and `mode.<field>` are read as well), named for the API reference. */
export const searchQuery = {
  search: searchValue,
  // Checked by the search itself, which answers Logto's code for a bad one.
  mode: { type: 'string', maxLength: 16, description: 'like (the default), exact, similar_to or posix' },
  joint: { type: 'string', maxLength: 8, description: 'or (the default) or and' },
  isCaseSensitive: { type: 'string', maxLength: 8, description: 'true or false (the default)' },
} as const;

/** A free-form JSON object kept as given (custom data, metadata): size-bounded by the body limit, keys checked. */
export const freeFormObject = { type: 'object', 'x-safe-keys': true } as const;

export const timestamp = { type: 'number' } as const;

export const absoluteUri = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+$' } as const;
