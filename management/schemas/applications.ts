import { applicationTypes, confidentialAuthMethods } from '../../lib/store/models.js';
import { absoluteUri, freeFormObject, searchQuery, timestamp } from './common.js';

// Redirect URIs reach the pages' CSP (`form-action`), a logo its `img-src`: an http(s) one needs a valid host.
const headerSafeUri = { ...absoluteUri, format: 'header-safe-uri' } as const;
const uriList = { type: 'array', items: headerSafeUri, maxItems: 50 } as const;

const oidcClientMetadata = {
  type: 'object',
  properties: {
    redirectUris: uriList,
    postLogoutRedirectUris: uriList,
    backchannelLogoutUri: absoluteUri,
    backchannelLogoutSessionRequired: { type: 'boolean' },
    logoUri: headerSafeUri,
    // How a confidential application authenticates at the token endpoint: its secret (HTTP Basic,
    // or in the body), or a JWT signed with its own key (RFC 7523, `private_key_jwt`), whose
    // public keys are given here (`jwks`) or fetched (`jwksUri`, https).
    tokenEndpointAuthMethod: { enum: confidentialAuthMethods },
    jwks: {
      type: 'object',
      properties: {
        keys: {
          type: 'array',
          minItems: 1,
          maxItems: 10,
          items: { type: 'object', required: ['kty'], not: { anyOf: [{ required: ['d'] }, { required: ['k'] }] }, additionalProperties: true },
        },
      },
      required: ['keys'],
      additionalProperties: false,
    },
    jwksUri: { type: 'string', maxLength: 2048, pattern: '^https://[^\\s]+$' },
  },
  additionalProperties: false,
} as const;

const customClientMetadata = {
  type: 'object',
  properties: {
    corsAllowedOrigins: { type: 'array', items: absoluteUri, maxItems: 50 },
    idTokenTtl: { type: 'integer', minimum: 60, maximum: 86400 },
    refreshTokenTtlInDays: { type: 'integer', minimum: 1, maximum: 180 },
    alwaysIssueRefreshToken: { type: 'boolean' },
    rotateRefreshToken: { type: 'boolean' },
    allowTokenExchange: { type: 'boolean' },
    requireOrganization: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

const editable = {
  name: { type: 'string', minLength: 1, maxLength: 256 },
  description: { type: ['string', 'null'], maxLength: 2048 },
  oidcClientMetadata,
  customClientMetadata,
  customData: freeFormObject,
} as const;

export const applicationCreateSchema = {
  type: 'object',
  properties: { ...editable, type: { enum: applicationTypes }, isThirdParty: { type: 'boolean' } },
  required: ['name', 'type'],
  additionalProperties: false,
} as const;

export const applicationPatchSchema = {
  type: 'object',
  properties: editable,
  additionalProperties: false,
} as const;

export const applicationResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    type: { enum: applicationTypes },
    oidcClientMetadata,
    customClientMetadata,
    customData: { type: 'object', additionalProperties: true },
    isThirdParty: { type: 'boolean' },
    createdAt: timestamp,
    /** Only in the answer to a create, once: we keep no copy. */
    secret: { type: 'string' },
  },
  required: ['id', 'name', 'type', 'oidcClientMetadata', 'customClientMetadata', 'isThirdParty', 'createdAt'],
} as const;

export const applicationListQuery = {
  types: { type: 'array', items: { enum: applicationTypes }, maxItems: applicationTypes.length },
  isThirdParty: { enum: ['true', 'false'] },
  excludeRoleId: { type: 'string', maxLength: 128 },
  ...searchQuery,
} as const;

export const secretCreateSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    expiresAt: { type: ['integer', 'null'], minimum: 0 },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

const secretFields = {
  name: { type: 'string' },
  createdAt: timestamp,
  expiresAt: { type: ['number', 'null'] },
} as const;

export const secretRenameSchema = {
  type: 'object',
  properties: { name: secretCreateSchema.properties.name },
  required: ['name'],
  additionalProperties: false,
} as const;
export const secretResponse = { type: 'object', properties: secretFields, required: ['name', 'createdAt', 'expiresAt'] } as const;
export const secretWithValueResponse = {
  type: 'object',
  properties: { ...secretFields, value: { type: 'string' } },
  required: ['name', 'createdAt', 'expiresAt', 'value'],
} as const;

// An application's sign-in experience. Its values reach the pages' HTML, CSS and CSP: colours are
// hex colours only, and links and logos http(s) URLs with nothing that could end an attribute.
const webUrl = { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$', format: 'web-url' } as const;
// `#rrggbb`, or `#rgb` as Logto accepts it (the pages draw it doubled out).
const hexColor = { type: 'string', pattern: '^#([0-9A-Fa-f]{3}){1,2}$' } as const;
/** A look's logos (Logto's `branding`), for an application or an organization. */
export const brandingSchema = {
  type: 'object',
  properties: { logoUrl: webUrl, darkLogoUrl: webUrl, favicon: webUrl, darkFavicon: webUrl },
  additionalProperties: false,
} as const;
/** A look's colours (Logto's `color`); an organization's may say whether its dark mode is on. */
export const colorSchema = {
  type: 'object',
  properties: { primaryColor: hexColor, darkPrimaryColor: hexColor, isDarkModeEnabled: { type: 'boolean' } },
  additionalProperties: false,
} as const;
const signInExperienceFields = {
  color: { type: 'object', properties: { primaryColor: hexColor, darkPrimaryColor: hexColor }, additionalProperties: false },
  branding: brandingSchema,
  termsOfUseUrl: { anyOf: [webUrl, { type: 'null' }] },
  privacyPolicyUrl: { anyOf: [webUrl, { type: 'null' }] },
  displayName: { anyOf: [{ type: 'string', minLength: 1, maxLength: 256 }, { type: 'null' }] },
} as const;

export const applicationSignInExperienceSchema = { type: 'object', properties: signInExperienceFields, additionalProperties: false } as const;

export const applicationSignInExperienceResponse = {
  type: 'object',
  properties: { applicationId: { type: 'string' }, ...signInExperienceFields },
  required: ['applicationId', 'color', 'branding', 'termsOfUseUrl', 'privacyPolicyUrl', 'displayName'],
} as const;
