import { createMfaContext, type ExperienceMfaDeps } from './context.js';
import { backupCodeSteps } from './backup-codes.js';
import { mfaGate } from './gate.js';
import { totpSteps } from './totp.js';
import { webAuthnSteps } from './webauthn.js';

export type { ExperienceMfaDeps } from './context.js';
export { requireMfaVerification } from './gate.js';

/**
 * MFA in the sign-in experience, as Logto's Experience API steps it: verifications that prove a
 * factor the user has (a TOTP code, a backup code, a passkey), verifications that make a new one
 * (a TOTP secret, backup codes, a passkey registration), binding a new one (`POST /profile/mfa`),
 * and the gate the submit passes (a user with factors proves one; mandatory MFA enrols one).
 */
export function createExperienceMfa(deps: ExperienceMfaDeps) {
  const context = createMfaContext(deps);
  return {
    usableFactors: context.usableFactors,
    ...totpSteps(context),
    ...backupCodeSteps(context),
    ...webAuthnSteps(context),
    ...mfaGate(context),
  };
}

export type ExperienceMfa = ReturnType<typeof createExperienceMfa>;
