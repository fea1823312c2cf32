import { guard } from '../lib/http/guard.js';
import { userToApi, type UserDocument } from '../lib/store/models.js';
import { usernamePattern } from '../sign-in/schemas.js';
import { profileSchema } from '../management/schemas/users.js';
import { assertPasswordAllowed } from '../sign-in/password-policy.js';
import { accountPrefix, passwordBody, type AccountKit, type AccountRouter } from './context.js';

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

/** Logto's `/api/my-account` itself: the account as the token's scopes show it, its name, avatar, username and profile, and a new password. */
export function profileRoutes(router: AccountRouter, kit: AccountKit) {
  router.get(accountPrefix, guard({ scopes: ['openid'], response: accountResponse }), async (ctx) => {
    ctx.body = accountView(ctx.state.user, ctx.state.auth.scopes);
  });

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
      const after = await kit.update(ctx, ctx.guard.body as Partial<UserDocument>);
      ctx.body = accountView(after, ctx.state.auth.scopes);
    },
  );

  router.patch(
    `${accountPrefix}/profile`,
    guard({ scopes: ['profile'], body: profileSchema, response: { type: 'object', additionalProperties: true } }),
    async (ctx) => {
      const after = await kit.update(ctx, { profile: { ...ctx.state.user.profile, ...(ctx.guard.body as Record<string, unknown>) } });
      ctx.body = after.profile;
    },
  );

  // A new password (Logto's `POST /api/my-account/password`): the policy's rules, a step-up, and the change announced.
  router.post(`${accountPrefix}/password`, guard({ scopes: ['openid'], body: passwordBody, status: 204 }), async (ctx) => {
    const { user } = ctx.state;
    const stepUp = kit.stepUpOf(ctx);
    // The cheap checks first (the step-up, the policy); only then the hash, through the budget and the cap.
    await kit.assertStepUpUsable(ctx.state, stepUp);
    assertPasswordAllowed(ctx.guard.body.password, [user.username, user.primaryEmail]);
    const passwordHash = await kit.hashFor(ctx.ip, () => kit.passwords.hash(ctx.guard.body.password));
    await kit.update(ctx, { passwordHash }, () => kit.spendStepUp(ctx.state, stepUp));
    ctx.status = 204;
  });
}
