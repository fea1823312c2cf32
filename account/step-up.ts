import { ApiError, assertThat } from '../lib/errors.js';
import { exactObject, guard } from '../lib/http/guard.js';
import { codeIdentifier } from '../sign-in/schemas.js';
import { codeTargetOf } from '../sign-in/codes.js';
import { countCodeSend, rateLimitedFields, tooManyCodes } from '../sign-in/counters.js';
import { passwordProofOf } from '../sign-in/proofs.js';
import { passwordBody, recordAnswer, recordId, verificationsPrefix, type AccountApiDeps, type AccountKit, type AccountRouter } from './context.js';

const tooManyPasswords = (retryAfter: number | undefined) =>
  new ApiError('session.too_many_attempts', 'too many wrong passwords; try again later', { retryAfter });

/**
 * Logto's verifications (`/api/verifications`): what a sensitive change of the account needs first.
 * The password, checked now, or a code sent to the account's own email address or phone number,
 * verified: either is a record that allows one change within ten minutes. A code to a new address
 * or number is the proof that `primary-email` and `primary-phone` need.
 */
export function stepUpRoutes(router: AccountRouter, kit: AccountKit, deps: Pick<AccountApiDeps, 'sendCode' | 'catalogs' | 'reportException' | 'log'>) {
  const { records, counters, codes } = kit;

  // A wrong password is 422; the fifth within 15 minutes locks (429).
  router.post(`${verificationsPrefix}/password`, guard({ scopes: ['openid'], body: passwordBody, status: 201, response: recordAnswer }), async (ctx) => {
    const { user, auth } = ctx.state;
    const lockKey = `step-up:${user._id}`;
    const attempt = await counters.hit('failedPassword', lockKey);
    if (attempt.over) throw tooManyPasswords(attempt.retryAfter);
    let matches = false;
    try {
      matches = user.passwordHash !== null && (await kit.hashFor(ctx.ip, () => kit.passwords.verify(ctx.guard.body.password, user.passwordHash!)));
    } catch (error) {
      // Refused before the password was checked (the budget spent, the server busy): no guess, no count.
      await counters.refund('failedPassword', lockKey);
      throw error;
    }
    if (!matches) throw attempt.last ? tooManyPasswords(attempt.retryAfter) : new ApiError('session.invalid_credentials', 'the password does not match');
    await counters.clear('failedPassword', lockKey);
    // Bound to the password just checked: a new password (here, by a reset, by an administrator) voids it.
    const record = await records.create(user._id, auth.clientId, 'password', { passwordProof: passwordProofOf(user.passwordHash!) });
    ctx.status = 201;
    ctx.body = { verificationRecordId: record.id, expiresAt: record.expiresAt.toISOString() };
  });

  router.post(
    `${verificationsPrefix}/verification-code`,
    guard({ scopes: ['openid'], body: exactObject({ identifier: codeIdentifier }), status: 201, response: recordAnswer }),
    async (ctx) => {
      const send = deps.sendCode;
      assertThat(send, () => new ApiError('connector.not_found', 'no email or SMS connector is configured: the sign-in experience is off', undefined, 501));
      const target = codeTargetOf(ctx.guard.body.identifier, 'body.identifier.value');
      const over = await countCodeSend(counters, target, ctx.ip);
      if (over) {
        const report = {
          event: 'Message.RateLimited',
          fields: rateLimitedFields(target),
          applicationId: ctx.state.auth.clientId,
          ip: ctx.ip,
          source: 'account',
        } as const;
        await deps.reportException(report).catch((error: unknown) => deps.log(error, { method: ctx.method, path: ctx.path }));
        throw tooManyCodes(over);
      }
      const { verificationId, code, expiresAt } = await codes.issue(kit.codeOwner(ctx.state), 'Account', target);
      send(target, code, deps.catalogs?.forRequest(undefined, ctx.get('accept-language')).locale);
      ctx.status = 201;
      ctx.body = { verificationRecordId: verificationId, expiresAt: expiresAt.toISOString() };
    },
  );

  router.post(
    `${verificationsPrefix}/verification-code/verify`,
    guard({
      scopes: ['openid'],
      body: exactObject({ identifier: codeIdentifier, verificationId: recordId, code: { type: 'string', maxLength: 16 } }),
      response: { type: 'object', properties: { verificationRecordId: { type: 'string' } }, required: ['verificationRecordId'] },
    }),
    async (ctx) => {
      const { identifier, verificationId, code } = ctx.guard.body;
      await codes.verify(kit.codeOwner(ctx.state), verificationId, codeTargetOf(identifier, 'body.identifier.value'), code).catch((error: unknown) => {
        // The Account API's name for a record this account and application do not hold (Logto's).
        if (error instanceof ApiError && error.code === 'session.verification_session_not_found') {
          throw new ApiError('verification_record.not_found', 'no verification code of this account and application has that id');
        }
        throw error;
      });
      ctx.body = { verificationRecordId: verificationId };
    },
  );
}
