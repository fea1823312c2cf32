import { ApiError, assertThat } from '../lib/errors.js';
import { exactObject, guard } from '../lib/http/guard.js';
import { email, emailKey } from '../lib/identifiers.js';
import { phoneInput } from '../lib/phone.js';
import type { UserDocument } from '../lib/store/models.js';
import { createAccountLookup } from '../sign-in/accounts.js';
import { codeTargetOf } from '../sign-in/codes.js';
import { canSignIn, heldBy } from '../sign-in/profile.js';
import { missingProfile } from '../sign-in/settings.js';
import { accountPrefix, recordId, type AccountApiDeps, type AccountKit, type AccountRouter } from './context.js';

/**
 * Logto's `POST/DELETE /api/my-account/primary-email` and `/primary-phone`: a step-up, and for a new
 * one the verified code that proves it (`newIdentifierVerificationRecordId`); 422 when another
 * account has it. Removing one the settings require, or the account's last way to sign in, is 422.
 */
export function identifierRoutes(router: AccountRouter, kit: AccountKit, deps: Pick<AccountApiDeps, 'queries' | 'signInSettings'>) {
  const accounts = createAccountLookup(deps.queries, async () => (await deps.signInSettings()).emailBlocklistPolicy);

  /**
   * Whether the account keeps what the settings require, and a way to sign in, without `field`:
   * 422 `user.email_required`, `user.phone_required` or `user.email_or_phone_required` if not.
   */
  const assertRemovable = async (user: UserDocument, field: 'email' | 'phone') => {
    const settings = await deps.signInSettings();
    const held = heldBy({}, user);
    const after = { ...held, [field]: false };
    const before = new Set(missingProfile(settings, held));
    const lost = missingProfile(settings, after).find((missing) => !before.has(missing));
    const stillSignsIn = canSignIn(field === 'email' ? { ...user, primaryEmail: null } : { ...user, primaryPhone: null }, settings);
    const required = lost === 'emailOrPhone' ? 'user.email_or_phone_required' : field === 'email' ? 'user.email_required' : 'user.phone_required';
    assertThat(
      !lost,
      () => new ApiError(required, `the sign-in settings require ${lost === 'emailOrPhone' ? 'an email address or a phone number' : `a ${field}`}`),
    );
    assertThat(stillSignsIn, () => new ApiError(required, `without it, the account would have no way to sign in`));
  };

  for (const field of ['email', 'phone'] as const) {
    const scope = field;
    const path = `${accountPrefix}/primary-${field}`;
    router.post(
      path,
      guard({
        scopes: [scope],
        body: exactObject({ [field]: field === 'email' ? email : phoneInput, newIdentifierVerificationRecordId: recordId } as {
          email: typeof email;
          newIdentifierVerificationRecordId: typeof recordId;
        }),
        status: 204,
      }),
      async (ctx) => {
        const { state } = ctx;
        const stepUp = kit.stepUpOf(ctx);
        const body = ctx.guard.body as Record<string, string>;
        const target = codeTargetOf({ type: field, value: body[field]! }, `body.${field}`);
        const proof = body.newIdentifierVerificationRecordId!;
        assertThat(
          await kit.codes.isSpendable(kit.codeOwner(state), proof, 'Account', [target]),
          () => new ApiError('verification_record.not_found', `newIdentifierVerificationRecordId is not a verified code for this ${field}`),
        );
        // The settings' email policy, before anything is spent (Logto's Account API checks it too).
        if (field === 'email') await accounts.assertEmailAllowed(target.value);
        const owner = await accounts.findUser(target);
        assertThat(!owner || owner._id === state.user._id, () =>
          field === 'email'
            ? new ApiError('user.email_already_in_use', 'this email address already has an account')
            : new ApiError('user.phone_already_in_use', 'this phone number already has an account'),
        );
        const set = field === 'email' ? { primaryEmail: target.value, emailKey: emailKey(target.value) } : { primaryPhone: target.value };
        await kit.update(ctx, set, async () => {
          await kit.spendStepUp(state, stepUp);
          const spent = await kit.codes.spend(kit.codeOwner(state), proof, 'Account', { accept: [target] }).catch(() => undefined);
          assertThat(spent, () => new ApiError('verification_record.not_found', 'the verification of the new identifier was used meanwhile'));
        });
        ctx.status = 204;
      },
    );
    router.delete(path, guard({ scopes: [scope], status: 204 }), async (ctx) => {
      const { state } = ctx;
      const stepUp = kit.stepUpOf(ctx);
      await assertRemovable(state.user, field);
      await kit.update(ctx, field === 'email' ? { primaryEmail: null, emailKey: null } : { primaryPhone: null }, () => kit.spendStepUp(state, stepUp));
      ctx.status = 204;
    });
  }
}
