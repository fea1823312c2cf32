import Router from '@koa/router';

import type { Catalogs } from '../../i18n/index.js';
import { ApiError, assertThat } from '../../lib/errors.js';
import { exactObject, guard, type Admitted, type TypedSchema } from '../../lib/http/guard.js';
import { jsonBody } from '../../lib/http/json-body.js';
import { email } from '../../lib/identifiers.js';
import { interactionKinds } from '../../hooks/catalog.js';
import { mfaFactors } from '../../lib/mfa/model.js';
import { codeIdentifier, identifier, password, phone, username } from '../../sign-in/schemas.js';
import { callerOf, experienceCookie, experiencePrefix, type ExperienceState } from '../http.js';
import type { Caller, ExperienceService } from '../service.js';
import type { ExperienceDocument } from '../state.js';
import { connectorRoutes } from './connectors.js';
import { mfaRoutes } from './mfa.js';
import { verificationAnswer, verificationId } from './schemas.js';

const event = { enum: interactionKinds } as const;
const object = exactObject;

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
      // As Logto's: in any interaction; the body's `interactionEvent` picks the message (and what the code may be spent on).
      // The code's message is written in the language the authorization request asked for (ui_locales), else the browser's.
      const locale = catalogs?.forRequest(experience.uiLocales, ctx.get('accept-language')).locale;
      const { identifier: target, interactionEvent: purpose } = ctx.guard.body;
      ctx.body = { verificationId: await service.sendCode(experience, target, { ...callerOf(ctx), ...(locale && { locale }) }, purpose) };
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

  // Logto's one-time token (a magic link's, an invitation's): spent here, identified by `identification`.
  router.post(
    '/verification/one-time-token/verify',
    guard({
      body: object({ identifier: identifier([{ type: 'email', value: email }]), token: { type: 'string', minLength: 1, maxLength: 512 } }),
      ...verificationAnswer,
      public: true,
    }),
    async (ctx) => {
      const { identifier: given, token } = ctx.guard.body;
      ctx.body = { verificationId: await service.verifyOneTimeToken(ctx.state.experience, given.value, token) };
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

  mfaRoutes(router, service);
  connectorRoutes(router, service);

  step('post', '/profile/mfa', object({ type: { enum: mfaFactors }, verificationId }), (experience, given) =>
    service.mfa.bind(experience, given.type, given.verificationId),
  );
  // Logto's skip of enrolling, where the MFA policy lets the account go on without a factor.
  router.post('/profile/mfa/mfa-skipped', guard({ status: 204, public: true }), async (ctx) => {
    await service.mfa.skip(ctx.state.experience, ctx.state.clientId);
    ctx.status = 204;
  });

  // A sign-in or a registration answers where the browser goes; a password reset signs nobody in
  // (as Logto's) and answers 204: the interaction starts over, for a sign-in with the new password.
  router.post('/submit', guard({ response: object({ redirectTo: { type: 'string' } }), public: true }), async (ctx) => {
    const redirectTo = await service.submit(ctx.state.experience, ctx.state.clientId, callerOf(ctx), ctx.state.interaction);
    if (redirectTo === undefined) ctx.status = 204;
    else ctx.body = { redirectTo };
  });

  return router;
}
