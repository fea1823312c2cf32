import { assertThat } from '../../lib/errors.js';
import { generateId } from '../../lib/ids.js';
import { hashBackupCode, matchBackupCode, newBackupCodes } from '../../lib/mfa/backup-codes.js';
import { type MfaVerification } from '../../lib/mfa/model.js';
import { type ExperienceDocument } from '../state.js';
import { invalidBackupCode, type MfaContext } from './context.js';

/** Backup codes: ten new ones to save, and one spent, once, across processes. */
export function backupCodeSteps(context: MfaContext) {
  const { store, iso, subjectOf, countTry, proved, replaceFactor } = context;
  return {
    /** Ten new backup codes, shown this once; their hashes wait in the interaction until bound. */
    async backupCodesGenerate(experience: ExperienceDocument) {
      const { userId } = await subjectOf(experience);
      const codes = newBackupCodes();
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, { type: 'backupCode', userId, codes: codes.map(hashBackupCode), verified: true });
      return { verificationId, codes };
    },

    /** One of the user's backup codes, spent (a conditional update: one use, across processes); counted toward the lockout. */
    async backupCodeVerify(experience: ExperienceDocument, code: string, ip: string): Promise<string> {
      const { userId, user } = await subjectOf(experience);
      const factor = user?.mfaVerifications?.find((candidate) => candidate.type === 'BackupCode');
      assertThat(user && factor?.type === 'BackupCode', invalidBackupCode);
      const counted = await countTry(userId, ip);
      const codes = (factor as Extract<MfaVerification, { type: 'BackupCode' }>).codes;
      const index = matchBackupCode(codes, code);
      assertThat(index >= 0, invalidBackupCode);
      const spent = codes.map((entry, position) => (position === index ? { ...entry, usedAt: iso() } : entry));
      const modifiedCount = await replaceFactor(user!, { ...(factor as Extract<MfaVerification, { type: 'BackupCode' }>), codes: spent, lastUsedAt: iso() });
      assertThat(modifiedCount === 1, invalidBackupCode);
      await counted.refund();
      const id = generateId();
      await store.addVerification(experience._id, id, { type: 'backupCode', userId, verified: true });
      await proved(experience, userId, 'BackupCode', factor.id);
      return id;
    },
  };
}
