import type { ClientSession, Filter } from 'mongodb';

import { ApiError, assertThat } from '../errors.js';
import { inUnit } from './session.js';

/**
 * A user's upstream accounts. Social identities are Logto's `identities` (`{[target]: {userId,
 * details}}`); enterprise SSO identities are Logto's `user_sso_identities` rows, kept on the user.
 * Each upstream account has a key in `identityKeys`, under a unique index: one upstream account,
 * one user, whichever way it is linked.
 */

/** Who the upstream provider says the person is. */
export interface UpstreamUser {
  id: string;
  name?: string;
  /** Only an address the provider says it verified. */
  email?: string;
  /** An email the provider stated without saying it verified it (an enterprise IdP may vouch for its own domains). */
  claimedEmail?: string;
  avatar?: string;
}

/** An upstream account as a social identity names it. */
export interface SocialIdentity {
  target: string;
  id: string;
  details: UpstreamUser;
}

/** An enterprise SSO identity (Logto's `UserSsoIdentity`, without `userId`: it is the user's). */
export interface SsoIdentity {
  id: string;
  ssoConnectorId: string;
  /** The IdP's issuer (OIDC) or entity id (SAML). */
  issuer: string;
  /** The IdP's subject (OIDC `sub`, SAML NameID). */
  identityId: string;
  detail: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** The unique key of a social identity: `<target>:<id>` (targets are `[a-z0-9_-]`, so never `#`). */
export const identityKey = (target: string, id: string) => `${target}:${id}`;
/** The unique key of an SSO identity: unique per issuer and subject, whichever connector found it. */
export const ssoIdentityKey = (issuer: string, identityId: string) => `#sso:${JSON.stringify([issuer, identityId])}`;

/** What of a user holds its upstream accounts (`UserDocument`'s fields of the same names). */
interface Linked {
  identities: Record<string, unknown>;
  identityKeys?: string[];
}
interface SsoLinked {
  ssoIdentities?: SsoIdentity[];
  identityKeys?: string[];
}
/** The users collection as far as the check below reads it. */
interface IdentityHolders {
  findOne(filter: Filter<{ _id: string; identityKeys?: string[] }>, options: { session?: ClientSession }): Promise<unknown>;
}

/**
 * 422 `user.identity_already_in_use` when another user holds one of `keys`. The unique index on
 * `identityKeys` is what holds under a race; this asks first so that the answer does not depend
 * on how an engine reports a multikey conflict.
 */
export async function assertIdentitiesFree(users: IdentityHolders, userId: string, keys: string[]) {
  if (keys.length === 0) return;
  const holder = await users.findOne({ identityKeys: { $in: keys }, _id: { $ne: userId } }, inUnit());
  assertThat(!holder, () => new ApiError('user.identity_already_in_use', 'this upstream account belongs to another user already'));
}

/**
 * The user's identities with `identity` linked under its target (replacing what was there), and the
 * keys to match. Its details are what the provider said at sign-in, or, set through the Management
 * API, any object the administrator gave (as Logto keeps them).
 */
export function withIdentity(user: Linked, { target, id, details }: Omit<SocialIdentity, 'details'> & { details: object }) {
  const { identities, identityKeys } = withoutIdentity(user, target);
  return {
    identities: { ...identities, [target]: { userId: id, details } },
    identityKeys: [...new Set([...identityKeys, identityKey(target, id)])],
  };
}

/** The user's identities without `target`'s, and the keys to match. */
export function withoutIdentity(user: Linked, target: string) {
  const { [target]: removed, ...identities } = user.identities;
  const removedId = (removed as { userId?: unknown } | undefined)?.userId;
  const removedKey = typeof removedId === 'string' ? identityKey(target, removedId) : undefined;
  return { identities, identityKeys: (user.identityKeys ?? []).filter((key) => key !== removedKey) };
}

/** The user's SSO identities with `identity` added (or refreshed: the same connector's replaced), and the keys to match. */
export function withSsoIdentity(user: SsoLinked, identity: SsoIdentity) {
  const kept = (user.ssoIdentities ?? []).filter(({ ssoConnectorId }) => ssoConnectorId !== identity.ssoConnectorId);
  const keys = new Set(kept.map(({ issuer, identityId }) => ssoIdentityKey(issuer, identityId)));
  return {
    ssoIdentities: [...kept, identity],
    identityKeys: [
      ...(user.identityKeys ?? []).filter((key) => !key.startsWith('#sso:') || keys.has(key)),
      ssoIdentityKey(identity.issuer, identity.identityId),
    ].filter((key, index, all) => all.indexOf(key) === index),
  };
}
