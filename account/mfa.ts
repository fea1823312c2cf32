import { ApiError, assertThat } from '../lib/errors.js';
import { exactObject, guard } from '../lib/http/guard.js';
import { generateId } from '../lib/ids.js';
import { hashBackupCode, newBackupCodes } from '../lib/mfa/backup-codes.js';
import {
  backupCodesSchema,
  mfaToApi,
  mfaVerificationResponse,
  isTotpSecret,
  totpSecretSchema,
  type MfaFactor,
  type MfaVerification,
  type WebAuthnFactor,
} from '../lib/mfa/model.js';
import { newTotpSecret, totpStepOf } from '../lib/mfa/totp.js';
import { challengeTtlMs, registrationOptions, verifiedRegistration } from '../lib/mfa/webauthn.js';
import type { UserDocument } from '../lib/store/models.js';
import { accountPrefix, verificationsPrefix, type AccountApiDeps, type AccountKit, type AccountRouter } from './context.js';

const scopes = ['identities'];
const totpSecret = totpSecretSchema;
const code = { type: 'string', minLength: 6, maxLength: 6, pattern: '^[0-9]{6}$' } as const;
const backupCodes = backupCodesSchema;

/**
 * Logto's Account API for MFA (packages/core/src/routes/account/mfa-verifications.ts): the user's
 * own factors, with the `identities` scope (403 without); every change behind a step-up, as the
 * other sensitive changes, and announced as `User.Data.Updated` with `changes: ["mfaVerifications"]`.
 * A passkey is registered through `/api/verifications/web-authn/registration` (+ `/verify`), bound
 * to the user and application like the other verification records.
 */
export function accountMfaRoutes(router: AccountRouter, kit: AccountKit, deps: Pick<AccountApiDeps, 'signInSettings' | 'mfaBox' | 'rp'>) {
  const { records } = kit;
  const { mfaBox: box, rp } = deps;
  const path = `${accountPrefix}/mfa-verifications`;

  const requireOffered = async (type: MfaFactor) => {
    const { mfa } = await deps.signInSettings();
    assertThat(mfa.factors.includes(type), () => new ApiError('session.mfa.mfa_factor_not_enabled', `${type} is not an MFA factor of this service`));
  };
  const factorsOf = (user: UserDocument) => user.mfaVerifications ?? [];
  const now = () => new Date().toISOString();

  router.get(path, guard({ scopes, response: { type: 'array', items: mfaVerificationResponse } }), async (ctx) => {
    ctx.body = factorsOf(ctx.state.user).map(mfaToApi);
  });

  // Helpers that make nothing: a secret or codes for the client to show, then send back with POST.
  router.post(`${path}/totp-secret/generate`, guard({ scopes, response: exactObject({ secret: { type: 'string' } }) }), async (ctx) => {
    ctx.body = { secret: newTotpSecret() };
  });
  router.post(
    `${path}/backup-codes/generate`,
    guard({ scopes, response: exactObject({ codes: { type: 'array', items: { type: 'string' } } }) }),
    async (ctx) => {
      ctx.body = { codes: newBackupCodes() };
    },
  );

  /** A TOTP factor for `secret`, proved by `code` when one is given (Logto's optional check). */
  async function totpFactor(user: UserDocument, secret: string, given: string | undefined): Promise<MfaVerification> {
    assertThat(
      isTotpSecret(secret),
      () => new ApiError('user.totp_secret_invalid', 'secret must be base32 (A-Z, 2-7) of at least 128 bits (26 characters)', { field: 'body.secret' }),
    );
    if (given !== undefined) {
      assertThat(
        await totpStepOf(secret, given, { now: Date.now() }),
        () => new ApiError('session.mfa.invalid_totp_code', 'the code does not match the secret'),
      );
    }
    return { id: generateId(), type: 'Totp', key: box.seal(secret, user._id), createdAt: now() };
  }

  // Logto's `POST /mfa-verifications`: a TOTP secret (with a code from the app), ten backup codes, or a passkey registered just before.
  router.post(
    path,
    guard({
      scopes,
      // One object, not a oneOf: ajv's removeAdditional would strip one branch's fields while trying the other.
      body: {
        type: 'object',
        properties: {
          type: { enum: ['Totp', 'BackupCode', 'WebAuthn'] },
          secret: totpSecret,
          code,
          codes: backupCodes,
          newIdentifierVerificationRecordId: { type: 'string', minLength: 1, maxLength: 128 },
          name: { type: 'string', minLength: 1, maxLength: 64 },
        },
        required: ['type'],
        additionalProperties: false,
      } as const,
      status: 204,
    }),
    async (ctx) => {
      const body = ctx.guard.body;
      const fields: Record<MfaFactor, string[]> = { Totp: ['secret'], BackupCode: ['codes'], WebAuthn: ['newIdentifierVerificationRecordId'] };
      for (const required of fields[body.type]) {
        assertThat(body[required as keyof typeof body] !== undefined, () => new ApiError('guard.invalid_input', `${required} is required for ${body.type}`));
      }
      const stepUp = kit.stepUpOf(ctx);
      await requireOffered(body.type);
      const { user, auth } = ctx.state;
      const current = factorsOf(user);
      let added: MfaVerification | undefined;
      if (body.type === 'Totp') {
        assertThat(
          !current.some(({ type }) => type === 'Totp'),
          () => new ApiError('user.totp_already_in_use', 'this account has an authenticator app already'),
        );
        added = await totpFactor(user, body.secret!, body.code);
      } else if (body.type === 'BackupCode') {
        assertThat(
          !current.some((factor) => factor.type === 'BackupCode' && factor.codes.some(({ usedAt }) => usedAt === null)),
          () => new ApiError('user.backup_code_already_in_use', 'this account has unused backup codes'),
        );
        assertThat(
          current.some(({ type }) => type !== 'BackupCode'),
          () => new ApiError('session.mfa.backup_code_can_not_be_alone', 'add another factor before backup codes'),
        );
        added = { id: generateId(), type: 'BackupCode', codes: body.codes!.map((given) => ({ hash: hashBackupCode(given), usedAt: null })), createdAt: now() };
      }
      await kit.update(
        ctx,
        (fresh) => ({ mfaVerifications: [...factorsOf(fresh).filter(({ type }) => body.type !== 'BackupCode' || type !== 'BackupCode'), added!] }),
        async () => {
          await kit.spendStepUp(ctx.state, stepUp);
          if (body.type !== 'WebAuthn') return;
          const credential = await records.spendRegistration(body.newIdentifierVerificationRecordId!, user._id, auth.clientId);
          assertThat(
            credential,
            () => new ApiError('verification_record.not_found', 'newIdentifierVerificationRecordId is not a verified passkey registration of this account'),
          );
          added = { id: generateId(), type: 'WebAuthn', ...credential!, ...(body.name && { name: body.name }), createdAt: now() };
        },
      );
      ctx.status = 204;
    },
  );

  // Replaces the authenticator app (a new secret, proved by a code from it).
  router.put(`${path}/totp`, guard({ scopes, body: exactObject({ secret: totpSecret, code }), status: 204 }), async (ctx) => {
    const stepUp = kit.stepUpOf(ctx);
    await requireOffered('Totp');
    const { user } = ctx.state;
    const added = await totpFactor(user, ctx.guard.body.secret, ctx.guard.body.code);
    await kit.update(
      ctx,
      (fresh) => ({ mfaVerifications: [...factorsOf(fresh).filter(({ type }) => type !== 'Totp'), added] }),
      () => kit.spendStepUp(ctx.state, stepUp),
    );
    ctx.status = 204;
  });

  // Logto answers the codes themselves; they are stored hashed here, so what is left is when each was used.
  router.get(
    `${path}/backup-codes`,
    guard({ scopes, response: exactObject({ codes: { type: 'array', items: { type: 'object', properties: { usedAt: { type: ['string', 'null'] } } } } }) }),
    async (ctx) => {
      const factor = factorsOf(ctx.state.user).find((candidate) => candidate.type === 'BackupCode');
      assertThat(factor?.type === 'BackupCode', () => new ApiError('verification_record.not_found', 'this account has no backup codes', undefined, 404));
      ctx.body = { codes: (factor as Extract<MfaVerification, { type: 'BackupCode' }>).codes.map(({ usedAt }) => ({ usedAt })) };
    },
  );

  const params = exactObject({ verificationId: { type: 'string', minLength: 1, maxLength: 64 } });
  router.patch(
    `${path}/:verificationId/name`,
    guard({ scopes, params, body: exactObject({ name: { type: 'string', minLength: 1, maxLength: 64 } }), response: mfaVerificationResponse }),
    async (ctx) => {
      const stepUp = kit.stepUpOf(ctx);
      const { verificationId } = ctx.guard.params;
      const own = factorsOf(ctx.state.user).find((factor) => factor.id === verificationId && factor.type === 'WebAuthn');
      assertThat(own, () => new ApiError('verification_record.not_found', 'no passkey of this account has that id'));
      const updated = await kit.update(
        ctx,
        (fresh) => ({
          mfaVerifications: factorsOf(fresh).map((factor) =>
            factor.id === verificationId ? { ...(factor as WebAuthnFactor), name: ctx.guard.body.name } : factor,
          ),
        }),
        () => kit.spendStepUp(ctx.state, stepUp),
      );
      ctx.body = mfaToApi(factorsOf(updated).find((factor) => factor.id === verificationId)!);
    },
  );

  router.delete(`${path}/:verificationId`, guard({ scopes, params, status: 204 }), async (ctx) => {
    const stepUp = kit.stepUpOf(ctx);
    const { verificationId } = ctx.guard.params;
    assertThat(
      factorsOf(ctx.state.user).some((factor) => factor.id === verificationId),
      () => new ApiError('verification_record.not_found', 'no factor of this account has that id'),
    );
    await kit.update(
      ctx,
      (fresh) => ({ mfaVerifications: factorsOf(fresh).filter((factor) => factor.id !== verificationId) }),
      () => kit.spendStepUp(ctx.state, stepUp),
    );
    ctx.status = 204;
  });

  // A passkey for the Account API: options (a challenge of this user and application, 5 minutes), then the answer checked.
  router.post(
    `${verificationsPrefix}/web-authn/registration`,
    guard({
      scopes,
      status: 201,
      response: exactObject({
        verificationRecordId: { type: 'string' },
        registrationOptions: { type: 'object', additionalProperties: true },
        expiresAt: { type: 'string' },
      }),
    }),
    async (ctx) => {
      await requireOffered('WebAuthn');
      const { user, auth } = ctx.state;
      const own = factorsOf(user).filter((factor): factor is WebAuthnFactor => factor.type === 'WebAuthn');
      const options = await registrationOptions(rp, { id: user._id, name: user.username ?? user.primaryEmail ?? user._id }, own);
      const record = await records.create(user._id, auth.clientId, 'webAuthnRegistration', { challenge: options.challenge, ttlMs: challengeTtlMs });
      ctx.status = 201;
      ctx.body = { verificationRecordId: record.id, registrationOptions: options, expiresAt: record.expiresAt.toISOString() };
    },
  );
  router.post(
    `${verificationsPrefix}/web-authn/registration/verify`,
    guard({
      scopes,
      body: exactObject({
        verificationRecordId: { type: 'string', minLength: 1, maxLength: 128 },
        payload: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            rawId: { type: 'string' },
            type: { const: 'public-key' },
            response: { type: 'object', additionalProperties: true },
          },
          required: ['id', 'rawId', 'type', 'response'],
          additionalProperties: true,
        },
      }),
      response: exactObject({ verificationRecordId: { type: 'string' } }),
    }),
    async (ctx) => {
      const { user, auth } = ctx.state;
      const { verificationRecordId, payload } = ctx.guard.body;
      const failed = () => new ApiError('session.mfa.webauthn_verification_failed', 'the passkey could not be verified; try again');
      const pending = await records.pendingRegistration(verificationRecordId, user._id, auth.clientId);
      assertThat(pending, failed);
      const credential = await verifiedRegistration(rp, pending!.challenge, payload as never, ctx.get('user-agent'));
      assertThat(credential, failed);
      assertThat(await records.completeRegistration(verificationRecordId, credential!), failed);
      ctx.body = { verificationRecordId };
    },
  );
}
