import { paginationQuerySchema } from '../../lib/http/pagination.js';
import type { Schema } from '../../lib/http/guard.js';

/** Ids are ours (21 lower-case alphanumerics) or an operator's bootstrap id: letters, digits and `._~-`. */
export const idSchema = { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' } as const;

export const idParams = (...names: string[]): Schema => ({
  type: 'object',
  properties: Object.fromEntries(names.map((name) => [name, idSchema])),
  required: names,
});

export const paginationQuery = (extra: Record<string, Schema> = {}): Schema => ({
  type: 'object',
  properties: { ...paginationQuerySchema, ...extra },
  additionalProperties: false,
});

/** A free-form JSON object kept as given (custom data, metadata): size-bounded by the body limit, keys checked. */
export const freeFormObject = { type: 'object', 'x-safe-keys': true } as const;

export const timestamp = { type: 'number' } as const;

export const absoluteUri = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+$' } as const;
