import type { TypedSchema } from '../../lib/http/guard.js';
import { freeFormObject } from './common.js';
import { idList } from './roles.js';
import { brandingSchema, colorSchema } from './applications.js';
import { organizationResponse, organizationRoleTypes } from '../../lib/shapes.js';

const name = { type: 'string', minLength: 1, maxLength: 128 } as const;
const description = { type: ['string', 'null'], maxLength: 2048 } as const;

// An organization's look (Logto's `branding` and `color`): the sign-in pages take it when the authorization request names the organization.
const look = { branding: brandingSchema, color: colorSchema } as const;

export const organizationCreateSchema = {
  type: 'object',
  properties: { name, description, customData: freeFormObject, isMfaRequired: { type: 'boolean' }, ...look },
  required: ['name'],
  additionalProperties: false,
} as const;
export const organizationPatchSchema = {
  type: 'object',
  properties: { name, description, customData: freeFormObject, isMfaRequired: { type: 'boolean' }, ...look },
  additionalProperties: false,
} as const;

/** An organization with a member's roles there, as Logto's `organizationWithRolesGuard`. */
export const organizationWithRolesResponse = {
  type: 'object',
  properties: {
    ...organizationResponse.properties,
    organizationRoles: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'] } },
  },
  required: [...organizationResponse.required, 'organizationRoles'],
} as const;

/** Organization permissions and roles share one shape: a unique name and a description. */
export const namedCreateSchema = <const E extends Record<string, TypedSchema> = Record<never, never>>(extra?: E) =>
  ({
    type: 'object',
    properties: { name, description, ...(extra as E) },
    required: ['name'],
    additionalProperties: false,
  }) as const;
export const namedPatchSchema = { type: 'object', properties: { name, description }, additionalProperties: false } as const;

export const organizationRoleCreateSchema = namedCreateSchema({
  organizationScopeIds: idList(),
  // API resource permissions (Logto's `resourceScopeIds`), and the role's type (`User` unless said).
  resourceScopeIds: idList(),
  type: { enum: organizationRoleTypes },
});

export const memberResponse = (userResponse: Record<string, unknown>) => ({
  type: 'object',
  properties: {
    ...(userResponse.properties as Record<string, unknown>),
    organizationRoles: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'] } },
  },
  required: [...(userResponse.required as string[]), 'organizationRoles'],
});
