import { roleTypes } from '../../lib/store/models.js';
import { idSchema, searchQuery } from './common.js';

export const idList = (maxItems = 100) => ({ type: 'array', items: idSchema, minItems: 1, maxItems, uniqueItems: true }) as const;

const roleFields = {
  name: { type: 'string', minLength: 1, maxLength: 128 },
  description: { type: 'string', maxLength: 2048 },
  isDefault: { type: 'boolean' },
} as const;

export const roleCreateSchema = {
  type: 'object',
  properties: { ...roleFields, type: { enum: roleTypes }, scopeIds: idList() },
  required: ['name'],
  additionalProperties: false,
} as const;

export const rolePatchSchema = { type: 'object', properties: roleFields, additionalProperties: false } as const;

export const roleListQuery = {
  type: { enum: roleTypes },
  excludeUserId: { type: 'string', maxLength: 128 },
  excludeApplicationId: { type: 'string', maxLength: 128 },
  ...searchQuery,
} as const;
