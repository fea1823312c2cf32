import type { MfaVerification } from '../mfa/model.js';
import type { SsoIdentity } from './identities.js';
/** The documents we store, and the shapes the Management API returns. Dates are epoch milliseconds, as in Logto. */

import { emailKey } from '../identifiers.js';
import { generateId } from '../ids.js';

export const applicationTypes = ['Native', 'SPA', 'Traditional', 'MachineToMachine'] as const;
export type ApplicationType = (typeof applicationTypes)[number];

/** Applications of these types hold secrets (or keys) and authenticate at the token endpoint; the others are public clients. */
export const isConfidential = (type: ApplicationType) => type === 'Traditional' || type === 'MachineToMachine';

/** How a confidential application may authenticate at the token endpoint (never `client_secret_jwt`: we keep no secret to check its MAC with). */
export const confidentialAuthMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type ConfidentialAuthMethod = (typeof confidentialAuthMethods)[number];

export interface OidcClientMetadata {
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri?: string;
  backchannelLogoutSessionRequired?: boolean;
  logoUri?: string;
  /** Confidential applications only; `client_secret_basic` when unset. */
  tokenEndpointAuthMethod?: ConfidentialAuthMethod;
  /** Public keys for `private_key_jwt`. */
  jwks?: { keys: Array<Record<string, unknown>> };
  jwksUri?: string;
}

export interface CustomClientMetadata {
  corsAllowedOrigins?: string[];
  idTokenTtl?: number;
  refreshTokenTtlInDays?: number;
  alwaysIssueRefreshToken?: boolean;
  rotateRefreshToken?: boolean;
  /** May this application exchange subject tokens (RFC 8693)? Off unless an operator turns it on. */
  allowTokenExchange?: boolean;
  /** Is every sign-in to this application for one of the user's organizations? The sign-in pages then ask which (beyond Logto). */
  requireOrganization?: boolean;
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
  /** Its own look on the sign-in pages, over the operator's (Logto's application sign-in experience). */
  signInExperience?: ApplicationSignInExperience;
}

/** Logto's application-level sign-in experience: colours, logos, a display name and policy links. */
export interface ApplicationSignInExperience {
  color: { primaryColor?: string; darkPrimaryColor?: string };
  branding: { logoUrl?: string; darkLogoUrl?: string; favicon?: string; darkFavicon?: string };
  termsOfUseUrl: string | null;
  privacyPolicyUrl: string | null;
  displayName: string | null;
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

/** `_id` becomes `id` on the way out. */
export function withId<T extends { _id: string }>({ _id, ...rest }: T): Omit<T, '_id'> & { id: string } {
  return { id: _id, ...rest };
}

export interface UserDocument {
  _id: string;
  username: string | null;
  primaryEmail: string | null;
  /** The email lower-cased: the key of its case-insensitive unique index. */
  emailKey: string | null;
  primaryPhone: string | null;
  name: string | null;
  avatar: string | null;
  customData: Record<string, unknown>;
  /** OIDC standard profile claims (given name, locale, address, ...). */
  profile: Record<string, unknown>;
  /** Linked social identities, by connector target (Logto's `{[target]: {userId, details}}`). */
  identities: Record<string, unknown>;
  /** Enterprise SSO identities (social/identities.ts); shown only when asked for (`includeSsoIdentities`). Absent when none. */
  ssoIdentities?: SsoIdentity[];
  /** The key of each linked upstream account, social or SSO (social/identities.ts), under a unique index: one upstream account, one user. Absent when none. */
  identityKeys?: string[];
  passwordHash: string | null;
  /** The user's MFA factors (lib/mfa/model.ts); absent on users made before MFA existed. Never leaves the server as stored. */
  mfaVerifications?: MfaVerification[];
  /** Logto's `logtoConfig.mfa.skipped`: the person skipped enrolling a factor where the MFA policy let them, and is not asked again. Absent: false. */
  mfaSkipped?: boolean;
  isSuspended: boolean;
  createdAt: number;
  updatedAt: number;
  lastSignInAt: number | null;
}

export interface OrganizationDocument {
  _id: string;
  name: string;
  description: string | null;
  customData: Record<string, unknown>;
  /** Logto's `isMfaRequired`: a member without a second factor gets no token for it. Unset (older documents): false. */
  isMfaRequired?: boolean;
  /** Logto's look: logos (`logoUrl`, `darkLogoUrl`, `favicon`, `darkFavicon`) and colours (`primaryColor`, `darkPrimaryColor`, `isDarkModeEnabled`). */
  branding?: Record<string, string>;
  color?: { primaryColor?: string; darkPrimaryColor?: string; isDarkModeEnabled?: boolean };
  createdAt: number;
}

/** An organization as the API shows it (fields older documents lack, at their defaults). */
export const organizationToApi = (organization: OrganizationDocument) => ({
  ...withId(organization),
  isMfaRequired: organization.isMfaRequired ?? false,
  branding: organization.branding ?? {},
  color: organization.color ?? {},
});

export interface OrganizationRoleDocument {
  _id: string;
  name: string;
  description: string | null;
  /** Logto's organization role types: for members (`User`) or for machines (`MachineToMachine`). Unset: `User`. */
  type?: 'User' | 'MachineToMachine';
  createdAt: number;
}

export interface OrganizationScopeDocument {
  _id: string;
  name: string;
  description: string | null;
  createdAt: number;
}

/** What a new user is given; everything else starts empty. */
export type NewUserFields = Partial<
  Pick<
    UserDocument,
    | 'username'
    | 'primaryEmail'
    | 'primaryPhone'
    | 'name'
    | 'avatar'
    | 'customData'
    | 'profile'
    | 'passwordHash'
    | 'lastSignInAt'
    | 'mfaVerifications'
    | 'mfaSkipped'
  >
>;

/**
 * A new user document, for every way one is made (the Management API, sign-up). The email's
 * key is derived here, from the email, so that no caller can store one without the other.
 */
export function newUser(fields: NewUserFields, now = Date.now(), id = generateId(12)): UserDocument {
  const primaryEmail = fields.primaryEmail ?? null;
  return {
    _id: id,
    username: null,
    primaryPhone: null,
    name: null,
    avatar: null,
    customData: {},
    profile: {},
    passwordHash: null,
    lastSignInAt: null,
    ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
    primaryEmail,
    emailKey: primaryEmail === null ? null : emailKey(primaryEmail),
    identities: {},
    isSuspended: false,
    createdAt: now,
    updatedAt: now,
  };
}

/** Fields whose change is bookkeeping, not the user's data. */
const unannounced = new Set(['_id', 'updatedAt', 'emailKey', 'identityKeys', 'createdAt']);
/** Objects whose changes are named key by key (`customData.plan`, `identities.github`). */
const keyed = new Set(['customData', 'profile', 'identities']);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What an update changed, as field paths in the API's names: `primaryEmail`, `customData.plan`,
 * `password` for the hash (never a value). Sorted, so that the same change reads the same.
 */
export function userChanges(before: UserDocument, after: UserDocument): string[] {
  const paths = new Set<string>();
  const [old, now] = [new Map<string, unknown>(Object.entries(before)), new Map<string, unknown>(Object.entries(after))];
  for (const field of new Set([...old.keys(), ...now.keys()])) {
    if (unannounced.has(field)) continue;
    const [was, is] = [old.get(field), now.get(field)];
    if (same(was, is)) continue;
    if (field === 'passwordHash') paths.add('password');
    else if (keyed.has(field) && was !== null && is !== null && typeof was === 'object' && typeof is === 'object') {
      const [a, b] = [was as Record<string, unknown>, is as Record<string, unknown>];
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) if (!same(a[key], b[key])) paths.add(`${field}.${key}`);
    } else paths.add(field);
  }
  return [...paths].sort();
}

/** The user as the API shows it: never the password hash, never the email key. */
export function userToApi({
  _id,
  passwordHash,
  emailKey: _emailKey,
  mfaVerifications: _mfa,
  mfaSkipped: _mfaSkipped,
  identityKeys: _identityKeys,
  ssoIdentities: _ssoIdentities,
  ...rest
}: UserDocument) {
  return { id: _id, ...rest, hasPassword: passwordHash !== null };
}

/**
 * A user as Logto's webhooks show one (its `userInfoSelectFields`), from the API's shape: exactly
 * these fields, `applicationId` (the application a user registered through; we keep none) null.
 */
export function userInfoOf(user: ReturnType<typeof userToApi>) {
  const { id, username, primaryEmail, primaryPhone, name, avatar, customData, identities, lastSignInAt, createdAt, updatedAt, profile, isSuspended } = user;
  return {
    id,
    username,
    primaryEmail,
    primaryPhone,
    name,
    avatar,
    customData,
    identities,
    lastSignInAt,
    createdAt,
    updatedAt,
    profile,
    applicationId: null,
    isSuspended,
  };
}

/** Orders by `name` (code-point order, as the lists that show names sorted). */
export const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** One page of a list: how many to skip, and how many to answer. */
export interface Page {
  skip: number;
  limit: number;
}
