import type Router from '@koa/router';
import type { JSONWebKeySet } from 'jose';
import type { ParameterizedContext } from 'koa';
import type { Db } from 'mongodb';

import type { ImpersonationEvent } from '../impersonation/audit.js';
import { auditView, type CheckpointDocument } from '../impersonation/ledger.js';
import { verifyImpersonationAudit } from '../impersonation/verify.js';
import type { Dispatch } from './dispatch.js';
import {
  auditPage,
  impersonateForm,
  impersonationPage,
  revokePage,
  verificationPage,
  type AuditEntry,
  type ImpersonationDraft,
  type PolicyDemands,
} from './impersonation-views.js';
import { admittedOf, apiFieldOf, drawNotFound, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw } from './routing.js';
import type { ConsoleStore } from './store.js';
import { userLoader } from './users.js';
import { pageNumberOf } from './views.js';

export interface ImpersonationPagesDeps {
  db: Db;
  /** The provider's public signing keys: what the audit's checkpoints verify against. */
  publicKeys: () => JSONWebKeySet;
  issuer: string;
}

const pageSize = 50;
/** The form's fields, by the API field its errors name. */
const formFields: Record<string, keyof ImpersonationDraft> = { 'body.reason': 'reason', 'body.ticketId': 'ticketId', 'body.actorId': 'actorId' };

/**
 * Impersonation from the console: an administrator starts one for a user (with the reason and
 * ticket the policy asks for, and the one actor who may exchange it), sees the subject token once
 * and the impersonation's audit, and ends it with the kill switch; the whole audit, and its chain
 * verified against the signed checkpoints. Every call names the administrator in the audit.
 */
export function impersonationRoutes(
  router: Router,
  admitted: Admit,
  dispatch: Dispatch,
  draw: Draw,
  store: Pick<ConsoleStore, 'reveal' | 'takeReveal'>,
  deps: ImpersonationPagesDeps,
) {
  const userOf = userLoader(dispatch, draw);

  async function policyOf(ctx: ParameterizedContext): Promise<PolicyDemands> {
    const answer = await dispatch(ctx, admittedOf(ctx).session.userId, 'GET', '/api/configs/impersonation');
    if (answer.status !== 200) throw new Error(`the impersonation policy could not be read: ${answer.status} ${messageOf(answer)}`);
    return answer.body as PolicyDemands;
  }

  /** The records of one impersonation (oldest first), or the page that says there is none. */
  async function recordsOf(ctx: ParameterizedContext): Promise<AuditEntry[] | undefined> {
    const { session, page } = admittedOf(ctx);
    const id = ctx.params.impersonationId!;
    const answer = await dispatch(
      ctx,
      session.userId,
      'GET',
      `/api/impersonations?${new URLSearchParams({ impersonationId: id, page_size: '100' }).toString()}`,
    );
    const records = answer.status === 200 ? (answer.body as AuditEntry[]) : [];
    if (records.length > 0) return records.reverse();
    drawNotFound(ctx, draw, page.t.t('console.impersonation.notFound'), '/impersonations');
    return undefined;
  }

  router.get('/users/:userId/impersonate', admitted, async (ctx) => {
    const user = await userOf(ctx);
    if (!user) return;
    // The administrator is the one actor by default: only their own actor token exchanges it.
    const draft = { reason: '', ticketId: '', actorId: admittedOf(ctx).session.userId };
    draw(ctx, impersonateForm(admittedOf(ctx).page, { user, policy: await policyOf(ctx), draft }));
  });

  // POST /api/subject-tokens, as the administrator: the token is shown once, on the impersonation's page.
  router.post('/users/:userId/impersonate', admitted, async (ctx) => {
    const { token, session, page } = admittedOf(ctx);
    const user = await userOf(ctx);
    if (!user) return;
    const fields = formOf(ctx);
    const draft: ImpersonationDraft = {
      reason: (fields.get('reason') ?? '').trim(),
      ticketId: (fields.get('ticketId') ?? '').trim(),
      actorId: (fields.get('actorId') ?? '').trim(),
    };
    const answer = await dispatch(ctx, session.userId, 'POST', '/api/subject-tokens', {
      userId: user.id,
      ...(draft.reason && { reason: draft.reason }),
      ...(draft.ticketId && { ticketId: draft.ticketId }),
      ...(draft.actorId && { actorId: draft.actorId }),
    });
    if (answer.status !== 201) {
      const field = formFields[apiFieldOf(answer) ?? ''];
      draw(ctx, impersonateForm(page, { user, policy: await policyOf(ctx), draft, error: { field, text: messageOf(answer) } }), refusedStatus(answer));
      return;
    }
    const { subjectToken, impersonationId } = answer.body as { subjectToken: string; impersonationId: string };
    await store.reveal(token, session, { subject: impersonationId, name: 'subject token', value: subjectToken });
    seeOther(ctx, `/impersonations/${encodeURIComponent(impersonationId)}`);
  });

  router.get('/impersonations', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const number = pageNumberOf(ctx.query.page);
    // One user's impersonations (the link on their page), or all of them.
    const user = typeof ctx.query.user === 'string' && ctx.query.user !== '' ? ctx.query.user.slice(0, 128) : undefined;
    const query = new URLSearchParams({ page: String(number), page_size: String(pageSize), ...(user && { targetUserId: user }) });
    const answer = await dispatch(ctx, session.userId, 'GET', `/api/impersonations?${query.toString()}`);
    if (answer.status === 400) return drawNotFound(ctx, draw, page.t.t('console.user.notFound'), '/impersonations');
    if (answer.status !== 200) throw new Error(`the impersonation audit could not be read: ${answer.status} ${messageOf(answer)}`);
    const total = Number(answer.headers['total-number'] ?? 0);
    const link = (to: number) => `${page.base}/impersonations?${new URLSearchParams({ ...(user && { user }), page: String(to) }).toString()}`;
    draw(
      ctx,
      auditPage(page, {
        user,
        records: answer.body as AuditEntry[],
        previous: number > 1 ? link(number - 1) : undefined,
        next: number * pageSize < total ? link(number + 1) : undefined,
      }),
    );
  });

  // The chain checked here as `npm run audit:verify` checks it offline: every chained record, every checkpoint, the provider's public keys.
  router.get('/impersonations/verify', admitted, async (ctx) => {
    const records = await deps.db.collection<ImpersonationEvent>('impersonations').find({}).toArray();
    const checkpoints = await deps.db.collection<CheckpointDocument>('impersonation_checkpoints').find({}).sort({ sequence: -1 }).toArray();
    const result = await verifyImpersonationAudit(
      records.map(auditView),
      checkpoints.map(({ jws }) => jws),
      deps.publicKeys(),
      { issuer: deps.issuer },
    );
    draw(
      ctx,
      verificationPage(admittedOf(ctx).page, {
        result,
        checkpoints: checkpoints.slice(0, 20).map(({ sequence, createdAt }) => ({ sequence, createdAt: createdAt.getTime() })),
      }),
    );
  });

  router.get('/impersonations/:impersonationId', admitted, async (ctx) => {
    const { token, session, page } = admittedOf(ctx);
    const records = await recordsOf(ctx);
    if (!records) return;
    const impersonationId = ctx.params.impersonationId!;
    const revealed = await store.takeReveal(token, session, impersonationId);
    draw(
      ctx,
      impersonationPage(page, {
        impersonationId,
        records,
        token: revealed,
        notice: ctx.query.done === 'revoked' ? page.t.t('console.impersonation.revoke.done') : undefined,
      }),
    );
  });

  router.get('/impersonations/:impersonationId/revoke', admitted, async (ctx) => {
    if (await recordsOf(ctx)) draw(ctx, revokePage(admittedOf(ctx).page, { impersonationId: ctx.params.impersonationId! }));
  });

  // The kill switch (POST /api/impersonations/:id/revoke): the subject token can no longer be exchanged, and what it minted is inactive.
  router.post('/impersonations/:impersonationId/revoke', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    if (!(await recordsOf(ctx))) return;
    const impersonationId = ctx.params.impersonationId!;
    const answer = await dispatch(ctx, session.userId, 'POST', `/api/impersonations/${encodeURIComponent(impersonationId)}/revoke`);
    if (answer.status !== 200) {
      draw(ctx, revokePage(page, { impersonationId, error: messageOf(answer) }), refusedStatus(answer));
      return;
    }
    seeOther(ctx, `/impersonations/${encodeURIComponent(impersonationId)}?done=revoked`);
  });
}
