import { ApiError, assertThat } from '../../lib/errors.js';
import { addressKey } from '../../lib/http/client-address.js';
import { emailKey } from '../../lib/identifiers.js';
import { generateId } from '../../lib/ids.js';
import { normalizePhone } from '../../lib/phone.js';
import type { UserDocument } from '../../lib/store/models.js';
import { suspended, type AccountLookup, type Identifier } from '../../sign-in/accounts.js';
import { requireSignInMethod, requireSignUpIdentifier } from '../../sign-in/methods.js';
import { assertPasswordAllowed } from '../../sign-in/password-policy.js';
import { passwordProofOf } from '../../sign-in/proofs.js';
import type { Caller, ExperienceServiceDeps } from '../deps.js';
import type { InteractionSteps } from '../interaction.js';
import type { ExperienceDocument } from '../state.js';

/** Runs a password hash through the address's budget and the process's cap (`budgetedHashing`). */
export type HashFor = <T>(caller: Caller, work: () => Promise<T>) => Promise<T>;

// One answer for an unknown identifier and a wrong password, so that neither tells an account exists.
const invalidCredentials = () => new ApiError('session.invalid_credentials', 'the identifier or the password is wrong');
const tooManyAttempts = (retryAfter: number) => new ApiError('session.too_many_attempts', 'too many attempts; try again later', { retryAfter });
/** An identifier locked by failed attempts: Logto's sentinel answer (400, its code), with when to try again. */
const blocked = (retryAfter: number) =>
  new ApiError('session.verification_blocked_too_many_attempts', 'too many failed attempts for this account; try again later', { retryAfter });

/** The refusals of a password sign-in that `SignIn.Failed` announces. */
const signInFailures = new Set([
  'session.invalid_credentials',
  'session.too_many_attempts',
  'session.verification_blocked_too_many_attempts',
  'user.suspended',
]);

const identifierKey = ({ type, value }: Identifier) => `${type}:${type === 'email' ? emailKey(value) : value}`;

/** Logto's `verification/password` (a sign-in) and `verification/new-password-identity` (a registration). */
export function passwordSteps(
  deps: Pick<ExperienceServiceDeps, 'queries' | 'store' | 'counters' | 'signInSettings' | 'reportSignInFailure' | 'passwords'>,
  interaction: Pick<InteractionSteps, 'requireEvent' | 'announce'>,
  accounts: AccountLookup,
  hashFor: HashFor,
) {
  const { queries, store, counters, passwords } = deps;
  const { requireEvent } = interaction;

  /**
   * An imported digest (Logto's `passwordDigest`), or a hash made at another cost, just proven by its
   * password is replaced by a hash at the configured cost, unless the stored one changed meanwhile. Best effort: when the hash budget is spent, the
   * next sign-in does it.
   */
  async function rehashStale(user: UserDocument & { passwordHash: string }, password: string, caller: Caller): Promise<string> {
    if (!passwords.needsRehash(user.passwordHash)) return user.passwordHash;
    try {
      const rehashed = await hashFor(caller, () => passwords.hash(password));
      // The hash the account now has for this password: the new one, or the old one if it changed meanwhile.
      if (await queries.users.updateIf(user._id, { passwordHash: user.passwordHash }, { passwordHash: rehashed })) return rehashed;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
    return user.passwordHash;
  }

  return {
    /**
     * SignIn: checks an identifier and password; answers a verification id. Before any hash:
     * the address's hash budget, its budget of attempts across accounts (spraying), and the
     * account's lockout from this address (an unknown identifier counts for itself).
     */
    async verifyPassword(experience: ExperienceDocument, given: Identifier, password: string, caller: Caller): Promise<string> {
      try {
        return await checkPassword(experience, given, password, caller);
      } catch (error) {
        // Opt-in `SignIn.Failed`: the identifier's type and the answer, never the password or the identifier.
        if (error instanceof ApiError && signInFailures.has(error.code)) {
          deps.reportSignInFailure?.({
            identifierType: given.type,
            reason: error.code,
            interactionEvent: experience.event ?? 'SignIn',
            ip: caller.ip,
            ...(caller.userAgent && { userAgent: caller.userAgent }),
          });
        }
        throw error;
      }
    },

    /** Register: a username and its password, checked against the policy; answers a verification id. */
    async newPasswordIdentity(experience: ExperienceDocument, username: string, password: string, caller: Caller): Promise<string> {
      // As Logto's: made in any interaction, answering the username's and the password's own errors;
      // only a registration's identification can use it.
      requireEvent(experience, 'Register', 'SignIn', 'ForgotPassword');
      requireSignUpIdentifier(await deps.signInSettings(), 'username');
      // The hash first: each answer about a username (taken or not) costs the address one of its
      // hashes, as identifying a registration did when this step was a registration's only, so that
      // usernames cannot be tried without limit. Then Logto's order: a taken username before the password's faults.
      const passwordHash = await hashFor(caller, () => passwords.hash(password));
      await accounts.assertAvailable({ username });
      assertPasswordAllowed(password, [username, experience.profile.email]);
      const verificationId = generateId();
      await store.addVerification(experience._id, verificationId, { type: 'newPasswordIdentity', username, passwordHash });
      return verificationId;
    },
  };

  async function checkPassword(experience: ExperienceDocument, given: Identifier, password: string, caller: Caller): Promise<string> {
    // A phone number as stored; one that cannot exist names no account, and is answered as any unknown identifier.
    const identifier = given.type === 'phone' ? { type: given.type, value: normalizePhone(given.value) ?? given.value } : given;
    // As Logto's: a password may be verified in any interaction; only a sign-in's identification uses it.
    requireEvent(experience, 'SignIn', 'Register', 'ForgotPassword');
    requireSignInMethod(await deps.signInSettings(), identifier.type, 'password');
    const address = addressKey(caller.ip);
    const spray = await counters.hit('passwordSpray', address);
    if (spray.over) throw tooManyAttempts(spray.retryAfter);
    const user = await accounts.findUser(identifier);
    const lockKey = `${user ? `account:${user._id}` : identifierKey(identifier)}|${address}`;
    const attempt = await counters.hit('failedPassword', lockKey);
    if (attempt.over) throw blocked(attempt.retryAfter);

    let matches: boolean;
    try {
      matches = await hashFor(caller, () => (user?.passwordHash ? passwords.verify(password, user.passwordHash) : passwords.verifyUnknown(password)));
    } catch (error) {
      // Refused before any password was checked (the server busy, or the address's hash budget
      // spent): not a guess, so it does not count toward the account's lockout or the spraying budget.
      await Promise.all([counters.refund('failedPassword', lockKey), counters.refund('passwordSpray', address)]);
      throw error;
    }
    if (!user || !matches) {
      if (!attempt.last) throw invalidCredentials();
      // This failure locks the identifier: announced (Logto's Identifier.Lockout, the value as typed).
      await interaction.announce(experience, caller, 'Identifier.Lockout', { type: given.type, value: given.value });
      throw blocked(attempt.retryAfter);
    }
    // The right password: the attempts of this window were not an attack on it.
    await Promise.all([counters.clear('failedPassword', lockKey), counters.refund('passwordSpray', address)]);
    assertThat(!user.isSuspended, suspended);
    const checked = await rehashStale({ ...user, passwordHash: user.passwordHash! }, password, caller);
    const verificationId = generateId();
    // Bound to the password checked: a new one set before the sign-in is submitted voids it.
    await store.addVerification(experience._id, verificationId, { type: 'password', userId: user._id, passwordProof: passwordProofOf(checked) });
    return verificationId;
  }
}
