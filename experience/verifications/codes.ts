import type { InteractionKind } from '../../hooks/catalog.js';
import type { AccountLookup } from '../../sign-in/accounts.js';
import { codeTargetOf, type CodeTarget } from '../../sign-in/codes.js';
import { countCodeSend, rateLimitedFields, tooManyCodes } from '../../sign-in/counters.js';
import { codeMessenger } from '../../sign-in/messages.js';
import type { Caller, ExperienceServiceDeps } from '../deps.js';
import type { InteractionSteps } from '../interaction.js';
import type { ExperienceDocument } from '../state.js';

/** Logto's `verification/verification-code`: a code sent to an email address or a phone number, then checked. */
export function codeSteps(
  deps: Pick<ExperienceServiceDeps, 'codes' | 'counters' | 'email' | 'sms' | 'productName' | 'logger' | 'catalogs'>,
  interaction: Pick<InteractionSteps, 'requireEvent' | 'announce'>,
  accounts: AccountLookup,
) {
  const { codes, counters } = deps;
  const { requireEvent } = interaction;
  const sendCode = codeMessenger(deps);

  return {
    /**
     * Sends a code to an email address or a phone number: in a registration or a sign-in to what was
     * typed (to identify by it, when the settings allow, or to add it to the profile), in a reset only
     * to an account's own. The answer is the same whether or not an account has it. What the code may
     * then do is decided where it is used (identification, profile), as Logto decides it.
     * `purpose` (the body's `interactionEvent`, as Logto's, by default the interaction's own) picks
     * the message, and what the code may be spent on: a code sent for a registration registers.
     */
    async sendCode(experience: ExperienceDocument, given: CodeTarget, caller: Caller, purpose?: InteractionKind): Promise<string> {
      const started = requireEvent(experience, 'Register', 'SignIn', 'ForgotPassword');
      const event = purpose ?? started;
      const target = codeTargetOf(given);
      // As Logto's: an address the settings' email policy refuses gets no registration code.
      if (event === 'Register' && target.type === 'email') await accounts.assertEmailAllowed(target.value);
      const over = await countCodeSend(counters, target, caller.ip);
      if (over) {
        await interaction.announce(experience, caller, 'Message.RateLimited', rateLimitedFields(target));
        throw tooManyCodes(over);
      }
      const { verificationId, code } = await codes.issue(experience._id, event, target);
      // A reset code goes to the address the account has on file, never to the address as typed:
      // the two compare equal, but only the stored one is known to be the owner's.
      const owner = event === 'ForgotPassword' ? await accounts.findUser(target) : undefined;
      const to = event !== 'ForgotPassword' ? target.value : target.type === 'email' ? owner?.primaryEmail : owner?.primaryPhone;
      // Not awaited (see codeMessenger): an answer that waited for the gateway only when an account exists would tell that it exists.
      if (to) sendCode({ type: target.type, value: to }, code, caller.locale);
      return verificationId;
    },

    async verifyCode(experience: ExperienceDocument, verificationId: string, given: CodeTarget, code: string): Promise<string> {
      requireEvent(experience, 'Register', 'SignIn', 'ForgotPassword');
      await codes.verify(experience._id, verificationId, codeTargetOf(given), code);
      return verificationId;
    },
  };
}
