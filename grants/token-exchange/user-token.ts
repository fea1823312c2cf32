import { jwtVerify, type JWTVerifyGetKey } from 'jose';
import type Provider from 'oidc-provider';

import { sha256 } from '../../lib/ids.js';
import { createBatch } from '../../lib/store/batch.js';
import type { UserDocument } from '../../lib/store/models.js';
import type { Queries } from '../../lib/store/queries/index.js';
import type { ImpersonationQueries } from '../../impersonation/queries.js';
import { tokenExchangeGrantType, type ActClaim } from '../../provider/token-types.js';
import { isSuspended, type AccountLookup, type ImpersonationAccount } from '../../impersonation/accounts.js';

const hasOpenid = (scope: unknown) => typeof scope === 'string' && scope.split(' ').includes('openid');
const asAct = (value: unknown): ActClaim | undefined =>
  value && typeof value === 'object' && typeof (value as ActClaim).sub === 'string' ? (value as ActClaim) : undefined;

const noHost: AccountLookup['findHost'] = async () => undefined;

/** Why a user's access token is refused in an exchange; the detail goes to the audit, never to the client. */
export class TokenRefused extends Error {
  override name = 'TokenRefused';
}

/** A user's own access token of this provider, as an exchange takes it: as actor, or as subject. */
export interface UserToken {
  /** The user it was issued for. */
  sub: string;
  /** The client it was issued to; none for a personal access token, which any confidential client may exchange. */
  clientId?: string;
  /** When it expires, in seconds since the epoch; none for a personal access token that never expires. */
  expiresAt?: number;
  /** The `act` it carries, nested in a new token's (RFC 8693 §4.1). */
  act?: ActClaim;
}

/** Whose token it is, for the refusals' wording: `actor` for an actor token, `user` for a subject token. */
type Role = 'actor' | 'user';
const tokenName = (role: Role) => (role === 'actor' ? 'the actor token' : 'the subject token');

/**
 * Reads a user's own access token: an unexpired access token of this provider, issued to a user
 * (not a client) who exists and is not suspended (one of ours, or an embedding host's account
 * that its `hostAccounts` lookup knows): an opaque one with the `openid` scope, or a JWT for any
 * of our API resources, obtained by that user signing in. A token minted by a token exchange
 * represents someone else and is refused (else a subject token would be enough to act as its
 * user, or an impersonated token could be traded for one without its `act`). A JWT is verified
 * against our keys and looked up in the exchange audit by its `jti`; an opaque token is looked up
 * in the provider's store, which keeps its grant type.
 */
export function createUserTokenReader(
  provider: Provider,
  keys: JWTVerifyGetKey,
  queries: Queries,
  audit: ImpersonationQueries['audit'],
  findHost: AccountLookup['findHost'] = noHost,
) {
  // Concurrent exchanges share these reads (group commit, as the subject token's read does).
  const users = createBatch(async (ids: string[]): Promise<Array<UserDocument | null>> => {
    const found = new Map((await queries.users.collection.find({ _id: { $in: [...new Set(ids)] } }).toArray()).map((user) => [user._id, user]));
    return ids.map((id) => found.get(id) ?? null);
  });
  const mintedByExchange = createBatch(async (jtis: string[]): Promise<boolean[]> => {
    const minted = await audit.mintedByExchange([...new Set(jtis)]);
    return jtis.map((jti) => minted.has(jti));
  });

  async function read(token: string, role: Role): Promise<UserToken & { exchanged: Promise<boolean> | boolean }> {
    const name = tokenName(role);
    if (token.split('.').length === 3) {
      const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer, typ: 'at+jwt', requiredClaims: ['exp', 'sub', 'jti', 'client_id'] }).catch(
        () => {
          throw new TokenRefused(`${name} is not an access token of this provider`);
        },
      );
      // A resource's JWT carries that resource's permissions, not `openid`; it must name a user.
      if (payload.sub === payload.client_id) throw new TokenRefused(`${name} is not a user's access token`);
      const act = asAct(payload.act);
      return {
        sub: payload.sub!,
        clientId: String(payload.client_id),
        expiresAt: payload.exp!,
        ...(act && { act }),
        exchanged: mintedByExchange(payload.jti!),
      };
    }
    const found = await provider.AccessToken.find(token);
    if (!found || found.isExpired || !found.accountId || !hasOpenid(found.scope)) throw new TokenRefused(`${name} is not a live openid access token`);
    const act = asAct((found.extra as Record<string, unknown> | undefined)?.act);
    const exchanged = typeof found.gty === 'string' && found.gty.split(' ').includes(tokenExchangeGrantType);
    return { sub: found.accountId, clientId: found.clientId!, expiresAt: found.exp!, ...(act && { act }), exchanged };
  }

  /** The token's account: one of our users, else the host's (`hostAccounts`), else none. */
  async function accountOf(sub: string): Promise<ImpersonationAccount | undefined> {
    const user = await users(sub);
    if (user) return { kind: 'user', user };
    const account = await findHost(sub);
    return account && { kind: 'host', account };
  }

  async function assertLive(sub: string, role: Role) {
    const account = await accountOf(sub);
    if (!account)
      throw new TokenRefused(findHost === noHost ? `the ${role} is not one of our users, and no hostAccounts lookup is set` : `the ${role} no longer exists`);
    if (isSuspended(account)) throw new TokenRefused(`the ${role} is suspended`);
  }

  return {
    /** The token, once it is known to be a live user's own; throws `TokenRefused` otherwise. */
    async readUserToken(token: string, role: Role): Promise<UserToken> {
      const { exchanged, ...userToken } = await read(token, role);
      const [minted] = await Promise.all([exchanged, assertLive(userToken.sub, role)]);
      if (minted) throw new TokenRefused(`${tokenName(role)} was minted by a token exchange`);
      return userToken;
    },

    /** A personal access token (`POST /api/users/:userId/personal-access-tokens`) of a live user, unexpired; throws `TokenRefused` otherwise. */
    async readPersonalAccessToken(value: string): Promise<UserToken> {
      const found = await queries.personalAccessTokens.findByHash(sha256(value));
      if (!found) throw new TokenRefused('the personal access token is not known');
      if (found.expiresAt !== null && found.expiresAt <= Date.now()) throw new TokenRefused('the personal access token has expired');
      await assertLive(found.userId, 'user');
      return { sub: found.userId, ...(found.expiresAt !== null && { expiresAt: Math.floor(found.expiresAt / 1000) }) };
    },
  };
}
