import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

import { ApiError, assertThat } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { type WebAuthnFactor } from '../../lib/mfa/model.js';
import {
  authenticationOptions as webAuthnAuthenticationOptions,
  challengeTtlMs,
  registrationOptions as webAuthnRegistrationOptions,
  verifiedAssertion,
  verifiedRegistration,
} from '../../lib/mfa/webauthn.js';
import { type ExperienceDocument, type MfaVerificationRecord } from '../state.js';
import { webAuthnFailed, recordNotFound, type MfaContext } from './context.js';

/** Passkeys and security keys (WebAuthn): a registration, and an assertion as a second factor or, where the settings allow, as the sign-in itself. */
export function webAuthnSteps(context: MfaContext) {
  const { deps, queries, store, rp, now, iso, subjectOf, recordOf, countTry, proved, replaceFactor } = context;
  return {
    /** Options to register a passkey for the subject (none of its own again); the challenge answers once, within 5 minutes. */
    async webAuthnRegistration(experience: ExperienceDocument) {
      const { userId, user, label } = await subjectOf(experience);
      const own = (user?.mfaVerifications ?? []).filter((factor): factor is WebAuthnFactor => factor.type === 'WebAuthn');
      const registrationOptions = await webAuthnRegistrationOptions(rp, { id: userId, name: label }, own);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, {
        type: 'webAuthn',
        userId,
        mode: 'registration',
        challenge: registrationOptions.challenge,
        expiresAt: now() + challengeTtlMs,
        verified: false,
      });
      return { verificationId, registrationOptions };
    },

    async webAuthnRegistrationVerify(experience: ExperienceDocument, verificationId: string, payload: RegistrationResponseJSON, agent: string) {
      const { userId } = await subjectOf(experience);
      const record = recordOf(experience, verificationId, 'webAuthn', userId);
      assertThat(record.mode === 'registration' && !record.verified && record.expiresAt > now(), webAuthnFailed);
      const credential = await verifiedRegistration(rp, record.challenge, payload, agent);
      assertThat(credential, webAuthnFailed);
      // The challenge answers once: a second answer finds the record verified and fails.
      assertThat(await store.completeVerification(experience._id, verificationId, { verified: false }, { verified: true, credential }), webAuthnFailed);
      return verificationId;
    },

    /**
     * Options to prove a passkey: the identified user's, or (passkey sign-in, when the settings
     * allow it, before identification) any discoverable one of this service.
     */
    async webAuthnAuthentication(experience: ExperienceDocument) {
      let userId: string | null = null;
      let allowed: WebAuthnFactor[] = [];
      if (experience.userId || experience.event !== 'SignIn') {
        const subject = await subjectOf(experience);
        userId = subject.userId;
        allowed = (subject.user?.mfaVerifications ?? []).filter((factor): factor is WebAuthnFactor => factor.type === 'WebAuthn');
      } else {
        assertThat(
          (await deps.signInSettings()).passkeySignIn.enabled,
          () => new ApiError('user.sign_in_method_not_enabled', 'passkey sign-in is not enabled'),
        );
      }
      const authenticationOptions = await webAuthnAuthenticationOptions(rp, allowed);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, {
        type: 'webAuthn',
        userId,
        mode: 'authentication',
        ...(userId === null && { firstFactor: true }),
        challenge: authenticationOptions.challenge,
        expiresAt: now() + challengeTtlMs,
        verified: false,
      });
      return { verificationId, authenticationOptions };
    },

    /**
     * A passkey's answer: signed by the credential the user registered, for our origin and RP id,
     * within 5 minutes, once, with its counter moving forward. For a passkey sign-in, the credential
     * names the user (and its user handle must agree); the verification then identifies them.
     */
    async webAuthnAuthenticationVerify(experience: ExperienceDocument, verificationId: string, payload: AuthenticationResponseJSON, ip: string) {
      const stored = Object.hasOwn(experience.verifications, verificationId) ? experience.verifications[verificationId] : undefined;
      assertThat(stored?.type === 'webAuthn' && stored.mode === 'authentication', recordNotFound);
      const record = stored as Extract<MfaVerificationRecord, { type: 'webAuthn' }>;
      // A second factor's challenge belongs to this interaction's user; a passkey sign-in's to whoever answers it.
      if (!record.firstFactor) assertThat(experience.userId === record.userId || experience.newUserId === record.userId, recordNotFound);
      assertThat(!record.verified && record.expiresAt > now(), webAuthnFailed);
      const user = !record.firstFactor
        ? await queries.users.findById(record.userId!)
        : await queries.users.collection.findOne({ mfaVerifications: { $elemMatch: { type: 'WebAuthn', credentialId: payload.id } } });
      const factor = user?.mfaVerifications?.find(
        (candidate): candidate is WebAuthnFactor => candidate.type === 'WebAuthn' && candidate.credentialId === payload.id,
      );
      assertThat(user && factor, webAuthnFailed);
      if (record.firstFactor) {
        // A discoverable credential reports whose it is; it must be the user the credential was registered to.
        const handle = payload.response.userHandle ? Buffer.from(payload.response.userHandle, 'base64url').toString('utf8') : undefined;
        assertThat(handle === user!._id, webAuthnFailed);
      }
      const counted = await countTry(user!._id, ip);
      const verified = await verifiedAssertion(rp, record.challenge, payload, factor!);
      assertThat(verified, webAuthnFailed);
      const answered = { verified: true, userId: user!._id, ...(record.firstFactor && { credentialId: factor!.credentialId }) };
      assertThat(await store.completeVerification(experience._id, verificationId, { verified: false }, answered), webAuthnFailed);
      // The counter moves only from the value just checked: a cloned authenticator racing the real one loses.
      const modifiedCount = await replaceFactor(user!, { ...factor!, counter: verified!.newCounter, lastUsedAt: iso() });
      assertThat(modifiedCount === 1, webAuthnFailed);
      await counted.refund();
      if (!record.firstFactor) await proved(experience, user!._id, 'WebAuthn', factor!.id);
      return verificationId;
    },
  };
}
