import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { hookEvents } from '../hooks/catalog.js';
import type { Dispatch } from './dispatch.js';
import { admittedOf, apiFieldOf, drawNotFound, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw } from './routing.js';
import type { ConsoleStore } from './store.js';
import {
  confirmHookPage,
  newWebhookPage,
  recoveryModeNames,
  webhookPage,
  webhooksPage,
  type ApiDelivery,
  type ApiHook,
  type HookOutcome,
  type RangeDraft,
  type WebhookDraft,
} from './webhook-views.js';
import { pageNumberOf } from './views.js';

const pageSize = 20;
const deliveryStates = ['pending', 'succeeded', 'failed', 'skipped'];
/** A `datetime-local` value, read as UTC (the form says so): minutes, or seconds too. */
const localTime = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?$/;

/** The form's field a hook's API error names. */
function hookFieldOf(field: string | undefined) {
  if (field === undefined) return undefined;
  if (field === 'body.name') return 'name';
  if (field.startsWith('body.config')) return 'url';
  if (field.startsWith('body.events') || field === 'body.event') return 'events';
  return undefined;
}

/** Epoch ms of a `datetime-local` value in UTC; undefined for empty, NaN for anything else. */
function utcOf(value: string): number | undefined {
  if (value === '') return undefined;
  const parts = localTime.exec(value);
  return parts ? Date.parse(`${parts[1]}T${parts[2]}${parts[3] ?? ':00'}Z`) : Number.NaN;
}

/** A time as `datetime-local` shows it, in UTC, to the second. */
const localOf = (at: number) => new Date(at).toISOString().slice(0, 19);

/**
 * Webhooks: the list, creating one with the events picker (its signing key shown once), its page
 * with the delivery log and its attempts, a test send, one delivery again, a range of stored events
 * again (replay) or the range's failed deliveries (recover), a new signing key, disabling,
 * re-enabling with what it missed, deleting. Each through Logto's or our `/api/hooks` routes.
 */
export function webhookRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw, store: Pick<ConsoleStore, 'reveal' | 'takeReveal'>) {
  const call = (ctx: ParameterizedContext, method: string, path: string, body?: unknown) =>
    dispatch(ctx, admittedOf(ctx).session.userId, method, `/api/hooks${path}`, body);
  const hookPath = (ctx: ParameterizedContext) => `/${encodeURIComponent(ctx.params.hookId!)}`;

  async function hookOf(ctx: ParameterizedContext): Promise<ApiHook | undefined> {
    const found = await call(ctx, 'GET', hookPath(ctx));
    if (found.status === 200) return found.body as ApiHook;
    drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.webhook.notFound'), '/webhooks');
    return undefined;
  }

  /** What the last action did, kept sealed in the session for the page after the redirect (a signing key among them). */
  const remember = (ctx: ParameterizedContext, hook: ApiHook, outcome: HookOutcome) => {
    const { token, session } = admittedOf(ctx);
    return store.reveal(token, session, { subject: hook.id, name: outcome.kind, value: JSON.stringify(outcome) });
  };
  const recalled = async (ctx: ParameterizedContext, hook: ApiHook): Promise<HookOutcome | undefined> => {
    const { token, session } = admittedOf(ctx);
    const revealed = await store.takeReveal(token, session, hook.id);
    return revealed && (JSON.parse(revealed.value) as HookOutcome);
  };

  /** The hook's page; with a refused form's draft and message when it comes back from one (`status` then 4xx). */
  async function showHook(ctx: ParameterizedContext, hook: ApiHook, shown: { replay?: RangeDraft; recover?: RangeDraft; error?: string } = {}, status = 200) {
    const { page } = admittedOf(ctx);
    const number = pageNumberOf(ctx.query.page);
    const state = typeof ctx.query.state === 'string' && deliveryStates.includes(ctx.query.state) ? ctx.query.state : '';
    const query = new URLSearchParams({ page: String(number), page_size: String(pageSize), ...(state && { state }) });
    const answer = await call(ctx, 'GET', `/${encodeURIComponent(hook.id)}/deliveries?${query.toString()}`);
    if (answer.status !== 200) throw new Error(`the deliveries could not be read: ${answer.status} ${messageOf(answer)}`);
    const total = Number(answer.headers['total-number'] ?? 0);
    const link = (to: number) =>
      `${page.base}/webhooks/${encodeURIComponent(hook.id)}?${new URLSearchParams({ ...(state && { state }), page: String(to) }).toString()}`;
    const outcome = status === 200 ? await recalled(ctx, hook) : undefined;
    const since = localOf(Date.now() - 24 * 60 * 60 * 1000);
    draw(
      ctx,
      webhookPage(page, {
        hook,
        deliveries: answer.body as ApiDelivery[],
        state,
        outcome,
        replay: shown.replay ?? { since, until: '', mode: 'all' },
        recover: shown.recover ?? { since, until: '', mode: 'all' },
        previous: number > 1 ? link(number - 1) : undefined,
        next: number * pageSize < total ? link(number + 1) : undefined,
        status: shown.error ? { error: shown.error } : undefined,
      }),
      status,
    );
  }

  router.get('/webhooks', admitted, async (ctx) => {
    const answer = await call(ctx, 'GET', '?includeExecutionStats=true');
    if (answer.status !== 200) throw new Error(`the webhooks could not be listed: ${answer.status} ${messageOf(answer)}`);
    draw(ctx, webhooksPage(admittedOf(ctx).page, { hooks: answer.body as ApiHook[] }));
  });

  router.get('/webhooks/new', admitted, (ctx) => {
    draw(ctx, newWebhookPage(admittedOf(ctx).page, { draft: { name: '', url: '', events: [] }, events: hookEvents }));
  });

  // Logto's POST /api/hooks: the signing key is in this answer only, and so on the next page only.
  router.post('/webhooks/new', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const fields = formOf(ctx);
    const draft: WebhookDraft = { name: (fields.get('name') ?? '').trim(), url: (fields.get('url') ?? '').trim(), events: fields.getAll('events') };
    const answer = await call(ctx, 'POST', '', { name: draft.name, events: draft.events, config: { url: draft.url } });
    if (answer.status !== 201) {
      const error = { field: hookFieldOf(apiFieldOf(answer)), text: messageOf(answer) };
      draw(ctx, newWebhookPage(page, { draft: { ...draft, error }, events: hookEvents }), refusedStatus(answer));
      return;
    }
    const created = answer.body as ApiHook & { signingKey: string };
    await remember(ctx, created, { kind: 'created', signingKey: created.signingKey });
    seeOther(ctx, `/webhooks/${encodeURIComponent(created.id)}`);
  });

  router.get('/webhooks/:hookId/edit', admitted, async (ctx) => {
    const hook = await hookOf(ctx);
    if (hook)
      draw(
        ctx,
        newWebhookPage(admittedOf(ctx).page, { draft: { name: hook.name, url: hook.config.url, events: hook.events }, events: hookEvents, editing: hook }),
      );
  });

  // Logto's PATCH /api/hooks/:id: the name, the URL (the rest of its configuration kept), the events.
  router.post('/webhooks/:hookId/edit', admitted, async (ctx) => {
    const hook = await hookOf(ctx);
    if (!hook) return;
    const fields = formOf(ctx);
    const draft: WebhookDraft = { name: (fields.get('name') ?? '').trim(), url: (fields.get('url') ?? '').trim(), events: fields.getAll('events') };
    const { url: _url, ...kept } = hook.config;
    const answer =
      draft.events.length === 0
        ? undefined
        : await call(ctx, 'PATCH', hookPath(ctx), { name: draft.name, events: draft.events, config: { ...kept, url: draft.url } });
    if (!answer || answer.status !== 200) {
      const error = answer
        ? { field: hookFieldOf(apiFieldOf(answer)), text: messageOf(answer) }
        : { field: 'events', text: admittedOf(ctx).page.t.t('console.webhook.noEvents') };
      draw(ctx, newWebhookPage(admittedOf(ctx).page, { draft: { ...draft, error }, events: hookEvents, editing: hook }), answer ? refusedStatus(answer) : 400);
      return;
    }
    await remember(ctx, hook, { kind: 'edited' });
    seeOther(ctx, `/webhooks/${encodeURIComponent(hook.id)}`);
  });

  router.get('/webhooks/:hookId', admitted, async (ctx) => {
    const hook = await hookOf(ctx);
    if (hook) await showHook(ctx, hook);
  });

  // A sample of the hook's first event, sent now, and what the endpoint answered.
  router.post('/webhooks/:hookId/test', admitted, async (ctx) => {
    const hook = await hookOf(ctx);
    if (!hook) return;
    const answer = await call(ctx, 'POST', `${hookPath(ctx)}/test`);
    if (answer.status !== 200) return showHook(ctx, hook, { error: messageOf(answer) }, refusedStatus(answer));
    const report = answer.body as { ok: boolean; statusCode: number | null; durationMs: number; error: string | null };
    await remember(ctx, hook, { kind: 'tested', ...report });
    seeOther(ctx, `/webhooks/${encodeURIComponent(hook.id)}`);
  });

  router.post('/webhooks/:hookId/deliveries/:deliveryId/redeliver', admitted, async (ctx) => {
    const hook = await hookOf(ctx);
    if (!hook) return;
    const answer = await call(ctx, 'POST', `${hookPath(ctx)}/deliveries/${encodeURIComponent(ctx.params.deliveryId!)}/redeliver`);
    if (answer.status !== 202) return showHook(ctx, hook, { error: messageOf(answer) }, refusedStatus(answer));
    await remember(ctx, hook, { kind: 'redelivered' });
    seeOther(ctx, `/webhooks/${encodeURIComponent(hook.id)}`);
  });

  // Replay: the range's stored events the hook subscribes to, delivered again (POST /api/hooks/:id/replay); recover: its failed deliveries of the range.
  for (const action of ['replay', 'recover'] as const) {
    router.post(`/webhooks/:hookId/${action}`, admitted, async (ctx) => {
      const { page } = admittedOf(ctx);
      const hook = await hookOf(ctx);
      if (!hook) return;
      const fields = formOf(ctx);
      const draft: RangeDraft = { since: fields.get('since') ?? '', until: fields.get('until') ?? '', mode: fields.get('mode') ?? 'all' };
      // An error about a field is said there; any other, at the top of the page.
      const refuse = (error: NonNullable<RangeDraft['error']>, status = 400) =>
        showHook(ctx, hook, { [action]: { ...draft, error }, ...(!error.field && { error: error.text }) }, status);
      const since = utcOf(draft.since);
      const until = utcOf(draft.until);
      if (since === undefined || Number.isNaN(since)) return refuse({ field: 'since', text: page.t.t('console.webhook.badTime') });
      if (Number.isNaN(until)) return refuse({ field: 'until', text: page.t.t('console.webhook.badTime') });
      const mode = (recoveryModeNames as readonly string[]).includes(draft.mode) ? draft.mode : 'all';
      const answer = await call(ctx, 'POST', `${hookPath(ctx)}/${action}`, { since, ...(until !== undefined && { until }), mode });
      if (answer.status !== 202) {
        const field = apiFieldOf(answer);
        return refuse(
          { field: field === 'body.since' ? 'since' : field === 'body.until' ? 'until' : undefined, text: messageOf(answer) },
          refusedStatus(answer),
        );
      }
      const counts = answer.body as { events: number; queued: number } & { failed: number; skipped: number };
      await remember(
        ctx,
        hook,
        action === 'replay'
          ? { kind: 'replayed', events: counts.events, queued: counts.queued }
          : { kind: 'recovered', failed: counts.failed, queued: counts.queued, skipped: counts.skipped },
      );
      seeOther(ctx, `/webhooks/${encodeURIComponent(hook.id)}`);
    });
  }

  for (const action of ['rotate', 'disable', 'enable', 'delete'] as const) {
    router.get(`/webhooks/:hookId/${action}`, admitted, async (ctx) => {
      const hook = await hookOf(ctx);
      if (hook) draw(ctx, confirmHookPage(admittedOf(ctx).page, { hook, action }));
    });
    router.post(`/webhooks/:hookId/${action}`, admitted, async (ctx) => {
      const { page } = admittedOf(ctx);
      const hook = await hookOf(ctx);
      if (!hook) return;
      const mode = formOf(ctx).get('mode');
      const answer =
        action === 'rotate'
          ? await call(ctx, 'PATCH', `${hookPath(ctx)}/signing-key`)
          : action === 'delete'
            ? await call(ctx, 'DELETE', hookPath(ctx))
            : await call(ctx, 'PATCH', hookPath(ctx), {
                enabled: action === 'enable',
                ...(action === 'enable' && mode && (recoveryModeNames as readonly string[]).includes(mode) && { mode }),
              });
      if (answer.status !== 200 && answer.status !== 204) {
        draw(ctx, confirmHookPage(page, { hook, action, error: messageOf(answer) }), refusedStatus(answer));
        return;
      }
      if (action === 'delete') return seeOther(ctx, '/webhooks');
      await remember(
        ctx,
        hook,
        action === 'rotate'
          ? { kind: 'rotated', signingKey: (answer.body as { signingKey: string }).signingKey }
          : { kind: `${action}d` as 'enabled' | 'disabled' },
      );
      seeOther(ctx, `/webhooks/${encodeURIComponent(hook.id)}`);
    });
  }
}
