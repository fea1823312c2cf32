import { importedAlgorithms } from '../../lib/password.js';
import { phoneInput } from '../../lib/phone.js';
import type { FromSchema } from 'json-schema-to-ts';

import { email, username } from '../../lib/identifiers.js';
import { absoluteUri, freeFormObject, searchQuery, searchValue, timestamp } from './common.js';

/** The schema, admitting `null` too. */
const nullable = <const T extends { type: string }>(schema: T) =>
  ({ ...schema, type: [schema.type, 'null'] }) as Omit<T, 'type'> & { readonly type: readonly [T['type'], 'null'] };

/** Logto's rule: a phone number is digits only. */
/** As a person types one: digits with an optional `+`, spaces, dots, dashes and parentheses; normalized to E.164 digits (lib/phone.ts). */
export const phone = phoneInput;
export const password = { type: 'string', minLength: 8, maxLength: 256 } as const;

const shortText = { type: 'string', maxLength: 256 } as const;

/** OIDC standard claims (OpenID Connect Core §5.1) in Logto's camel case. */
export const profileSchema = {
  type: 'object',
  properties: {
    familyName: shortText,
    givenName: shortText,
    middleName: shortText,
    nickname: shortText,
    preferredUsername: shortText,
    profile: absoluteUri,
    website: absoluteUri,
    gender: shortText,
    birthdate: { type: 'string', pattern: '^\\d{4}(-\\d{2}-\\d{2})?$' },
    zoneinfo: shortText,
    locale: { type: 'string', maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' },
    address: {
      type: 'object',
      properties: {
        formatted: { type: 'string', maxLength: 1024 },
        streetAddress: shortText,
        locality: shortText,
        region: shortText,
        postalCode: { type: 'string', maxLength: 32 },
        country: shortText,
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const editable = {
  username: nullable(username),
  primaryEmail: nullable(email),
  primaryPhone: nullable(phone),
  name: nullable({ type: 'string', maxLength: 128 }),
  avatar: nullable(absoluteUri),
  customData: freeFormObject,
  profile: profileSchema,
} as const;

export const userCreateSchema = {
  type: 'object',
  // `passwordDigest` with `passwordAlgorithm`: a password hashed elsewhere, imported as Logto imports it.
  properties: { ...editable, password, passwordDigest: { type: 'string', minLength: 1, maxLength: 1024 }, passwordAlgorithm: { enum: importedAlgorithms } },
  additionalProperties: false,
} as const;

export const userPatchSchema = { type: 'object', properties: editable, additionalProperties: false } as const;

export type UserEditable = FromSchema<typeof userPatchSchema>;

export const customDataBody = { type: 'object', properties: { customData: freeFormObject }, required: ['customData'], additionalProperties: false } as const;
export const profileBody = { type: 'object', properties: { profile: profileSchema }, required: ['profile'], additionalProperties: false } as const;
export const passwordBody = { type: 'object', properties: { password }, required: ['password'], additionalProperties: false } as const;
export const suspensionBody = {
  type: 'object',
  properties: { isSuspended: { type: 'boolean' } },
  required: ['isSuspended'],
  additionalProperties: false,
} as const;

/** Logto's user search (its admin-user/search.ts): every `search.<field>` and `mode.<field>` is read, these are named. */
export const userListQuery = {
  ...searchQuery,
  'search.id': searchValue,
  'search.username': searchValue,
  'search.primaryEmail': searchValue,
  'search.primaryPhone': searchValue,
  'search.name': searchValue,
  excludeRoleId: { type: 'string', maxLength: 128 },
  excludeOrganizationId: { type: 'string', maxLength: 128 },
} as const;

const nullableString = { type: ['string', 'null'] } as const;
export const userResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    username: nullableString,
    primaryEmail: nullableString,
    primaryPhone: nullableString,
    name: nullableString,
    avatar: nullableString,
    customData: { type: 'object', additionalProperties: true },
    profile: { type: 'object', additionalProperties: true },
    identities: { type: 'object', additionalProperties: true },
    ssoIdentities: { type: 'array', items: { type: 'object', additionalProperties: true } },
    isSuspended: { type: 'boolean' },
    hasPassword: { type: 'boolean' },
    createdAt: timestamp,
    updatedAt: timestamp,
    lastSignInAt: { type: ['number', 'null'] },
  },
  required: [
    'id',
    'username',
    'primaryEmail',
    'primaryPhone',
    'name',
    'avatar',
    'customData',
    'profile',
    'identities',
    'isSuspended',
    'hasPassword',
    'createdAt',
    'updatedAt',
    'lastSignInAt',
  ],
} as const;
