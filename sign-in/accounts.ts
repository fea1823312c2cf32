import { assertEmailAllowed as assertAllowedByPolicy, type EmailPolicy } from './email-policy.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import type { Queries } from '../lib/store/queries/index.js';

/** How a person names their account; a phone number in its stored form (lib/phone.ts). */
export type IdentifierType = 'username' | 'email' | 'phone';
export interface Identifier {
  type: IdentifierType;
  value: string;
}

export const suspended = () => new ApiError('user.suspended', 'this account is suspended');

const identifierFilter = ({ type, value }: Identifier) =>
  type === 'email' ? { emailKey: emailKey(value) } : type === 'phone' ? { primaryPhone: value } : { username: value };

/** The accounts the sign-in experience looks up: by identifier, and whether a new one's identifiers are free. */
/**
 * Accounts as the sign-in experience finds them. `emailPolicy` reads the settings' email policy,
 * which every address about to become an account's must pass.
 */
export function createAccountLookup(queries: Queries, emailPolicy: () => Promise<EmailPolicy | undefined> = async () => undefined) {
  const findUser = (identifier: Identifier) => queries.users.collection.findOne(identifierFilter(identifier));

  /** Refuses (422) an email address the settings' policy does not let become an account's. */
  const assertEmailAllowed = async (email: string) => assertAllowedByPolicy(await emailPolicy(), email);

  /**
   * Refuses identifiers that cannot become this account's: taken by another account (422), or an
   * email address the policy refuses (422, checked first: it says nothing of other accounts).
   */
  async function assertAvailable(profile: { username?: string | undefined; email?: string | undefined; phone?: string | undefined }) {
    if (profile.email) await assertEmailAllowed(profile.email);
    if (profile.username) {
      assertThat(
        !(await findUser({ type: 'username', value: profile.username })),
        new ApiError('user.username_already_in_use', 'this username is already in use'),
      );
    }
    if (profile.email) {
      // Only someone who has just proved they own this address learns it has an account.
      assertThat(
        !(await findUser({ type: 'email', value: profile.email })),
        new ApiError('user.email_already_in_use', 'this email address already has an account; sign in, or reset its password'),
      );
    }
    if (profile.phone) {
      // Likewise, only after a code to this number proved it is theirs.
      assertThat(
        !(await findUser({ type: 'phone', value: profile.phone })),
        new ApiError('user.phone_already_in_use', 'this phone number already has an account; sign in, or reset its password'),
      );
    }
  }

  const findUserById = (id: string) => queries.users.findById(id);
  /** The user an upstream account (`<target>:<id>`) is linked to. */
  const findUserByIdentity = (key: string) => queries.users.collection.findOne({ identityKeys: key });

  return { findUser, findUserById, findUserByIdentity, assertAvailable, assertEmailAllowed };
}

export type AccountLookup = ReturnType<typeof createAccountLookup>;
