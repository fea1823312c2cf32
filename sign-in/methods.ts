import { ApiError, assertThat } from '../lib/errors.js';
import type { IdentifierType } from './accounts.js';
import type { SignInSettings } from './settings.js';

/** Refuses a sign-in by `identifier` with a password (`factor` 'password') or a code, unless the settings have that method. */
export function requireSignInMethod({ signIn }: SignInSettings, identifier: IdentifierType, factor: 'password' | 'verificationCode'): void {
  assertThat(
    signIn.methods.some((method) => method.identifier === identifier && method[factor]),
    () => new ApiError('user.sign_in_method_not_enabled', `signing in by ${identifier} with ${factor === 'password' ? 'a password' : 'a code'} is not enabled`),
  );
}

/** Refuses a new account made with `identifier` unless the settings have it, as an identifier to sign up with or one also required. */
export function requireSignUpIdentifier({ signUp }: SignInSettings, identifier: IdentifierType): void {
  assertThat(
    signUp.identifiers.includes(identifier) || (signUp.secondaryIdentifiers ?? []).some((secondary) => secondary.identifier === identifier),
    () => new ApiError('user.sign_up_method_not_enabled', `signing up with ${identifier === 'username' ? 'a username' : `an ${identifier}`} is not enabled`),
  );
}
