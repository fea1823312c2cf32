import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { generateId } from '../lib/ids.js';
import { hashBackupCode, newBackupCodes } from '../lib/mfa/backup-codes.js';
import { backupCodesSchema, isTotpSecret, mfaToApi, mfaVerificationResponse, totpSecretSchema, type MfaVerification } from '../lib/mfa/model.js';
import { newTotpSecret, totpQrPng, totpUri } from '../lib/mfa/totp.js';
import { userChanges, userToApi, type UserDocument } from '../lib/store/models.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams } from './schemas/common.js';

const base32Secret = totpSecretSchema;
const invalidTotpSecret = () =>
  new ApiError('user.totp_secret_invalid', 'secret must be base32 (A-Z, 2-7) of at least 128 bits (26 characters)', { field: 'body.secret' });
const backupCodes = backupCodesSchema;

/**
 * Logto's `/api/users/:userId/mfa-verifications`: an operator lists a user's factors (never a
 * secret), adds a TOTP factor or a set of backup codes (answered once with the secret or the
 * codes, to hand to the user), and removes one. Each change is announced as `User.Data.Updated`
 * with `changes: ["mfaVerifications"]`, without any secret.
 */
export function mfaVerificationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { users } = deps.queries;

  const change = (ctx: Parameters<typeof originOf>[0], userId: string, next: (current: MfaVerification[]) => MfaVerification[]) =>
    deps.write(originOf(ctx), async ({ intend, record }) => {
      const current = await users.findByIdOrThrow(userId);
      await intend({ entity: 'User', action: 'updated', id: userId });
      const updated = await users.update(userId, { mfaVerifications: next(current.mfaVerifications ?? []), updatedAt: Date.now() });
      record({ entity: 'User', action: 'updated', id: userId, data: userToApi(updated), changes: userChanges(current, updated) });
      return updated;
    });

  const params = idParams('userId');
  router.get('/users/:userId/mfa-verifications', guard({ params, response: { type: 'array', items: mfaVerificationResponse } }), async (ctx) => {
    const user: UserDocument = await users.findByIdOrThrow(ctx.guard.params.userId);
    ctx.body = (user.mfaVerifications ?? []).map(mfaToApi);
  });

  router.post(
    '/users/:userId/mfa-verifications',
    guard({
      params,
      // One object, not a oneOf: ajv's removeAdditional would strip one branch's fields while trying the other.
      body: {
        type: 'object',
        properties: { type: { enum: ['Totp', 'BackupCode'] }, secret: base32Secret, codes: backupCodes },
        required: ['type'],
        additionalProperties: false,
      } as const,
      response: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          secret: { type: 'string' },
          secretQrCode: { type: 'string' },
          codes: { type: 'array', items: { type: 'string' } },
        },
        required: ['type'],
      },
    }),
    async (ctx) => {
      const { userId } = ctx.guard.params;
      const body = ctx.guard.body;
      assertThat(
        body.type === 'Totp' ? body.codes === undefined : body.secret === undefined,
        () => new ApiError('guard.invalid_input', body.type === 'Totp' ? 'codes belong to a BackupCode factor' : 'a secret belongs to a Totp factor'),
      );
      const createdAt = new Date().toISOString();
      if (body.type === 'Totp') {
        assertThat(body.secret === undefined || isTotpSecret(body.secret), invalidTotpSecret);
        const secret = body.secret ?? newTotpSecret();
        const updated = await change(ctx, userId, (current) => {
          assertThat(!current.some(({ type }) => type === 'Totp'), () => new ApiError('user.totp_already_in_use', 'this user has a TOTP factor already'));
          return [...current, { id: generateId(), type: 'Totp', key: deps.mfaBox.seal(secret, userId), createdAt }];
        });
        const label = updated.username ?? updated.primaryEmail ?? updated._id;
        ctx.body = { type: 'Totp', secret, secretQrCode: await totpQrPng(totpUri(secret, { issuer: deps.productName, label })) };
        return;
      }
      const codes = body.codes ?? newBackupCodes();
      // A new set replaces the old one.
      await change(ctx, userId, (current) => [
        ...current.filter(({ type }) => type !== 'BackupCode'),
        { id: generateId(), type: 'BackupCode', codes: codes.map((code) => ({ hash: hashBackupCode(code), usedAt: null })), createdAt },
      ]);
      ctx.body = { type: 'BackupCode', codes };
    },
  );

  router.delete('/users/:userId/mfa-verifications/:verificationId', guard({ params: idParams('userId', 'verificationId') }), async (ctx) => {
    const { userId, verificationId } = ctx.guard.params;
    await change(ctx, userId, (current) => {
      assertThat(
        current.some(({ id }) => id === verificationId),
        () => notFound('MfaVerification', verificationId),
      );
      return current.filter(({ id }) => id !== verificationId);
    });
    ctx.status = 204;
  });
}
