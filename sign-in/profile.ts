import { ApiError, assertThat } from '../lib/errors.js';
import type { UserDocument } from '../lib/store/models.js';
import type { AccountLookup } from './accounts.js';
import { missingProfile, type ProfileHeld, type SignInSettings } from './settings.js';

/**
 * The profile rules every face applies: what an account holds (with what an interaction gathered
 * for it), whether it holds what the settings require, and whether it could still sign in.
 */

/** What an interaction gathered for the account it is about, as far as the settings' requirements look at it. */
export interface GatheredProfile {
  username?: string | undefined;
  email?: string | undefined;
  phone?: string | undefined;
  passwordHash?: string | undefined;
  socialIdentity?: unknown;
  ssoIdentity?: unknown;
}

/** What an account (when there is one) and this interaction's profile hold between them. */
export function heldBy(profile: GatheredProfile, user?: UserDocument): ProfileHeld {
  return {
    username: Boolean(user?.username ?? profile.username),
    email: Boolean(user?.primaryEmail ?? profile.email),
    phone: Boolean(user?.primaryPhone ?? profile.phone),
    // A linked upstream account stands in for a password, as in Logto.
    password:
      Boolean(user?.passwordHash ?? profile.passwordHash) ||
      Object.keys(user?.identities ?? {}).length > 0 ||
      (user?.ssoIdentities ?? []).length > 0 ||
      Boolean(profile.socialIdentity ?? profile.ssoIdentity),
  };
}

/** Logto's 422 `user.missing_profile`, naming in `missingProfile` what the settings still require. */
export function assertProfileComplete(settings: SignInSettings, held: ProfileHeld): void {
  const missing = missingProfile(settings, held);
  assertThat(
    missing.length === 0,
    () => new ApiError('user.missing_profile', `the account needs ${missing.join(', ')} before it can continue`, { missingProfile: missing }),
  );
}

/**
 * A registration's profile, checked: what the settings require (an identifier to sign up with, the
 * secondary identifiers, a password unless sign-up is passwordless), and no identifier taken.
 */
export async function newAccountProfile(profile: GatheredProfile, accounts: AccountLookup, settings: SignInSettings) {
  const { username, email, phone, passwordHash } = profile;
  assertProfileComplete(settings, heldBy(profile));
  await accounts.assertAvailable({ username, email, phone });
  return { username, email, phone, passwordHash };
}

/**
 * Whether the user could still sign in, by the current settings, with what it holds: an upstream
 * account (social or SSO), a password with an identifier it signs in with, a code to an email
 * address or phone number the settings let it sign in with, or a passkey where passkeys sign in.
 */
export function canSignIn(
  user: Pick<UserDocument, 'identities' | 'ssoIdentities' | 'passwordHash' | 'username' | 'primaryEmail' | 'primaryPhone' | 'mfaVerifications'>,
  settings: SignInSettings,
): boolean {
  if (Object.keys(user.identities).length > 0 || (user.ssoIdentities ?? []).length > 0) return true;
  if (settings.passkeySignIn.enabled && (user.mfaVerifications ?? []).some(({ type }) => type === 'WebAuthn')) return true;
  const held = { username: Boolean(user.username), email: Boolean(user.primaryEmail), phone: Boolean(user.primaryPhone) };
  return settings.signIn.methods.some(
    ({ identifier, password, verificationCode }) =>
      held[identifier] && ((password && user.passwordHash !== null) || (verificationCode && identifier !== 'username')),
  );
}
