import { absoluteUri, timestamp } from './common.js';
import { scopeResponse } from '../../lib/shapes.js';

const resourceFields = {
  name: { type: 'string', minLength: 1, maxLength: 256 },
  /** Access tokens for this resource live this many seconds. */
  accessTokenTtl: { type: 'integer', minimum: 60, maximum: 86400 },
} as const;

export const resourceCreateSchema = {
  type: 'object',
  properties: { ...resourceFields, indicator: absoluteUri },
  required: ['name', 'indicator'],
  additionalProperties: false,
} as const;

export const resourcePatchSchema = {
  type: 'object',
  properties: resourceFields,
  additionalProperties: false,
} as const;

export const resourceResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    indicator: { type: 'string' },
    isDefault: { type: 'boolean' },
    accessTokenTtl: { type: 'integer' },
    createdAt: timestamp,
    scopes: { type: 'array', items: scopeResponse },
  },
  required: ['id', 'name', 'indicator', 'isDefault', 'accessTokenTtl'],
} as const;

/** RFC 6749 §3.3: a scope token is printable ASCII without space, quote or backslash. */
const scopeName = { type: 'string', minLength: 1, maxLength: 256, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' } as const;
const scopeDescription = { type: ['string', 'null'], maxLength: 2048 } as const;

export const scopeCreateSchema = {
  type: 'object',
  properties: { name: scopeName, description: scopeDescription },
  required: ['name'],
  additionalProperties: false,
} as const;

export const scopePatchSchema = {
  type: 'object',
  properties: { name: scopeName, description: scopeDescription },
  additionalProperties: false,
} as const;
