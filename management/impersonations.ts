import { ApiError, assertThat, isDuplicateKeyError } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { withId } from '../lib/store/models.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import { pageOf, setPageHeaders } from '../lib/http/pagination.js';
import { impersonationRecordKinds } from '../impersonation/audit.js';
import { impersonationPolicyProperties, impersonationPolicyStore, type ImpersonationPolicy } from '../impersonation/policy.js';
import type { CheckpointDocument } from '../impersonation/ledger.js';
import { impersonationScope, managementScope } from './bootstrap.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { originOf } from './origin.js';
import { idParams, idSchema, paginationQuery, timestamp } from './schemas/common.js';
import { inUnit } from '../lib/store/session.js';

/** An audit record as the API answers it: what the ledger hashes (`impersonation/chain.ts`), with its place in the chain. */
export const impersonationRecordResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { enum: impersonationRecordKinds },
    impersonationId: { type: 'string' },
    failureReason: { type: 'string' },
    reason: { type: 'string' },
    ticketId: { type: 'string' },
    boundActorId: { type: 'string' },
    expiresAt: timestamp,
    supersedes: { type: 'string' },
    targetUserId: { type: 'string' },
    actorUserId: { type: 'string' },
    issuerClientId: { type: 'string' },
    administratorId: { type: 'string' },
    clientId: { type: 'string' },
    context: { type: 'object', additionalProperties: true },
    resource: { type: 'string' },
    scope: { type: 'string' },
    tokenId: { type: 'string' },
    subjectTokenId: { type: 'string' },
    createdAt: timestamp,
    sequence: { type: 'integer' },
    prevHash: { type: 'string' },
    hash: { type: 'string' },
  },
  required: ['id', 'kind', 'createdAt'],
} as const;

const policyResponse = {
  type: 'object',
  properties: impersonationPolicyProperties,
  required: Object.keys(impersonationPolicyProperties),
} as const;

/**
 * The impersonation audit (who acted as whom, when and why; newest first), the policy, and the
 * kill switch.
 */
export function impersonationRoutes(router: ApiRouter, deps: ManagementDeps) {
  const impersonations = deps.impersonation.audit;
  const policies = impersonationPolicyStore(deps.database.db);
  const withOwnerLock = createOwnerLocks(deps.database.db);
  const checkpoints = deps.database.db.collection<CheckpointDocument>('impersonation_checkpoints');
  const revocations = deps.database.db.collection<{ _id: string; revokedAt: Date; clientId: string }>('impersonation_revocations');

  router.get(
    '/impersonations',
    guard({
      query: paginationQuery({
        impersonationId: idSchema,
        targetUserId: idSchema,
        actorUserId: idSchema,
        clientId: idSchema,
        since: { type: 'integer', minimum: 0 },
        until: { type: 'integer', minimum: 0 },
      }),
      response: { type: 'array', items: impersonationRecordResponse },
    }),
    async (ctx) => {
      const { page, page_size, ...filter } = ctx.guard.query;
      const paged = pageOf({ page, page_size });
      const [total, found] = await Promise.all([impersonations.count(filter), impersonations.find(filter, paged)]);
      setPageHeaders(ctx, paged, total);
      ctx.body = found.map(({ chainDue, ...record }) => withId(record));
    },
  );

  // Signed checkpoints of the audit chain (newest first): with the provider's JWKS, what
  // `verifyImpersonationAudit` (and `npm run audit:verify`) checks the records against offline.
  router.get(
    '/impersonations/checkpoints',
    guard({
      query: paginationQuery(),
      response: {
        type: 'array',
        items: {
          type: 'object',
          properties: { sequence: { type: 'integer' }, hash: { type: 'string' }, jws: { type: 'string' }, createdAt: timestamp },
          required: ['sequence', 'hash', 'jws', 'createdAt'],
        },
      },
    }),
    async (ctx) => {
      const paged = pageOf(ctx.guard.query);
      const [total, found] = await Promise.all([
        checkpoints.countDocuments({}),
        checkpoints.find({}).sort({ sequence: -1 }).skip(paged.skip).limit(paged.limit).toArray(),
      ]);
      setPageHeaders(ctx, paged, total);
      ctx.body = found.map(({ sequence, hash, jws, createdAt }) => ({ sequence, hash, jws, createdAt: createdAt.getTime() }));
    },
  );

  router.get('/configs/impersonation', guard({ response: policyResponse }), async (ctx) => {
    ctx.body = await policies.load();
  });

  router.patch(
    '/configs/impersonation',
    guard({ body: { type: 'object', properties: impersonationPolicyProperties, additionalProperties: false }, response: policyResponse }),
    async (ctx) => {
      const patch = ctx.guard.body as Partial<ImpersonationPolicy>;
      if (patch.protectedRoleIds) await deps.queries.roles.assertAllExist(patch.protectedRoleIds);
      for (const indicator of Object.keys(patch.scopeCeilings ?? {})) {
        assertThat(
          await deps.queries.resources.findByIndicator(indicator),
          () =>
            new ApiError('impersonation.unknown_resource', `no API resource has the indicator \`${indicator}\``, { field: `body.scopeCeilings.${indicator}` }),
        );
      }
      // One change at a time, in every process (as the sign-in settings): two PATCHes of different
      // fields both take effect, so one cannot drop the protected roles another just added.
      ctx.body = await withOwnerLock('impersonation-policy', async () => {
        const policy: ImpersonationPolicy = { ...(await policies.load()), ...patch };
        await deps.write(originOf(ctx), async ({ record }) => {
          await policies.save(policy);
          record({ entity: 'ImpersonationPolicy', action: 'updated', id: 'default', data: policy });
        });
        return policy;
      });
    },
  );

  // The kill switch: the subject token can no longer be exchanged, and every token minted from it
  // is inactive at introspection. Announced (`Impersonation.Revoked`) and audited.
  router.post(
    '/impersonations/:id/revoke',
    guard({
      params: idParams('id'),
      scopes: [managementScope, impersonationScope],
      response: { type: 'object', properties: { impersonationId: { type: 'string' }, revokedAt: timestamp }, required: ['impersonationId', 'revokedAt'] },
    }),
    async (ctx) => {
      const { id } = ctx.guard.params;
      const clientId = ctx.state.auth?.clientId ?? '';
      const [started] = await impersonations.find({ impersonationId: id }, { skip: 0, limit: 1 });
      // A backend with the `impersonation` scope alone ends the impersonations it started, no other
      // (another's is answered as unknown); `all` ends any.
      const mayEnd = started && ((ctx.state.auth?.scopes as Set<string> | undefined)?.has(managementScope) || started.issuerClientId === clientId);
      assertThat(mayEnd, () => new ApiError('entity.not_exists_with_id', `no impersonation has id \`${id}\``));
      const revokedAt = new Date();
      try {
        await deps.write(originOf(ctx), async ({ record }) => {
          await revocations.insertOne({ _id: id, revokedAt, clientId }, inUnit());
          record({ entity: 'Impersonation', action: 'revoked', id, data: { impersonationId: id, revokedAt: revokedAt.getTime(), clientId } });
          await impersonations.record({
            kind: 'impersonation.revoked',
            impersonationId: id,
            clientId,
            ...(ctx.state.auth?.userId && { administratorId: ctx.state.auth.userId }),
            ...(started.targetUserId && { targetUserId: started.targetUserId }),
            ...(started.actorUserId && { actorUserId: started.actorUserId }),
          });
        });
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new ApiError('impersonation.already_revoked', `impersonation \`${id}\` is already revoked`);
        throw error;
      }
      ctx.body = { impersonationId: id, revokedAt: revokedAt.getTime() };
    },
  );
}
