import type Provider from 'oidc-provider';

import type { Queries } from '../lib/store/queries/index.js';
import { consoleBuiltIn } from './built-in.js';
import type { ConsoleSession } from './store.js';
import type { ConsolePage } from './views.js';

/** What a console route has once the session admitted it. */
export interface Admitted {
  /** The session cookie's value (what a revealed secret is sealed with). */
  token: string;
  session: ConsoleSession;
  page: ConsolePage;
}

/** Why someone may not enter, for the page that says so (`enrolled`: a second factor was just set up, and has not been used yet). */
export type Refusal = 'permission' | 'secondFactor' | 'enrolled';

/** RFC 8176 methods that prove a second factor: `mfa` (a factor besides the first), `hwk` (a passkey, a key bound to a device and its own check of the person). */
const strongMethods = new Set(['mfa', 'hwk']);

/** Whether a sign-in's methods include a second factor. */
export const provedSecondFactor = (amr: string[]) => amr.some((method) => strongMethods.has(method));

/**
 * Who may be in the console, asked again at every request (a role taken away or a suspension
 * counts at once): a user that exists, is not suspended, and holds the console permission through
 * any of their user roles; and, for a console session, whose provider session is still theirs.
 */
export function createConsoleAccess(queries: Queries, provider: Provider) {
  async function admits(userId: string): Promise<boolean> {
    const [user, roleIds] = await Promise.all([queries.users.findById(userId), queries.links.usersRoles.rightsOf(userId)]);
    if (!user || user.isSuspended || roleIds.length === 0) return false;
    return (await queries.links.rolesScopes.rightsOfMany(roleIds)).includes(consoleBuiltIn.scopeId);
  }

  return {
    /** Whether the user has a second factor now (one set up in the sign-in that just ended proved nothing yet: a sign-in with it will). */
    async hasSecondFactor(userId: string): Promise<boolean> {
      return ((await queries.users.findById(userId))?.mfaVerifications ?? []).length > 0;
    },

    admits,

    /**
     * Whether a console session still holds: the console admits its user, and the provider's
     * session its sign-in came from is live and still that user's. Signing out at the provider,
     * an administrator ending that session or every session of the user, or the browser signing in
     * as someone else ends the console with it. Asked through the provider, so that a host's own
     * adapter for sessions is asked too.
     */
    async keeps({ userId, providerSessionUid }: ConsoleSession): Promise<boolean> {
      // A session kept before sessions named their provider session's: it ends, and its administrator signs in again.
      if (typeof providerSessionUid !== 'string') return false;
      const [admitted, signedIn] = await Promise.all([admits(userId), provider.Session.findByUid(providerSessionUid)]);
      return admitted && signedIn?.accountId === userId;
    },
  };
}

export type ConsoleAccess = ReturnType<typeof createConsoleAccess>;
