import { impersonationScope, managementScope } from './bootstrap.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { freeFormObject, idSchema } from './schemas/common.js';

const maxContextBytes = 4096;

const body = {
  type: 'object',
  properties: { userId: idSchema, context: { ...freeFormObject, maxProperties: 64 } },
  required: ['userId'],
  additionalProperties: false,
} as const;

/**
 * Subject tokens for impersonation. The integrator's backend, having checked that its support
 * engineer may act as the user, asks for one; the engineer's application exchanges it once at
 * the token endpoint (RFC 8693). A token that holds only the `impersonation` scope may call this
 * route and no other.
 */
export function subjectTokenRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;

  router.post(
    '/subject-tokens',
    guard({
      body,
      scopes: [managementScope, impersonationScope],
      status: 201,
      response: { type: 'object', properties: { subjectToken: { type: 'string' }, expiresIn: { type: 'integer' } }, required: ['subjectToken', 'expiresIn'] },
    }),
    async (ctx) => {
      const { userId, context = {} } = ctx.guard.body;
      assertThat(
        Buffer.byteLength(JSON.stringify(context)) <= maxContextBytes,
        new ApiError('guard.invalid_input', `body.context must not be larger than ${maxContextBytes} bytes`, { field: 'body.context' }),
      );
      const user = await queries.users.findByIdOrThrow(userId);
      assertThat(!user.isSuspended, new ApiError('user.suspended', 'the user is suspended and cannot be impersonated'));
      const clientId = ctx.state.auth?.clientId ?? '';
      const token = await deps.write(originOf(ctx), async ({ session, record }) => {
        const issued = await queries.subjectTokens.issue(userId, context, clientId, deps.subjectTokenTtl, session);
        // The record keeps the token's hash, never the token.
        record({
          entity: 'Impersonation',
          action: 'subject_token.issued',
          id: issued.document._id,
          data: { userId, context, clientId, expiresAt: issued.document.expiresAt.getTime() },
        });
        await queries.impersonations.record(
          {
            kind: 'subject_token.issued',
            targetUserId: userId,
            issuerClientId: clientId,
            context,
            subjectTokenId: issued.document._id,
          },
          session,
        );
        return issued;
      });
      ctx.body = { subjectToken: token.token, expiresIn: deps.subjectTokenTtl };
    },
  );
}
