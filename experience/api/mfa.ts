import type Router from '@koa/router';

import { exactObject, guard, type TypedSchema } from '../../lib/http/guard.js';
import { totpQrPng } from '../../lib/mfa/totp.js';
import { callerOf, type ExperienceState } from '../http.js';
import type { ExperienceService } from '../service.js';
import { answer, verificationAnswer, verificationId } from './schemas.js';

const object = exactObject;
const code = { type: 'string', minLength: 1, maxLength: 32 } as const;
// A WebAuthn response as the browser's PublicKeyCredential.toJSON() gives it; @simplewebauthn/server checks the rest.
const credentialResponse = (fields: Record<string, TypedSchema>) =>
  ({
    type: 'object',
    properties: {
      id: { type: 'string', minLength: 1, maxLength: 1024 },
      rawId: { type: 'string', minLength: 1, maxLength: 1024 },
      type: { const: 'public-key' },
      response: { type: 'object', properties: fields, required: Object.keys(fields), additionalProperties: true },
    },
    required: ['id', 'rawId', 'type', 'response'],
    additionalProperties: true,
  }) as const;
const base64url = { type: 'string', maxLength: 65536, pattern: '^[A-Za-z0-9_-]*$' } as const;

/** MFA, as Logto's verification routes: a TOTP secret and its code, backup codes, a passkey's registration and authentication. */
export function mfaRoutes(router: Router<ExperienceState>, service: ExperienceService) {
  router.post(
    '/verification/totp/secret',
    guard({ response: answer({ verificationId, secret: { type: 'string' }, secretQrCode: { type: 'string' } }), public: true }),
    async (ctx) => {
      const { verificationId: id, secret, uri } = await service.mfa.totpSecret(ctx.state.experience);
      ctx.body = { verificationId: id, secret, secretQrCode: await totpQrPng(uri) };
    },
  );
  router.post(
    '/verification/totp/verify',
    guard({
      body: { type: 'object', properties: { code, verificationId }, required: ['code'], additionalProperties: false } as const,
      ...verificationAnswer,
      public: true,
    }),
    async (ctx) => {
      const { code: given, verificationId: id } = ctx.guard.body;
      ctx.body = { verificationId: await service.mfa.totpVerify(ctx.state.experience, given, id, callerOf(ctx)) };
    },
  );
  router.post(
    '/verification/backup-code/generate',
    guard({ response: answer({ verificationId, codes: { type: 'array', items: { type: 'string' } } }), public: true }),
    async (ctx) => {
      ctx.body = await service.mfa.backupCodesGenerate(ctx.state.experience);
    },
  );
  router.post('/verification/backup-code/verify', guard({ body: object({ code }), ...verificationAnswer, public: true }), async (ctx) => {
    ctx.body = { verificationId: await service.mfa.backupCodeVerify(ctx.state.experience, ctx.guard.body.code, callerOf(ctx)) };
  });
  router.post(
    '/verification/web-authn/registration',
    guard({ response: answer({ verificationId, registrationOptions: { type: 'object', additionalProperties: true } }), public: true }),
    async (ctx) => {
      ctx.body = await service.mfa.webAuthnRegistration(ctx.state.experience);
    },
  );
  router.post(
    '/verification/web-authn/registration/verify',
    guard({
      body: object({ verificationId, payload: credentialResponse({ clientDataJSON: base64url, attestationObject: base64url }) }),
      ...verificationAnswer,
      public: true,
    }),
    async (ctx) => {
      const { verificationId: id, payload } = ctx.guard.body;
      ctx.body = { verificationId: await service.mfa.webAuthnRegistrationVerify(ctx.state.experience, id, payload as never, callerOf(ctx)) };
    },
  );
  router.post(
    '/verification/web-authn/authentication',
    guard({ response: answer({ verificationId, authenticationOptions: { type: 'object', additionalProperties: true } }), public: true }),
    async (ctx) => {
      ctx.body = await service.mfa.webAuthnAuthentication(ctx.state.experience);
    },
  );
  router.post(
    '/verification/web-authn/authentication/verify',
    guard({
      body: object({ verificationId, payload: credentialResponse({ clientDataJSON: base64url, authenticatorData: base64url, signature: base64url }) }),
      ...verificationAnswer,
      public: true,
    }),
    async (ctx) => {
      const { verificationId: id, payload } = ctx.guard.body;
      ctx.body = { verificationId: await service.mfa.webAuthnAuthenticationVerify(ctx.state.experience, id, payload as never, callerOf(ctx)) };
    },
  );
}
