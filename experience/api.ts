import type { Catalogs } from '../i18n/index.js';
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { ApiError, assertThat } from '../lib/errors.js';
import { exactObject, guard, type Admitted, type TypedSchema } from '../lib/http/guard.js';
import { jsonBody } from '../lib/http/json-body.js';
import { phoneInput } from '../lib/phone.js';
import { email } from '../lib/identifiers.js';
import { interactionKinds } from '../hooks/catalog.js';
import { mfaFactors } from '../lib/mfa/model.js';
import { maxPasswordLength } from '../sign-in/password-policy.js';
import type { Caller, ExperienceService } from './service.js';
import type { ExperienceDocument } from './state.js';

export const experiencePrefix = '/api/experience';
/**
 * Names the interaction for the JSON API; set, signed, by the interaction's landing page once
 * oidc-provider has checked its own interaction cookie.
 */
export const experienceCookie = '_experience';

/** What the API's middleware leaves on the context: this browser's interaction. */
export interface ExperienceState {
  experience: ExperienceDocument;
  clientId: string | undefined;
}

/** Who is calling, read off any Koa context. */
export const callerOf = (ctx: Pick<ParameterizedContext, 'ip' | 'method' | 'path' | 'get'>): Caller => {
  const userAgent = ctx.get('user-agent');
  return { ip: ctx.ip, method: ctx.method, path: ctx.path, ...(userAgent && { userAgent }) };
};

// Usernames as Logto allows them: a letter or underscore first, then letters, digits and underscores.
export const usernamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
const password = { type: 'string', minLength: 1, maxLength: maxPasswordLength } as const;
const event = { enum: interactionKinds } as const;
const verificationId = { type: 'string', minLength: 1, maxLength: 64 } as const;
const object = exactObject;
type IdentifierSchema<T extends string, V extends TypedSchema> = ReturnType<typeof exactObject<{ type: { readonly const: T }; value: V }>>;
/** `{type, value}`, one of the given identifier types, each with its value's schema. */
const identifier = <const T extends ReadonlyArray<{ type: string; value: TypedSchema }>>(types: T) =>
  ({ oneOf: types.map(({ type, value }) => object({ type: { const: type }, value })) }) as {
    readonly oneOf: { [K in keyof T]: IdentifierSchema<T[K]['type'], T[K]['value']> };
  };
const username = { type: 'string', pattern: usernamePattern } as const;
const verificationAnswer = { response: object({ verificationId }) };
// As a person types one; normalized (and refused when impossible) by the service.
const phone = phoneInput;
/** What a code is sent to, as Logto's: an email address or a phone number. */
export const codeIdentifier = identifier([
  { type: 'email', value: email },
  { type: 'phone', value: phone },
]);

/**
 * The Experience API: the same flows as the pages, as JSON, for an integrator's own UI. It acts
 * on the interaction named by the `_experience` cookie. Cross-site requests cannot use it: a
 * body must be JSON (which a form cannot send), and a request from another origin is refused.
 */
export function experienceApi(service: ExperienceService, { origin, bodyLimit, catalogs }: { origin: string; bodyLimit: number; catalogs?: Catalogs }) {
  const router = new Router<ExperienceState>({ prefix: experiencePrefix });

  router.use(async (ctx, next) => {
    const from = ctx.get('origin');
    assertThat(!from || from === origin, new ApiError('session.csrf_failed', 'requests from another origin are not accepted'));
    // Signed with the provider's cookie keys and set only for the browser that holds the
    // provider's own interaction cookie: knowing an interaction's uid is not enough.
    const uid = ctx.cookies.get(experienceCookie, { signed: true });
    assertThat(uid, new ApiError('session.not_found', 'no sign-in is in progress in this browser; start from the application'));
    Object.assign(ctx.state, await service.open(uid));
    await next();
  }, jsonBody(bodyLimit));

  /** A step that answers 204: its body, checked against `body`, goes to `run` with this interaction. */
  const step = <const S extends TypedSchema>(
    method: 'put' | 'post',
    path: string,
    body: S,
    run: (experience: ExperienceDocument, given: Admitted<S>, caller: Caller) => Promise<void>,
  ) =>
    router[method](path, guard({ body: body as TypedSchema, status: 204, public: true }), async (ctx) => {
      // The guard checked the body against `body`, which is what Admitted<S> says of it.
      await run(ctx.state.experience, ctx.guard.body as Admitted<S>, callerOf(ctx));
      ctx.status = 204;
    });

  // As Logto's: `PUT /` starts the interaction afresh; `PUT /interaction-event` changes its kind and keeps its verifications.
  step('put', '/', object({ interactionEvent: event }), async (experience, { interactionEvent }) => {
    await service.start(experience, interactionEvent);
  });
  step('put', '/interaction-event', object({ interactionEvent: event }), async (experience, { interactionEvent }) => {
    await service.switchEvent(experience, interactionEvent);
  });

  router.post(
    '/verification/password',
    guard({
      body: object({
        identifier: identifier([
          { type: 'username', value: username },
          { type: 'email', value: email },
          { type: 'phone', value: phone },
        ]),
        password,
      }),
      ...verificationAnswer,
      public: true,
    }),
    async (ctx) => {
      const { identifier: given, password: secret } = ctx.guard.body;
      ctx.body = { verificationId: await service.verifyPassword(ctx.state.experience, given, secret, callerOf(ctx)) };
    },
  );

  router.post(
    '/verification/new-password-identity',
    guard({ body: object({ identifier: identifier([{ type: 'username', value: username }]), password }), ...verificationAnswer, public: true }),
    async (ctx) => {
      const { identifier: given, password: secret } = ctx.guard.body;
      ctx.body = { verificationId: await service.newPasswordIdentity(ctx.state.experience, given.value, secret, callerOf(ctx)) };
    },
  );

  router.post(
    '/verification/verification-code',
    guard({ body: object({ identifier: codeIdentifier, interactionEvent: event }), ...verificationAnswer, public: true }),
    async (ctx) => {
      const { experience } = ctx.state;
      assertThat(
        ctx.guard.body.interactionEvent === experience.event,
        new ApiError('session.invalid_event', "interactionEvent must be the interaction's own", { field: 'body.interactionEvent' }),
      );
      // The code's message is written in the language the authorization request asked for (ui_locales), else the browser's.
      const locale = catalogs?.forRequest(experience.uiLocales, ctx.get('accept-language')).locale;
      ctx.body = { verificationId: await service.sendCode(experience, ctx.guard.body.identifier, { ...callerOf(ctx), ...(locale && { locale }) }) };
    },
  );

  router.post(
    '/verification/verification-code/verify',
    guard({
      body: object({ identifier: codeIdentifier, verificationId, code: { type: 'string', maxLength: 16 } }),
      ...verificationAnswer,
      public: true,
    }),
    async (ctx) => {
      const { identifier: given, verificationId: id, code } = ctx.guard.body;
      ctx.body = { verificationId: await service.verifyCode(ctx.state.experience, id, given, code) };
    },
  );

  // As Logto's: a registration may be identified from the profile alone (no `verificationId`), and
  // answers 201 (the account to create is settled); the other interactions answer 204.
  router.post(
    '/identification',
    guard({
      body: { type: 'object', properties: { verificationId, linkSocialIdentity: { type: 'boolean' } }, additionalProperties: false } as const,
      status: 204,
      public: true,
    }),
    async (ctx) => {
      const { experience } = ctx.state;
      const { verificationId: id, linkSocialIdentity } = ctx.guard.body;
      const event = await service.identify(experience, id, { ...(linkSocialIdentity !== undefined && { linkSocialIdentity }) });
      ctx.status = event === 'Register' ? 201 : 204;
      // No body (not Koa's default "Created" text).
      if (ctx.status === 201) ctx.body = '';
    },
  );
  step(
    'post',
    '/profile',
    {
      oneOf: [
        object({ type: { const: 'username' }, value: username }),
        object({ type: { const: 'password' }, value: password }),
        object({ type: { enum: ['email', 'phone'] }, verificationId }),
      ],
    } as const,
    (experience, given, caller) =>
      'verificationId' in given
        ? service.linkIdentifier(experience, given.type, given.verificationId)
        : service.addProfile(experience, given.type, given.value, caller),
  );
  step('put', '/profile/password', object({ password }), (experience, given, caller) => service.resetPassword(experience, given.password, caller));

  // MFA (Logto's verification routes: totp, web-authn, backup-code; and POST /profile/mfa).
  const answer = (properties: Record<string, TypedSchema>) => ({ type: 'object', properties, required: Object.keys(properties) });
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

  router.post(
    '/verification/totp/secret',
    guard({ response: answer({ verificationId, secret: { type: 'string' }, secretQrCode: { type: 'string' } }), public: true }),
    async (ctx) => {
      const { verificationId: id, secret, secretQrCode } = await service.mfa.totpSecret(ctx.state.experience);
      ctx.body = { verificationId: id, secret, secretQrCode };
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
  // Enterprise SSO (Logto's): the connectors for an email's domain.
  router.get(
    '/sso-connectors',
    guard({
      query: exactObject({ email }),
      response: answer({ connectorIds: { type: 'array', items: { type: 'string' } } }),
      public: true,
    }),
    async (ctx) => {
      ctx.body = { connectorIds: (await service.sso.discover(ctx.guard.query.email)).map(({ id }) => id) };
    },
  );
  // Social sign-in and enterprise SSO (Logto's), the same two steps: the provider's authorization URL for
  // this interaction, then the callback's parameters (SAML: nothing, the assertion consumer took the response).
  const connectorParams = exactObject({ connectorId: { type: 'string', minLength: 1, maxLength: 64 } });
  for (const [kind, flow] of [
    ['social', service.social],
    ['sso', service.sso],
  ] as const) {
    router.post(
      `/verification/${kind}/:connectorId/authorization-uri`,
      guard({
        params: connectorParams,
        body: exactObject({ state: { type: 'string', minLength: 8, maxLength: 512 }, redirectUri: { type: 'string', maxLength: 2048, pattern: '^https?://' } }),
        response: answer({ authorizationUri: { type: 'string' }, verificationId }),
        public: true,
      }),
      async (ctx) => {
        ctx.body = await flow.authorizationUri(ctx.state.experience, ctx.guard.params.connectorId, ctx.guard.body);
      },
    );
    router.post(
      `/verification/${kind}/:connectorId/verify`,
      guard({
        params: connectorParams,
        body: exactObject({ verificationId, connectorData: { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 4096 } } }),
        ...verificationAnswer,
        public: true,
      }),
      async (ctx) => {
        const { verificationId: id, connectorData } = ctx.guard.body;
        ctx.body = { verificationId: await flow.verify(ctx.state.experience, ctx.guard.params.connectorId, id, connectorData) };
      },
    );
  }

  step('post', '/profile/mfa', object({ type: { enum: mfaFactors }, verificationId }), (experience, given) =>
    service.mfa.bind(experience, given.type, given.verificationId),
  );

  // A sign-in or a registration answers where the browser goes; a password reset signs nobody in
  // (as Logto's) and answers 204: the interaction starts over, for a sign-in with the new password.
  router.post('/submit', guard({ response: object({ redirectTo: { type: 'string' } }), public: true }), async (ctx) => {
    const redirectTo = await service.submit(ctx.state.experience, ctx.state.clientId, callerOf(ctx));
    if (redirectTo === undefined) ctx.status = 204;
    else ctx.body = { redirectTo };
  });

  return router;
}
