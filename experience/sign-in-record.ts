import type { SignInInteraction } from '../provider/sessions.js';
import type { Codes } from '../sign-in/codes.js';
import type { UserDocument } from '../lib/store/models.js';
import type { ExperienceDocument, Verification } from './state.js';

type VerificationRecord = SignInInteraction['verificationRecords'][number];

/** Logto's names of verification kinds (`VerificationType`), as its JWT customizer context shows them. */
const logtoType: { [Kind in Verification['type']]: string } = {
  password: 'Password',
  newPasswordIdentity: 'NewPasswordIdentity',
  oneTimeToken: 'OneTimeToken',
  totp: 'Totp',
  backupCode: 'BackupCode',
  webAuthn: 'WebAuthn',
  social: 'Social',
  enterpriseSso: 'EnterpriseSso',
};

/**
 * What a finished sign-in or registration proved, for the JWT customizer's `interaction` context
 * (Logto's `JwtCustomizerUserInteractionContext`): the records of this interaction that prove
 * something about `account`, the account signed in or created, and never a secret. A proof of
 * another account (a password tried for someone else, a social account linked to another user,
 * second factors of another account) is left out, as is what was never verified.
 */
export async function signInRecordOf(
  experience: ExperienceDocument,
  event: 'SignIn' | 'Register',
  accountId: string,
  /** The account's addresses and linked identities, read only when a record names one (most sign-ins have none). */
  loadAccount: () => Promise<Pick<UserDocument, 'primaryEmail' | 'identities' | 'ssoIdentities'>>,
  codes: Pick<Codes, 'spentBy'>,
): Promise<SignInInteraction> {
  const records: VerificationRecord[] = [];
  const namesAnAccount = Object.values(experience.verifications).some(({ type }) => type === 'oneTimeToken' || type === 'social' || type === 'enterpriseSso');
  const account = { _id: accountId, ...(namesAnAccount ? await loadAccount() : { primaryEmail: null, identities: {} }) };
  const upstreamOfAccount = (target: string, id: string | undefined) =>
    (account.identities[target] as { userId?: string } | undefined)?.userId === id && id !== undefined;
  for (const [id, verification] of Object.entries(experience.verifications)) {
    const type = logtoType[verification.type];
    switch (verification.type) {
      case 'password':
        if (verification.userId === account._id) records.push({ id, type, userId: account._id, verified: true });
        break;
      case 'newPasswordIdentity':
        if (event === 'Register') records.push({ id, type, identifier: { type: 'username', value: verification.username } });
        break;
      case 'oneTimeToken':
        if (event === 'Register' || verification.email.toLowerCase() === account.primaryEmail?.toLowerCase()) {
          records.push({ id, type, identifier: { type: 'email', value: verification.email }, verified: true });
        }
        break;
      case 'totp':
      case 'backupCode':
      case 'webAuthn':
        if (verification.verified && verification.userId === account._id) records.push({ id, type, userId: account._id, verified: true });
        break;
      case 'social': {
        const upstream = verification.upstream;
        if (verification.verified && upstream && upstreamOfAccount(verification.target, upstream.id)) {
          const { id: upstreamId, name, email, avatar } = upstream;
          records.push({ id, type, connectorId: verification.connectorId, verified: true, socialUserInfo: { id: upstreamId, name, email, avatar } });
        }
        break;
      }
      case 'enterpriseSso': {
        const upstream = verification.upstream;
        const linked = upstream && account.ssoIdentities?.some(({ issuer, identityId }) => issuer === upstream.issuer && identityId === upstream.identityId);
        if (verification.verified && linked) {
          const { identityId, email, name, avatar } = upstream;
          records.push({ id, type, connectorId: verification.connectorId, verified: true, enterpriseSsoUserInfo: { id: identityId, email, name, avatar } });
        }
        break;
      }
    }
  }
  // Codes live apart from the interaction's other records; those it spent proved an address or a number it used.
  for (const { verificationId, target } of await codes.spentBy(experience._id)) {
    records.push({
      id: verificationId,
      type: target.type === 'email' ? 'EmailVerificationCode' : 'PhoneVerificationCode',
      identifier: target,
      verified: true,
    });
  }
  // JSON has no undefined: fields an upstream did not give are left out.
  return { interactionEvent: event, userId: account._id, verificationRecords: JSON.parse(JSON.stringify(records)) as VerificationRecord[] };
}
