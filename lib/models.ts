/** The documents we store, and the shapes the Management API returns. Dates are epoch milliseconds, as in Logto. */

export const applicationTypes = ['Native', 'SPA', 'Traditional', 'MachineToMachine'] as const;
export type ApplicationType = (typeof applicationTypes)[number];

export interface OidcClientMetadata {
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri?: string;
  backchannelLogoutSessionRequired?: boolean;
  logoUri?: string;
}

export interface CustomClientMetadata {
  corsAllowedOrigins?: string[];
  idTokenTtl?: number;
  refreshTokenTtlInDays?: number;
  alwaysIssueRefreshToken?: boolean;
  rotateRefreshToken?: boolean;
  /** May this application exchange subject tokens (RFC 8693)? Off unless an operator turns it on. */
  allowTokenExchange?: boolean;
}

export interface ApplicationDocument {
  _id: string;
  name: string;
  description: string | null;
  type: ApplicationType;
  oidcClientMetadata: OidcClientMetadata;
  customClientMetadata: CustomClientMetadata;
  customData: Record<string, unknown>;
  isThirdParty: boolean;
  createdAt: number;
}

export interface ApplicationSecretDocument {
  _id: string;
  applicationId: string;
  name: string;
  /** SHA-256 of the secret: secrets are 256 random bits, so a fast hash is enough and keeps token requests cheap. */
  hash: string;
  createdAt: number;
  expiresAt: number | null;
}

export interface ResourceDocument {
  _id: string;
  name: string;
  indicator: string;
  isDefault: boolean;
  accessTokenTtl: number;
  createdAt: number;
  /** The Management API's own resource: it cannot be changed or deleted through the API. */
  isBuiltIn?: boolean;
}

export interface ScopeDocument {
  _id: string;
  resourceId: string;
  name: string;
  description: string | null;
  createdAt: number;
}

export const roleTypes = ['User', 'MachineToMachine'] as const;
export type RoleType = (typeof roleTypes)[number];

export interface RoleDocument {
  _id: string;
  name: string;
  description: string;
  type: RoleType;
  isDefault: boolean;
  createdAt: number;
}

export interface RoleScopeDocument {
  _id: string;
  roleId: string;
  scopeId: string;
}

export interface ApplicationRoleDocument {
  _id: string;
  applicationId: string;
  roleId: string;
}

/** `_id` becomes `id` on the way out. */
export function withId<T extends { _id: string }>({ _id, ...rest }: T): Omit<T, '_id'> & { id: string } {
  return { id: _id, ...rest };
}
