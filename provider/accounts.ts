import type { AccountClaims, Configuration, FindAccount } from 'oidc-provider';

import type { UserDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import { organizationClaims, organizationClaimsByScope } from './organization-claims.js';
import type { OrganizationCaches } from './organization-facts.js';

/** Which claims each scope releases (OpenID Connect Core §5.4). */
export const standardClaims = {
  // `amr`: how the user authenticated (OIDC Core §2, RFC 8176), `pwd` or `otp`, from the sign-in that made the session.
  openid: ['sub', 'amr'],
  profile: [
    'name',
    'given_name',
    'family_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
    'username',
  ],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  address: ['address'],
  // Logto's `identities` scope: the user's linked social identities; the Account API's MFA routes ask for it too.
  identities: ['identities'],
  // Logto's scope for the Account API's session routes: no claims.
  'urn:logto:scope:sessions': [],
  // Logto's organization scopes (`organization-claims.ts`).
  ...organizationClaimsByScope,
} satisfies Configuration['claims'];

/** Our profile fields are Logto's camel case; OIDC claims are snake case. */
const profileClaims: Record<string, string> = {
  givenName: 'given_name',
  familyName: 'family_name',
  middleName: 'middle_name',
  nickname: 'nickname',
  preferredUsername: 'preferred_username',
  profile: 'profile',
  website: 'website',
  gender: 'gender',
  birthdate: 'birthdate',
  zoneinfo: 'zoneinfo',
  locale: 'locale',
};

const addressClaims: Record<string, string> = {
  formatted: 'formatted',
  streetAddress: 'street_address',
  locality: 'locality',
  region: 'region',
  postalCode: 'postal_code',
  country: 'country',
};

const defined = (entries: Array<[string, unknown]>) => Object.fromEntries(entries.filter(([, value]) => value !== undefined && value !== null));

export function userClaims(user: UserDocument): AccountClaims {
  const { address, ...profile } = user.profile as Record<string, unknown> & { address?: Record<string, unknown> };
  return {
    sub: user._id,
    ...defined([
      ['name', user.name],
      ['username', user.username],
      ['picture', user.avatar],
      ['email', user.primaryEmail],
      // Every way an address reaches `primaryEmail` vouches for it: sign-up, linking and the Account
      // API confirm it with a code, and an operator sets it through the Management API (as in
      // Logto). The same holds for the phone number.
      ['email_verified', user.primaryEmail === null ? undefined : true],
      ['phone_number', user.primaryPhone],
      ['phone_number_verified', user.primaryPhone === null ? undefined : true],
      ['updated_at', Math.floor(user.updatedAt / 1000)],
      ...Object.entries(profile).flatMap(([key, value]): Array<[string, unknown]> => (profileClaims[key] ? [[profileClaims[key], value]] : [])),
      ['address', address && defined(Object.entries(address).map(([key, value]) => [addressClaims[key] ?? key, value]))],
      ['identities', user.identities],
    ]),
  };
}

/** Where an account found by `findAccount` keeps the user it was made from, for the request that found it. */
const foundUser = Symbol('user');

/** The user an account of ours was made from, as the request that found it read it (undefined for a host's account). */
export const userOfAccount = (account: unknown): UserDocument | undefined =>
  typeof account === 'object' && account !== null ? (account as { [foundUser]?: UserDocument })[foundUser] : undefined;

/**
 * oidc-provider's `findAccount`: our users, except suspended ones, whom the provider then
 * treats as gone (no sign-in, no token). Ids we do not know go to the host's own function.
 */
export function createFindAccount(queries: Queries, organizations: OrganizationCaches, host?: FindAccount): FindAccount {
  return async (ctx, sub, token) => {
    const user = await queries.users.findById(sub);
    if (!user) return host ? host(ctx, sub, token) : undefined;
    if (user.isSuspended) return undefined;
    return {
      accountId: user._id,
      // The organization claims only when their scopes were granted, read now (`organization-claims.ts`).
      claims: async (_use: string, scope: string) => ({ ...userClaims(user), ...(await organizationClaims(organizations, user._id, scope)) }),
      [foundUser]: user,
    };
  };
}
