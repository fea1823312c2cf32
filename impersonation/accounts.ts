import type { UserDocument } from '../lib/store/models.js';

/** A host's account, as impersonation needs to know it now. */
export interface HostAccount {
  /** A suspended account can neither be impersonated nor act. */
  suspended?: boolean;
  /** Never impersonated, whatever the policy's roles say (the host's own protection: administrators, say). */
  protected?: boolean;
}

/**
 * The accounts of an embedding host's own `findAccount`, for impersonation: a subject token for
 * one, one bound to one as the actor, an actor token of one. `find` answers the host's account of
 * that id, or undefined when the host has none; it is read at every issuance and exchange, since
 * a host's changes void nothing here.
 */
export interface HostAccounts {
  find(id: string): HostAccount | undefined | Promise<HostAccount | undefined>;
}

/** The host's account lookup failed (threw): an outage, answered 503, never a refusal. */
export class HostAccountsUnavailable extends Error {
  override name = 'HostAccountsUnavailable';
}

/** Who an id names for impersonation: one of our users, or the host's account (ours first, as `findAccount` reads them). */
export type ImpersonationAccount = { kind: 'user'; user: UserDocument } | { kind: 'host'; account: HostAccount };

/**
 * Looks an id up among our users and then the host's accounts. A host without `hostAccounts` has
 * none that impersonation can see.
 */
export function createAccountLookup(findUser: (id: string) => Promise<UserDocument | null>, host: HostAccounts | undefined) {
  const findHost = async (id: string): Promise<HostAccount | undefined> => {
    if (!host) return undefined;
    try {
      return (await host.find(id)) ?? undefined;
    } catch (error) {
      throw new HostAccountsUnavailable("the host's account lookup failed", { cause: error });
    }
  };
  return {
    /** The account `id` names, or undefined. */
    async find(id: string): Promise<ImpersonationAccount | undefined> {
      const user = await findUser(id);
      if (user) return { kind: 'user', user };
      const account = await findHost(id);
      return account ? { kind: 'host', account } : undefined;
    },
    /** The host's account `id` names (for a subject token issued for one), or undefined. */
    findHost,
  };
}

export type AccountLookup = ReturnType<typeof createAccountLookup>;

/** Whether the account is suspended, whichever kind it is. */
export const isSuspended = (account: ImpersonationAccount) => (account.kind === 'user' ? account.user.isSuspended : account.account.suspended === true);
