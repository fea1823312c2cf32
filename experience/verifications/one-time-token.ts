import { ApiError, assertThat } from '../../lib/errors.js';
import { emailKey } from '../../lib/identifiers.js';
import { generateId, sha256 } from '../../lib/ids.js';
import type { ExperienceServiceDeps } from '../deps.js';
import type { InteractionSteps } from '../interaction.js';
import type { ExperienceDocument } from '../state.js';

/**
 * Logto's `verification/one-time-token/verify`: a one-time token (a magic link's, an invitation's)
 * for an email address, spent here once, however many requests race. What it proves, the address
 * and the organizations it joins, is identified by it (`identify.ts`).
 */
export function oneTimeTokenSteps(deps: Pick<ExperienceServiceDeps, 'queries' | 'store'>, interaction: Pick<InteractionSteps, 'requireEvent'>) {
  return {
    async verifyOneTimeToken(experience: ExperienceDocument, email: string, token: string): Promise<string> {
      interaction.requireEvent(experience, 'SignIn', 'Register');
      const address = emailKey(email);
      const spent = await deps.queries.oneTimeTokens.consume(address, sha256(token));
      assertThat(spent !== 'expired', () => new ApiError('one_time_token.token_expired', 'the one-time token has expired'));
      assertThat(
        spent !== 'notFound',
        () => new ApiError('one_time_token.active_token_not_found', 'no active one-time token of this email address has this value'),
      );
      const verificationId = generateId();
      await deps.store.addVerification(experience._id, verificationId, {
        type: 'oneTimeToken',
        email: address,
        jitOrganizationIds: spent.context.jitOrganizationIds ?? [],
      });
      return verificationId;
    },
  };
}
