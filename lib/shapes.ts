import { roleTypes } from './store/models.js';

/**
 * The shapes of entities as both the Management API answers them and webhook events carry them
 * (`hooks/event-schemas.ts` derives its schemas from these): one definition, so that an event and
 * the API can never describe one entity two ways.
 */

/** Epoch milliseconds, as Logto's timestamps. */
const timestamp = { type: 'number' } as const;

export const organizationResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    customData: { type: 'object', additionalProperties: true },
    isMfaRequired: { type: 'boolean' },
    branding: { type: 'object', additionalProperties: true },
    color: { type: 'object', additionalProperties: true },
    createdAt: timestamp,
    // With `showFeatured=true` only.
    usersCount: { type: 'integer' },
    featuredUsers: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'string' }, avatar: { type: ['string', 'null'] }, name: { type: ['string', 'null'] } } },
    },
  },
  required: ['id', 'name', 'description', 'customData', 'isMfaRequired', 'branding', 'color', 'createdAt'],
} as const;

export const organizationScopeResponse = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, description: { type: ['string', 'null'] }, createdAt: timestamp },
  required: ['id', 'name', 'description', 'createdAt'],
} as const;

/** Logto's organization role types. */
export const organizationRoleTypes = ['User', 'MachineToMachine'] as const;

export const organizationRoleResponse = {
  type: 'object',
  properties: {
    ...organizationScopeResponse.properties,
    type: { enum: organizationRoleTypes },
    scopes: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'] } },
    resourceScopes: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          resource: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'] },
        },
        required: ['id', 'name', 'resource'],
      },
    },
  },
  required: ['id', 'name', 'description', 'createdAt', 'type', 'scopes', 'resourceScopes'],
} as const;

export const roleResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    type: { enum: roleTypes },
    isDefault: { type: 'boolean' },
    createdAt: timestamp,
  },
  required: ['id', 'name', 'description', 'type', 'isDefault'],
} as const;

const scopeResponseProperties = {
  id: { type: 'string' },
  resourceId: { type: 'string' },
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  createdAt: timestamp,
} as const;

export const scopeResponse = { type: 'object', properties: scopeResponseProperties, required: ['id', 'resourceId', 'name', 'createdAt'] } as const;
