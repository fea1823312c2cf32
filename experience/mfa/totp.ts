import { assertThat } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { type MfaVerification } from '../../lib/mfa/model.js';
import { newTotpSecret, totpStepOf, totpUri } from '../../lib/mfa/totp.js';
import { type ExperienceDocument } from '../state.js';
import { invalidTotp, recordNotFound, pendingContext, type MfaContext } from './context.js';

/** Authenticator apps (RFC 6238): a new secret to enrol, and a code proved, once per time step. */
export function totpSteps(context: MfaContext) {
  const { deps, store, box, now, iso, subjectOf, recordOf, countTry, proved, replaceFactor } = context;
  return {
    /** A new TOTP secret and its `otpauth://` URI, for an authenticator app; kept sealed until bound. */
    async totpSecret(experience: ExperienceDocument) {
      const { userId, label } = await subjectOf(experience);
      const secret = newTotpSecret();
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, {
        type: 'totp',
        userId,
        secret: box.seal(secret, pendingContext(experience)),
        verified: false,
      });
      return { verificationId, secret, uri: totpUri(secret, { issuer: deps.productName, label }) };
    },

    /**
     * A TOTP code: for a new secret of this interaction (`verificationId`), to prove the app has it;
     * otherwise for the user's own, once per time step (a replayed code is refused), counted toward the lockout.
     */
    async totpVerify(experience: ExperienceDocument, code: string, verificationId: string | undefined, ip: string): Promise<string> {
      const { userId, user } = await subjectOf(experience);
      if (verificationId !== undefined) {
        const record = recordOf(experience, verificationId, 'totp', userId);
        assertThat(record.secret, recordNotFound);
        assertThat(await totpStepOf(box.open(record.secret!, pendingContext(experience)), code, { now: now() }), invalidTotp);
        await store.completeVerification(experience._id, verificationId, {}, { verified: true });
        return verificationId;
      }
      const factor = user?.mfaVerifications?.find((candidate) => candidate.type === 'Totp');
      // Without a TOTP factor the answer is a wrong code, as for any other.
      assertThat(user && factor?.type === 'Totp', invalidTotp);
      const totp = factor as Extract<MfaVerification, { type: 'Totp' }>;
      const counted = await countTry(userId, ip);
      const step = await totpStepOf(box.open(totp.key, userId), code, {
        now: now(),
        ...(totp.lastUsedTimeStep !== undefined && { afterTimeStep: totp.lastUsedTimeStep }),
      });
      assertThat(step !== undefined, invalidTotp);
      // Stored only while the factors are as read: of two requests with one code, one wins.
      const modifiedCount = await replaceFactor(user!, { ...totp, lastUsedTimeStep: step!, lastUsedAt: iso() });
      assertThat(modifiedCount === 1, invalidTotp);
      await counted.refund();
      const id = generateId();
      await store.addVerification(experience._id, id, { type: 'totp', userId, verified: true });
      await proved(experience, userId, 'Totp', totp.id);
      return id;
    },
  };
}
