import { impersonationScope, managementScope } from './bootstrap.js';
import { ApiError, assertThat, notFound } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { isProtected } from '../impersonation/policy.js';
import { HostAccountsUnavailable, isSuspended } from '../impersonation/accounts.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { freeFormObject, idSchema } from './schemas/common.js';

const maxContextBytes = 4096;

const sameSet = (a: string[], b: string[]) => a.length === b.length && new Set([...a, ...b]).size === a.length;

/** Printable text on one line: it goes into audit records, events and logs. */
const line = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }) as const;

const body = {
  type: 'object',
  properties: {
    userId: idSchema,
    context: { ...freeFormObject, maxProperties: 64 },
    // RFC 8693 §4.4 `may_act`: only this user, with an actor token of theirs, may exchange it.
    actorId: idSchema,
    reason: line(500),
    ticketId: line(128),
  },
  required: ['userId'],
  additionalProperties: false,
} as const;

/**
 * Subject tokens for impersonation. The integrator's backend, having checked that its support
 * engineer may act as the user, asks for one; the engineer's application exchanges it once at
 * the token endpoint (RFC 8693). A token that holds only the `impersonation` scope may call this
 * route and no other. The impersonation policy (`GET/PATCH /api/configs/impersonation`) decides
 * what a request must say and whom it may name.
 */
export function subjectTokenRoutes(router: ApiRouter, deps: ManagementDeps) {
  const { queries } = deps;

  /** One of our users or an embedding host's account (`hostAccounts`); 404 for neither, 503 when the host's lookup fails. */
  async function findAccount(id: string) {
    let account;
    try {
      account = await deps.impersonationAccounts.find(id);
    } catch (error) {
      if (error instanceof HostAccountsUnavailable) throw new ApiError('service.host_accounts_unavailable', "the host's account lookup failed; retry later");
      throw error;
    }
    if (!account) throw notFound('user', id);
    return account;
  }

  router.post(
    '/subject-tokens',
    guard({
      body,
      scopes: [managementScope, impersonationScope],
      status: 201,
      response: {
        type: 'object',
        properties: { subjectToken: { type: 'string' }, expiresIn: { type: 'integer' }, impersonationId: { type: 'string' } },
        required: ['subjectToken', 'expiresIn', 'impersonationId'],
      },
    }),
    async (ctx) => {
      const { userId, context = {}, actorId, reason, ticketId } = ctx.guard.body;
      assertThat(
        Buffer.byteLength(JSON.stringify(context)) <= maxContextBytes,
        new ApiError('guard.invalid_input', `body.context must not be larger than ${maxContextBytes} bytes`, { field: 'body.context' }),
      );
      // As the exchange reads it: a change reaches every process within CACHE_REFRESH_MS (at once here).
      const policy = await deps.impersonationPolicy();
      assertThat(
        reason !== undefined || !policy.requireReason,
        () => new ApiError('impersonation.reason_required', 'the impersonation policy requires a `reason`', { field: 'body.reason' }),
      );
      assertThat(
        ticketId !== undefined || !policy.requireTicketId,
        () => new ApiError('impersonation.ticket_required', 'the impersonation policy requires a `ticketId`', { field: 'body.ticketId' }),
      );
      // The first-class fields are in the script's context too; they win over a context key of the same name.
      const terms = {
        context: { ...context, ...(reason !== undefined && { reason }), ...(ticketId !== undefined && { ticketId }) },
        ...(actorId !== undefined && { actorId }),
        ...(reason !== undefined && { reason }),
        ...(ticketId !== undefined && { ticketId }),
      };
      const clientId = ctx.state.auth?.clientId ?? '';
      // A console administrator's request: the audit names the person as well as the console's application.
      const administratorId = ctx.state.auth?.userId;
      let hostAccount = false;
      let roleIds = await eligibleRoleIds();
      if (actorId !== undefined) {
        assertThat(
          actorId !== userId,
          () => new ApiError('impersonation.actor_is_subject', 'the actor and the user are the same: that is no impersonation', { field: 'body.actorId' }),
        );
        const actor = await findAccount(actorId);
        assertThat(!isSuspended(actor), () => new ApiError('user.suspended', 'the actor is suspended', { field: 'body.actorId' }));
      }
      // What the token is sealed with must still hold once its record is stored: a change that
      // committed before that found nothing to void, so the user is read again after the insert.
      // A user that changed meanwhile gets its new token voided, and the next try seals what was read.
      for (let attempt = 1; ; attempt += 1) {
        const issued = await issue(roleIds);
        const now = await eligibleRoleIds().catch(async (error: unknown) => {
          await deps.impersonation.audit.voidTokens([issued.document], 'the user changed while it was issued');
          throw error;
        });
        if (sameSet(now, roleIds)) {
          ctx.body = { subjectToken: issued.token, expiresIn: deps.subjectTokenTtl, impersonationId: issued.document.impersonationId };
          return;
        }
        await deps.impersonation.audit.voidTokens([issued.document], "the user's roles changed while it was issued");
        assertThat(attempt < 3, () => new ApiError('request.conflict', "the user's roles kept changing while the subject token was issued; try again"));
        roleIds = now;
      }

      /**
       * The user's role ids, once the user is found fit to be impersonated under the policy: one of
       * ours (its roles), or the host's (no roles of ours; the host says whether it is protected).
       */
      async function eligibleRoleIds() {
        const account = await findAccount(userId);
        hostAccount = account.kind === 'host';
        assertThat(!isSuspended(account), new ApiError('user.suspended', 'the user is suspended and cannot be impersonated'));
        const held = account.kind === 'user' ? await queries.links.usersRoles.rightsOf(userId) : [];
        const protectedAccount = account.kind === 'user' ? isProtected(policy, held) : account.account.protected === true;
        assertThat(
          !protectedAccount,
          () => new ApiError('impersonation.user_protected', 'the impersonation policy protects this user: it holds a role that may never be impersonated'),
        );
        return held;
      }

      function issue(roleIds: string[]) {
        return deps.write(originOf(ctx), async ({ record }) => {
          const issued = await deps.impersonation.subjectTokens.issue(
            deps.subjectTokenSeal,
            { userId, roleIds, ...(hostAccount && { hostAccount }) },
            terms,
            clientId,
            deps.subjectTokenTtl,
          );
          const { impersonationId, expiresAt } = issued.document;
          // The record keeps neither the token nor its hash: the impersonation is named by its own id.
          record({
            entity: 'Impersonation',
            action: 'subject_token.issued',
            id: impersonationId,
            data: { userId, ...terms, clientId, expiresAt: expiresAt.getTime() },
          });
          await deps.impersonation.audit.record({
            kind: 'subject_token.issued',
            impersonationId,
            targetUserId: userId,
            issuerClientId: clientId,
            ...(administratorId !== undefined && { administratorId }),
            context: terms.context,
            ...(actorId !== undefined && { boundActorId: actorId }),
            ...(reason !== undefined && { reason }),
            ...(ticketId !== undefined && { ticketId }),
            expiresAt: expiresAt.getTime(),
            subjectTokenId: issued.document._id,
          });
          return issued;
        });
      }
    },
  );
}
