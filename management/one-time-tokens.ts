import { ApiError, asBrokenForeignKey, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { email, emailKey } from '../lib/identifiers.js';
import { generateId, generateSecret, sha256 } from '../lib/ids.js';
import type { OneTimeTokenDocument } from '../lib/store/queries/one-time-tokens.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, idSchema } from './schemas/common.js';

/** Logto's default: two days. */
const defaultExpiresIn = 2 * 24 * 3600;
const statuses = ['active', 'consumed', 'revoked', 'expired'] as const;

const context = {
  type: 'object',
  properties: { jitOrganizationIds: { type: 'array', items: idSchema, maxItems: 100 } },
  additionalProperties: false,
} as const;

const tokenResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    // Only in the answer that makes it.
    token: { type: 'string' },
    context: { type: 'object', additionalProperties: true },
    status: { enum: statuses },
    createdAt: { type: 'integer' },
    expiresAt: { type: 'integer' },
  },
  required: ['id', 'email', 'context', 'status', 'createdAt', 'expiresAt'],
} as const;

const shown = ({ _id, email: address, context: held, status, createdAt, expiresAt }: OneTimeTokenDocument) => ({
  id: _id,
  email: address,
  context: held,
  status,
  createdAt,
  expiresAt,
});

/**
 * One-time tokens, as Logto's (routes/one-time-tokens.ts): a token for one email address, spent
 * once, by the Experience API's `verification/one-time-token/verify` or the sign-in page's magic link
 * (`one_time_token` and `login_hint` on the authorization request), or here by `verify`. Unlike
 * Logto, the token is kept only as its SHA-256 and shown once, in the answer that makes it.
 */
export function oneTimeTokenRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;
  const tokens = queries.oneTimeTokens;

  router.post(
    '/one-time-tokens',
    guard({
      body: {
        type: 'object',
        properties: { email, expiresIn: { type: 'integer', minimum: 1, maximum: 30 * 24 * 3600 }, context },
        required: ['email'],
        additionalProperties: false,
      },
      response: tokenResponse,
      status: 201,
    }),
    async (ctx) => {
      const { expiresIn = defaultExpiresIn, context: given = {} } = ctx.guard.body;
      const token = generateSecret();
      const now = Date.now();
      const document: OneTimeTokenDocument = {
        _id: generateId(),
        email: emailKey(ctx.guard.body.email),
        tokenHash: sha256(token),
        context: given.jitOrganizationIds ? { jitOrganizationIds: [...new Set(given.jitOrganizationIds)] } : {},
        status: 'active',
        createdAt: now,
        updatedAt: now,
        expiresAt: now + expiresIn * 1000,
      };
      await deps.write(originOf(ctx), async ({ record }) => {
        // The organizations it joins must exist now (422 as an unknown id on a relation).
        await queries.organizations.assertAllExist(document.context.jitOrganizationIds ?? []).catch(asBrokenForeignKey);
        await tokens.insert(document);
        record({ entity: 'OneTimeToken', action: 'created', id: document._id, data: shown(document) });
      });
      ctx.body = { ...shown(document), token };
      ctx.status = 201;
    },
  );

  router.get(
    '/one-time-tokens',
    guard({
      query: { type: 'object', properties: { email: { type: 'string', maxLength: 320 }, status: { enum: statuses } }, additionalProperties: false },
      response: { type: 'array', items: tokenResponse },
    }),
    async (ctx) => {
      const { email: address, status } = ctx.guard.query;
      ctx.body = (await tokens.find({ ...(address !== undefined && { email: emailKey(address) }), ...(status && { status }) })).map(shown);
    },
  );

  router.get('/one-time-tokens/:id', guard({ params: idParams('id'), response: tokenResponse }), async (ctx) => {
    const found = await tokens.findById(ctx.guard.params.id);
    assertThat(found, () => notFound('one-time token', ctx.guard.params.id));
    ctx.body = shown(found);
  });

  // Spends it, as Logto's: 404 when no active token of this email has it, 400 when it has expired.
  router.post(
    '/one-time-tokens/verify',
    guard({
      body: {
        type: 'object',
        properties: { token: { type: 'string', minLength: 1, maxLength: 512 }, email },
        required: ['token', 'email'],
        additionalProperties: false,
      },
      response: tokenResponse,
    }),
    async (ctx) => {
      await deps.write(originOf(ctx), async ({ record }) => {
        const spent = await tokens.consume(emailKey(ctx.guard.body.email), sha256(ctx.guard.body.token));
        assertThat(spent !== 'expired', () => new ApiError('one_time_token.token_expired', 'the one-time token has expired'));
        assertThat(
          spent !== 'notFound',
          () => new ApiError('one_time_token.active_token_not_found', 'no active one-time token of this email address has this value'),
        );
        record({ entity: 'OneTimeToken', action: 'updated', id: spent._id, data: shown(spent) });
        ctx.body = shown(spent);
      });
    },
  );

  router.put(
    '/one-time-tokens/:id/status',
    guard({
      params: idParams('id'),
      body: { type: 'object', properties: { status: { enum: statuses } }, required: ['status'], additionalProperties: false },
      response: tokenResponse,
    }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      await deps.write(originOf(ctx), async ({ record }) => {
        assertThat(await tokens.setStatus(id, ctx.guard.body.status), () => notFound('one-time token', id));
        const updated = shown((await tokens.findById(id))!);
        record({ entity: 'OneTimeToken', action: 'updated', id, data: updated });
        ctx.body = updated;
      });
    },
  );

  router.delete('/one-time-tokens/:id', guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    await deps.write(originOf(ctx), async ({ record }) => {
      const found = await tokens.findById(id);
      assertThat(found && (await tokens.delete(id)), () => notFound('one-time token', id));
      record({ entity: 'OneTimeToken', action: 'deleted', id, data: shown(found!) });
    });
    ctx.status = 204;
  });
}
