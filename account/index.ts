import type { IncomingMessage } from 'node:http';

import Router from '@koa/router';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { ApiError, assertThat } from '../lib/errors.js';
import type { ErrorLogger } from '../lib/http/api-errors.js';
import { jsonApiApp } from '../lib/http/api-app.js';
import { exactObject, guard } from '../lib/http/guard.js';
import { jsonBody } from '../lib/http/json-body.js';
import { mountApp } from '../lib/http/mount.js';
import { userChanges, userToApi, type UserDocument } from '../lib/store/models.js';
import type { Queries } from '../lib/store/queries/index.js';
import type { Writer } from '../lib/store/unit-of-work.js';
import type { ChangeKey } from '../hooks/catalog.js';
import { originOf } from '../management/origin.js';
import { profileSchema } from '../management/schemas/users.js';
import { codeIdentifier, usernamePattern } from '../experience/api.js';
import { accountCodeOwner, codeTargetOf, createCodes, type CodeTarget } from '../sign-in/codes.js';
import { createAccountLookup } from '../sign-in/accounts.js';
import { canSignIn, heldBy } from '../sign-in/profile.js';
import { countCodeSend, createCounters, defaultLimits, rateLimitedFields, tooManyCodes, type Limits } from '../sign-in/counters.js';
import type { Catalogs } from '../i18n/index.js';
import type { CodeMessenger } from '../sign-in/messages.js';
import { missingProfile, type SignInSettings } from '../sign-in/settings.js';
import type { ExceptionReport } from '../hooks/outbox.js';
import { email, emailKey } from '../lib/identifiers.js';
import { phoneInput } from '../lib/phone.js';
import { assertPasswordAllowed } from '../sign-in/password-policy.js';
import { hashPassword, verifyPassword } from '../lib/password.js';
import type { ClientSession, Db } from 'mongodb';
import { createVerificationRecords } from './verifications.js';
import { budgetedHashing, type HashGate } from '../sign-in/hash-gate.js';
import { accountMfaRoutes } from './mfa.js';
import { accountIdentityRoutes } from './identities.js';
import { assertIdentitiesFree } from '../lib/store/identities.js';
import type { ConnectorStore } from '../social/connectors.js';
import type { Upstream } from '../social/upstream.js';
import type { SecretBox } from '../lib/mfa/secret-box.js';
import type { RelyingParty } from '../lib/mfa/webauthn.js';

export const accountPrefix = '/api/my-account';
export const verificationsPrefix = '/api/verifications';
/** The header that carries a step-up verification record, as Logto names it. */
export const verificationHeader = 'logto-verification-id';

export interface AccountApiDeps {
  db: Db;
  provider: Provider;
  queries: Queries;
  write: Writer<ChangeKey>;
  /** Sends the verification codes; none when the sign-in experience (and so its connectors) is off. */
  sendCode: CodeMessenger | undefined;
  /** The languages a code's message may be written in: the request's Accept-Language picks one. */
  catalogs?: Catalogs | undefined;
  /** How people may sign up and sign in: an identifier the settings require cannot be removed. */
  signInSettings(): Promise<SignInSettings>;
  /** Announces a code send refused by a limit (Message.RateLimited). */
  reportException(report: ExceptionReport): Promise<void>;
  /** The attempt limits, as the sign-in experience's. */
  limits?: Partial<Limits>;
  /** The process's cap on concurrent password hashes, shared with the sign-in experience. */
  hashing: HashGate;
  /** Seals TOTP secrets. */
  mfaBox: SecretBox;
  /** The WebAuthn relying party (our name, host and origin). */
  rp: RelyingParty;
  /** The social connectors, and upstream sign-in through them (linking an identity). */
  connectors: ConnectorStore;
  upstream: Upstream;
  bodyLimit: number;
  log: ErrorLogger;
  proxy: boolean;
  clientAddress: (req: IncomingMessage) => string;
}

/** Who is calling: the user of the access token, through which first-party application, with which scopes. */
interface AccountState {
  auth: { clientId: string; scopes: Set<string> };
  user: UserDocument;
}

const invalidToken = (message: string) => new ApiError('auth.invalid_token', message);

/** The account as its owner sees it, field by field as the token's scopes allow (OIDC Core §5.4). */
function accountView(user: UserDocument, scopes: Set<string>) {
  const { id, username, name, avatar, profile, primaryEmail, primaryPhone, hasPassword, createdAt, updatedAt, lastSignInAt } = userToApi(user);
  return {
    id,
    ...(scopes.has('profile') && { username, name, avatar, profile, createdAt, updatedAt, lastSignInAt, hasPassword }),
    ...(scopes.has('email') && { primaryEmail }),
    ...(scopes.has('phone') && { primaryPhone }),
  };
}

/** `{password}`, for the step-up and for a new password alike (the policy checks a new one). */
const passwordBody = {
  type: 'object',
  properties: { password: { type: 'string', minLength: 1, maxLength: 256 } },
  required: ['password'],
  additionalProperties: false,
} as const;

const recordId = { type: 'string', minLength: 1, maxLength: 64 } as const;
/** `{verificationRecordId, expiresAt}`, as Logto's verification routes answer. */
const recordAnswer = {
  type: 'object',
  properties: { verificationRecordId: { type: 'string' }, expiresAt: { type: 'string' } },
  required: ['verificationRecordId', 'expiresAt'],
} as const;
const object = exactObject;

const accountResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    username: { type: ['string', 'null'] },
    name: { type: ['string', 'null'] },
    avatar: { type: ['string', 'null'] },
    profile: { type: 'object', additionalProperties: true },
    primaryEmail: { type: ['string', 'null'] },
    primaryPhone: { type: ['string', 'null'] },
    hasPassword: { type: 'boolean' },
    createdAt: { type: 'number' },
    updatedAt: { type: 'number' },
    lastSignInAt: { type: ['number', 'null'] },
  },
  required: ['id'],
} as const;

/**
 * Logto's Account API (`/api/my-account`): the signed-in user's own account, for the user's own
 * first-party application. Authorized by the user's access token for this provider (an opaque token
 * without an API audience, as UserInfo takes): a token of a third-party application is 403, a token
 * for an API (an impersonation token among them) or of another kind 401, and each field needs its
 * identity scope (`profile`, `email`, `phone`; 403 without it).
 */
export function accountApi(deps: AccountApiDeps): Middleware {
  const { provider, queries } = deps;
  const router = new Router<AccountState>();
  const records = createVerificationRecords(deps.db);
  // Wrong passwords at the step-up: 5 per account per 15 minutes, as at sign-in, so that a stolen token cannot guess the password.
  const counters = createCounters(deps.db, { limits: { ...defaultLimits, ...deps.limits } });
  // Every hash and check of a password here counts toward the address's budget and takes a slot of the process's cap.
  const hashFor = budgetedHashing(counters, deps.hashing);
  const codes = createCodes(deps.db);
  const accounts = createAccountLookup(queries);

  router.use(
    [accountPrefix, verificationsPrefix],
    async (ctx, next) => {
      const header = ctx.get('authorization');
      assertThat(header, () => new ApiError('auth.authorization_header_missing', 'the Authorization header is missing'));
      const [scheme, value] = header.split(' ');
      assertThat(scheme?.toLowerCase() === 'bearer' && value, () => invalidToken('the Authorization header is not a bearer token'));
      const token = await provider.AccessToken.find(value!);
      assertThat(token && token.accountId && token.clientId, () => invalidToken('the access token is invalid or has expired'));
      // A token for an API says nothing about the account: this is the identity provider's own resource.
      assertThat(token!.aud === undefined, () => invalidToken('the access token is for an API, not for the account'));
      const application = await queries.applications.findById(token!.clientId!);
      assertThat(application, () => invalidToken('the access token’s application no longer exists'));
      assertThat(!application!.isThirdParty, () => new ApiError('auth.forbidden', 'a third-party application cannot use the Account API'));
      const user = await queries.users.findById(token!.accountId!);
      assertThat(user && !user.isSuspended, () => invalidToken('the account does not exist or is suspended'));
      ctx.state.auth = { clientId: token!.clientId!, scopes: new Set((token!.scope ?? '').split(' ').filter(Boolean)) };
      ctx.state.user = user!;
      await next();
    },
    jsonBody(deps.bodyLimit),
  );

  router.get(accountPrefix, guard({ scopes: ['openid'], response: accountResponse }), async (ctx) => {
    ctx.body = accountView(ctx.state.user, ctx.state.auth.scopes);
  });

  /**
   * Applies `set` to the caller's account in a unit of work, announced as `User.Data.Updated` with
   * what changed. `first` runs first in the unit (spending the verifications the change needs), so
   * that with transactions a change that fails leaves them unspent.
   */
  const update = async (
    ctx: Parameters<typeof originOf>[0] & { state: AccountState },
    set: Partial<UserDocument> | ((current: UserDocument) => Partial<UserDocument>),
    first?: (session: ClientSession | undefined) => Promise<void>,
  ) => {
    const userId = ctx.state.user._id;
    return deps.write(originOf(ctx), async ({ session, intend, record }) => {
      await first?.(session);
      await intend({ entity: 'User', action: 'updated', id: userId });
      const before = await queries.users.findByIdOrThrow(userId, session);
      const changes = typeof set === 'function' ? set(before) : set;
      await assertIdentitiesFree(queries.users.collection, userId, changes.identityKeys ?? [], session);
      const after = await queries.users.update(userId, { ...changes, updatedAt: Date.now() }, session);
      record({ entity: 'User', action: 'updated', id: userId, data: userToApi(after), changes: userChanges(before, after) });
      return after;
    });
  };

  router.patch(
    accountPrefix,
    guard({
      scopes: ['profile'],
      body: {
        type: 'object',
        properties: {
          name: { type: ['string', 'null'], maxLength: 128 },
          avatar: { type: ['string', 'null'], maxLength: 2048, pattern: '^https?://[^\\s"\'<>]+$' },
          username: { type: 'string', pattern: usernamePattern },
        },
        additionalProperties: false,
      },
      response: accountResponse,
    }),
    async (ctx) => {
      const after = await update(ctx, ctx.guard.body as Partial<UserDocument>);
      ctx.body = accountView(after, ctx.state.auth.scopes);
    },
  );

  router.patch(
    `${accountPrefix}/profile`,
    guard({ scopes: ['profile'], body: profileSchema, response: { type: 'object', additionalProperties: true } }),
    async (ctx) => {
      const after = await update(ctx, { profile: { ...ctx.state.user.profile, ...(ctx.guard.body as Record<string, unknown>) } });
      ctx.body = after.profile;
    },
  );

  // Step-up (Logto's `POST /api/verifications/password`): the password, checked now, answered with a record that
  // allows one sensitive change within ten minutes. A wrong one is 422; the fifth within 15 minutes locks (429).
  router.post(
    `${verificationsPrefix}/password`,
    guard({
      scopes: ['openid'],
      body: passwordBody,
      status: 201,
      response: recordAnswer,
    }),
    async (ctx) => {
      const { user, auth } = ctx.state;
      const lockKey = `step-up:${user._id}`;
      const attempt = await counters.hit('failedPassword', lockKey);
      if (attempt.over) throw new ApiError('session.too_many_attempts', 'too many wrong passwords; try again later', { retryAfter: attempt.retryAfter });
      let matches = false;
      try {
        matches = user.passwordHash !== null && (await hashFor(ctx.ip, () => verifyPassword(ctx.guard.body.password, user.passwordHash!)));
      } catch (error) {
        // Refused before the password was checked (the budget spent, the server busy): no guess, no count.
        await counters.refund('failedPassword', lockKey);
        throw error;
      }
      if (!matches) {
        throw attempt.last
          ? new ApiError('session.too_many_attempts', 'too many wrong passwords; try again later', { retryAfter: attempt.retryAfter })
          : new ApiError('session.invalid_credentials', 'the password does not match');
      }
      await counters.clear('failedPassword', `step-up:${user._id}`);
      const record = await records.create(user._id, auth.clientId, 'password');
      ctx.status = 201;
      ctx.body = { verificationRecordId: record.id, expiresAt: record.expiresAt.toISOString() };
    },
  );

  const ownerOf = (state: AccountState) => accountCodeOwner(state.user._id, state.auth.clientId);
  const permissionDenied = (message: string) => new ApiError('verification_record.permission_denied', message);

  /** The step-up record this request names (401 without one); spent later, by `spendStepUp`, in the change's unit of work. */
  const stepUpOf = (ctx: { get(name: string): string }) => {
    const id = ctx.get(verificationHeader);
    assertThat(id, () => permissionDenied(`a recent verification is needed: send its id as ${verificationHeader}`));
    return id;
  };

  /** The step-up's own records and codes that would do: a password record, or a code to the account's own address or number. */
  const ownTargets = (state: AccountState): CodeTarget[] => [
    ...(state.user.primaryEmail ? [{ type: 'email' as const, value: state.user.primaryEmail }] : []),
    ...(state.user.primaryPhone ? [{ type: 'phone' as const, value: state.user.primaryPhone }] : []),
  ];

  /**
   * Refuses (401) a step-up that `spendStepUp` would refuse, without spending it: checked before
   * anything costly (a password hash), so that a made-up id costs the server one read.
   */
  const assertStepUpUsable = async (state: AccountState, id: string) => {
    const usable =
      (await records.isSpendable(id, state.user._id, state.auth.clientId)) || (await codes.isSpendable(ownerOf(state), id, 'Account', ownTargets(state)));
    assertThat(usable, () => permissionDenied('the verification has expired, was used, or is not this account’s'));
  };

  /**
   * Spends the step-up: a password record, or a verified code sent to the account's own email
   * address or phone number, made with a token of this user and application. 401 when it is
   * unknown, expired, spent, another's, or a code to an address that is not the account's.
   */
  const spendStepUp = async (state: AccountState, id: string, session: ClientSession | undefined) => {
    if (await records.spend(id, state.user._id, state.auth.clientId, session)) return;
    const spent = await codes.spend(ownerOf(state), id, 'Account', { accept: ownTargets(state), session }).catch((error: unknown) => {
      if (error instanceof ApiError) return undefined;
      throw error;
    });
    assertThat(spent, () => permissionDenied('the verification has expired, was used, or is not this account’s'));
  };

  // A new password (Logto's `POST /api/my-account/password`): the policy's rules, a step-up, and the change announced.
  router.post(
    `${accountPrefix}/password`,
    guard({
      scopes: ['openid'],
      body: passwordBody,
      status: 204,
    }),
    async (ctx) => {
      const { user } = ctx.state;
      const stepUp = stepUpOf(ctx);
      // The cheap checks first (the step-up, the policy); only then the hash, through the budget and the cap.
      await assertStepUpUsable(ctx.state, stepUp);
      assertPasswordAllowed(ctx.guard.body.password, [user.username, user.primaryEmail]);
      const passwordHash = await hashFor(ctx.ip, () => hashPassword(ctx.guard.body.password));
      await update(ctx, { passwordHash }, (session) => spendStepUp(ctx.state, stepUp, session));
      ctx.status = 204;
    },
  );

  // A code to an email address or phone number (Logto's `POST /api/verifications/verification-code`): to the
  // account's own, it becomes a step-up once verified; to a new one, the proof that `primary-email`/`-phone` needs.
  router.post(
    `${verificationsPrefix}/verification-code`,
    guard({ scopes: ['openid'], body: object({ identifier: codeIdentifier }), status: 201, response: recordAnswer }),
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
      const { verificationId, code, expiresAt } = await codes.issue(ownerOf(ctx.state), 'Account', target);
      send(target, code, deps.catalogs?.forRequest(undefined, ctx.get('accept-language')).locale);
      ctx.status = 201;
      ctx.body = { verificationRecordId: verificationId, expiresAt: expiresAt.toISOString() };
    },
  );

  router.post(
    `${verificationsPrefix}/verification-code/verify`,
    guard({
      scopes: ['openid'],
      body: object({ identifier: codeIdentifier, verificationId: recordId, code: { type: 'string', maxLength: 16 } }),
      response: { type: 'object', properties: { verificationRecordId: { type: 'string' } }, required: ['verificationRecordId'] },
    }),
    async (ctx) => {
      const { identifier, verificationId, code } = ctx.guard.body;
      await codes.verify(ownerOf(ctx.state), verificationId, codeTargetOf(identifier, 'body.identifier.value'), code);
      ctx.body = { verificationRecordId: verificationId };
    },
  );

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

  // Logto's `POST/DELETE /api/my-account/primary-email` and `/primary-phone`: a step-up, and for a new
  // one the verified code that proves it (`newIdentifierVerificationRecordId`). 422 when another account has it.
  for (const field of ['email', 'phone'] as const) {
    const scope = field;
    const path = `${accountPrefix}/primary-${field}`;
    router.post(
      path,
      guard({
        scopes: [scope],
        body: object({ [field]: field === 'email' ? email : phoneInput, newIdentifierVerificationRecordId: recordId } as {
          email: typeof email;
          newIdentifierVerificationRecordId: typeof recordId;
        }),
        status: 204,
      }),
      async (ctx) => {
        const { state } = ctx;
        const stepUp = stepUpOf(ctx);
        const body = ctx.guard.body as Record<string, string>;
        const target = codeTargetOf({ type: field, value: body[field]! }, `body.${field}`);
        const proof = body.newIdentifierVerificationRecordId!;
        assertThat(
          await codes.isSpendable(ownerOf(state), proof, 'Account', [target]),
          () => new ApiError('verification_record.not_found', `newIdentifierVerificationRecordId is not a verified code for this ${field}`),
        );
        const owner = await accounts.findUser(target);
        assertThat(!owner || owner._id === state.user._id, () =>
          field === 'email'
            ? new ApiError('user.email_already_in_use', 'this email address already has an account')
            : new ApiError('user.phone_already_in_use', 'this phone number already has an account'),
        );
        const set = field === 'email' ? { primaryEmail: target.value, emailKey: emailKey(target.value) } : { primaryPhone: target.value };
        await update(ctx, set, async (session) => {
          await spendStepUp(state, stepUp, session);
          const spent = await codes.spend(ownerOf(state), proof, 'Account', { accept: [target], session }).catch(() => undefined);
          assertThat(spent, () => new ApiError('verification_record.not_found', 'the verification of the new identifier was used meanwhile'));
        });
        ctx.status = 204;
      },
    );
    router.delete(path, guard({ scopes: [scope], status: 204 }), async (ctx) => {
      const { state } = ctx;
      const stepUp = stepUpOf(ctx);
      await assertRemovable(state.user, field);
      await update(ctx, field === 'email' ? { primaryEmail: null, emailKey: null } : { primaryPhone: null }, (session) => spendStepUp(state, stepUp, session));
      ctx.status = 204;
    });
  }

  accountMfaRoutes(router as unknown as Router, {
    prefix: accountPrefix,
    verificationsPrefix,
    records,
    signInSettings: deps.signInSettings,
    box: deps.mfaBox,
    rp: deps.rp,
    stateOf: (ctx) => (ctx as { state: AccountState }).state,
    stepUpOf,
    spendStepUp: (ctx, id, session) => spendStepUp((ctx as { state: AccountState }).state, id, session),
    update: (ctx, set, first) => update(ctx as Parameters<typeof update>[0], set, first),
  });

  accountIdentityRoutes(router as unknown as Router, {
    prefix: accountPrefix,
    verificationsPrefix,
    records,
    queries,
    connectors: deps.connectors,
    upstream: deps.upstream,
    signInSettings: deps.signInSettings,
    origin: deps.rp.origin,
    stateOf: (ctx) => (ctx as { state: AccountState }).state,
    stepUpOf,
    spendStepUp: (ctx, id, session) => spendStepUp((ctx as { state: AccountState }).state, id, session),
    update: (ctx, set, first) => update(ctx as Parameters<typeof update>[0], set, first),
  });

  const app = jsonApiApp(deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  const account = mountApp(accountPrefix, app);
  const verifications = mountApp(verificationsPrefix, app);
  return (ctx, next) => account(ctx, () => verifications(ctx, next));
}
