import { jwtVerify, type JWTVerifyGetKey } from 'jose';
import type Provider from 'oidc-provider';

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

/** Why an actor token is refused; the detail goes to the audit, never to the client. */
export class ActorRefused extends Error {
  override name = 'ActorRefused';
}

/**
 * Who an actor token names. It must be an unexpired access token of this provider, issued to a
 * user (not a client) who exists and is not suspended (one of ours, or an embedding host's account
 * that its `hostAccounts` lookup knows) (an opaque one with the `openid` scope, a
 * JWT for any of our API resources), and obtained by
 * that user signing in: a token minted by a token exchange represents someone else and cannot act
 * (else a subject token would be enough to act as its user). A JWT is verified against our keys
 * and looked up in the exchange audit by its `jti`; an opaque token is looked up in the
 * provider's store, which keeps its grant type. An `act` it carries is nested (RFC 8693 §4.1).
 */
export function createActorIdentifier(
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

  async function read(token: string): Promise<{ sub: string; nested?: ActClaim; exchanged: Promise<boolean> | boolean }> {
    if (token.split('.').length === 3) {
      const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer, typ: 'at+jwt', requiredClaims: ['exp', 'sub', 'jti'] }).catch(() => {
        throw new ActorRefused('the actor token is not an access token of this provider');
      });
      // A resource's JWT carries that resource's permissions, not `openid`; it must name a user.
      if (payload.sub === payload.client_id) throw new ActorRefused("the actor token is not a user's access token");
      const nested = asAct(payload.act);
      return { sub: payload.sub!, ...(nested && { nested }), exchanged: mintedByExchange(payload.jti!) };
    }
    const found = await provider.AccessToken.find(token);
    if (!found || found.isExpired || !found.accountId || !hasOpenid(found.scope)) throw new ActorRefused('the actor token is not a live openid access token');
    const nested = asAct((found.extra as Record<string, unknown> | undefined)?.act);
    const exchanged = typeof found.gty === 'string' && found.gty.split(' ').includes(tokenExchangeGrantType);
    return { sub: found.accountId, ...(nested && { nested }), exchanged };
  }

  /** The actor's account: one of our users, else the host's (`hostAccounts`), else none. */
  async function accountOf(sub: string): Promise<ImpersonationAccount | undefined> {
    const user = await users(sub);
    if (user) return { kind: 'user', user };
    const account = await findHost(sub);
    return account && { kind: 'host', account };
  }

  return async function identifyActor(token: string): Promise<ActClaim> {
    const { sub, nested, exchanged } = await read(token);
    const [minted, account] = await Promise.all([exchanged, accountOf(sub)]);
    if (minted) throw new ActorRefused('the actor token was minted by a token exchange');
    if (!account)
      throw new ActorRefused(findHost === noHost ? 'the actor is not one of our users, and no hostAccounts lookup is set' : 'the actor no longer exists');
    if (isSuspended(account)) throw new ActorRefused('the actor is suspended');
    return { sub, ...(nested && { act: nested }) };
  };
}
