import { html, type Html } from '../experience/views/markup.js';
import {
  textField,
  checkbox,
  momentOf,
  consoleLayout,
  dataTable,
  fieldError,
  invalidAttributes,
  pager,
  postForm,
  type ConsolePage,
  type FormError,
} from './views.js';

/** A hook as the Management API answers one (Logto's shape, with ours), as far as the pages read it. */
export interface ApiHook {
  id: string;
  name: string;
  events: string[];
  config: {
    url: string;
    headers?: Record<string, string>;
    ordering?: string;
    sources?: string[];
    signatures?: string[];
    excludeClientIds?: string[];
    maxPerSecond?: number;
  };
  enabled: boolean;
  disabledReason: string | null;
  executionStats?: { requestCount: number; successCount: number };
  createdAt: number;
}

/** One delivery of an event to a hook, with its attempts (`GET /api/hooks/:id/deliveries`). */
export interface ApiDelivery {
  id: string;
  eventId: string;
  event: string;
  state: 'pending' | 'succeeded' | 'failed' | 'skipped';
  attemptCount: number;
  nextAttemptAt: number | null;
  parked?: boolean;
  lastStatus: number | null;
  lastError: string | null;
  attempts: Array<{ id: string; startedAt: number; durationMs: number; ok: boolean; statusCode: number | null; response: string | null; error: string | null }>;
  createdAt: number;
}

export interface WebhookDraft {
  name: string;
  url: string;
  events: string[];
  error?: FormError | undefined;
}

/** A range of stored events (UTC, as `datetime-local` gives it), and how to send them. */
export interface RangeDraft {
  since: string;
  until: string;
  mode: string;
  error?: FormError | undefined;
}

/** What the last action on the hook did, shown once on its page. */
export type HookOutcome =
  | { kind: 'created' | 'rotated'; signingKey: string }
  | { kind: 'tested'; ok: boolean; statusCode: number | null; durationMs: number; error: string | null }
  | { kind: 'replayed'; events: number; queued: number }
  | { kind: 'recovered'; failed: number; queued: number; skipped: number }
  | { kind: 'redelivered' | 'enabled' | 'disabled' | 'edited' };

export const recoveryModeNames = ['all', 'latest-per-entity', 'skip'] as const;

const moment = (page: ConsolePage, at: number) => momentOf(page, at, { seconds: true });
const errorOf = (error: FormError | undefined, id: string) => (error?.field === id ? error.text : undefined);
const stateOf = (page: ConsolePage, hook: ApiHook) =>
  hook.enabled
    ? page.t.t('console.webhook.state.enabled')
    : page.t.t('console.webhook.state.disabled', { reason: hook.disabledReason ?? page.t.t('console.webhook.byHand') });

export function webhooksPage(page: ConsolePage, { hooks }: { hooks: ApiHook[] }): string {
  const { t, base } = page;
  const rows = hooks.map(
    (hook) =>
      html`<tr>
        <td><a href="${base}/webhooks/${encodeURIComponent(hook.id)}">${hook.name}</a></td>
        <td><code>${hook.config.url}</code></td>
        <td>${hook.events.length}</td>
        <td>${stateOf(page, hook)}</td>
        <td>${hook.executionStats ? `${hook.executionStats.successCount} / ${hook.executionStats.requestCount}` : ''}</td>
      </tr>`,
  );
  const content = html`<p><a class="button" href="${base}/webhooks/new">${t.t('console.webhooks.create')}</a></p>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.webhook.url'), t.t('console.webhook.events'), t.t('console.user.status'), t.t('console.webhooks.lastDay')], rows, t.t('console.webhooks.empty'))}`;
  return consoleLayout({ ...page, section: 'webhooks' }, { title: t.t('console.webhooks.title') }, content);
}

/** The events picker: one group of checkboxes per family of events (`User.*`, `Session.*`, ...). */
function eventsPicker(page: ConsolePage, events: readonly string[], chosen: string[], error: string | undefined): Html {
  const families = new Map<string, string[]>();
  for (const event of events) {
    const family = event.split('.')[0]!;
    families.set(family, [...(families.get(family) ?? []), event]);
  }
  return html`<fieldset class="events" ${invalidAttributes('events', error)}>
      <legend>${page.t.t('console.webhook.events')}</legend>
      ${[...families].map(
        ([family, names]) =>
          html`<fieldset class="family">
            <legend>${family}</legend>
            ${names.map((event) => checkbox('events', event, event, chosen.includes(event)))}
          </fieldset>`,
      )}
    </fieldset>
    ${fieldError('events', error)}`;
}

/** The create form, or, with `editing`, the form that changes a hook's name, URL and events. */
export function newWebhookPage(page: ConsolePage, { draft, events, editing }: { draft: WebhookDraft; events: readonly string[]; editing?: ApiHook }): string {
  const { t, base } = page;
  const back = editing ? `${base}/webhooks/${encodeURIComponent(editing.id)}` : `${base}/webhooks`;
  const title = editing ? t.t('console.webhook.edit.title', { hook: editing.name }) : t.t('console.webhooks.create');
  const content = postForm(
    page,
    editing ? `/webhooks/${encodeURIComponent(editing.id)}/edit` : '/webhooks/new',
    html`${textField('name', 'name', t.t('console.user.name'), { value: draft.name, error: draft.error, required: true, maxLength: 128 })}
      ${textField('url', 'url', `${t.t('console.webhook.url')} ${t.t('console.webhook.urlHint')}`, {
        value: draft.url,
        error: draft.error,
        required: true,
        maxLength: 2048,
        type: 'url',
      })}
      ${eventsPicker(page, events, draft.events, errorOf(draft.error, 'events'))}
      <div class="actions">
        <button type="submit">${editing ? t.t('console.look.save') : t.t('console.webhooks.create')}</button>
        <a href="${back}">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = draft.error && !['name', 'url', 'events'].includes(draft.error.field ?? '') ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'webhooks' }, { title, error: general }, content);
}

/** A range form: from, to (UTC), how; posted to `action`. */
function rangeForm(page: ConsolePage, action: 'replay' | 'recover', hook: ApiHook, draft: RangeDraft | undefined): Html {
  const { t } = page;
  const id = (name: string) => `${action}-${name}`;
  const at = (name: string) => (draft?.error?.field === name ? draft.error.text : undefined);
  return postForm(
    page,
    `/webhooks/${encodeURIComponent(hook.id)}/${action}`,
    html`<fieldset>
      <legend>${t.t(`console.webhook.${action}`)}</legend>
      <p class="hint">${t.t(`console.webhook.${action}.lead`)}</p>
      <label for="${id('since')}">${t.t('console.webhook.since')}</label>
      <input
        id="${id('since')}"
        name="since"
        type="datetime-local"
        step="1"
        required
        value="${draft?.since ?? ''}"
        ${invalidAttributes(id('since'), at('since'))}
      />
      ${fieldError(id('since'), at('since'))}
      <label for="${id('until')}">${t.t('console.webhook.until')} <span class="hint">${t.t('console.webhook.untilHint')}</span></label>
      <input id="${id('until')}" name="until" type="datetime-local" step="1" value="${draft?.until ?? ''}" ${invalidAttributes(id('until'), at('until'))} />
      ${fieldError(id('until'), at('until'))}
      <label for="${id('mode')}">${t.t('console.webhook.mode')}</label>
      <select id="${id('mode')}" name="mode">
        ${recoveryModeNames
          .filter((mode) => action === 'recover' || mode !== 'skip')
          .map((mode) => html`<option value="${mode}" ${draft?.mode === mode ? html`selected` : ''}>${t.t(`console.webhook.mode.${mode}`)}</option>`)}
      </select>
      <button type="submit">${t.t(`console.webhook.${action}`)}</button>
    </fieldset>`,
  );
}

function outcomeNotice(page: ConsolePage, outcome: HookOutcome | undefined): { notice?: string; error?: string; secret?: string } {
  const { t } = page;
  if (!outcome) return {};
  switch (outcome.kind) {
    case 'created':
    case 'rotated':
      return { notice: t.t(`console.webhook.done.${outcome.kind}`), secret: outcome.signingKey };
    case 'tested':
      return outcome.ok
        ? { notice: t.t('console.webhook.tested.ok', { status: outcome.statusCode ?? '', ms: outcome.durationMs }) }
        : { error: t.t('console.webhook.tested.failed', { answer: outcome.statusCode === null ? (outcome.error ?? '') : `HTTP ${outcome.statusCode}` }) };
    case 'replayed':
      return { notice: t.t('console.webhook.done.replayed', { events: outcome.events, queued: outcome.queued }) };
    case 'recovered':
      return { notice: t.t('console.webhook.done.recovered', { failed: outcome.failed, queued: outcome.queued, skipped: outcome.skipped }) };
    default:
      return { notice: t.t(`console.webhook.done.${outcome.kind}`) };
  }
}

/** The delivery log: each delivery with its attempts (status, time, the response's first bytes), and sending one again. */
function deliveryLog(page: ConsolePage, hook: ApiHook, deliveries: ApiDelivery[], state: string): Html {
  const { t, base } = page;
  const attempt = (item: ApiDelivery['attempts'][number]) =>
    html`<li>
      ${moment(page, item.startedAt)} · ${item.statusCode === null ? (item.error ?? '') : `HTTP ${item.statusCode}`} · ${item.durationMs} ms
      ${item.response ? html`<pre class="excerpt">${item.response.slice(0, 500)}</pre>` : ''}
    </li>`;
  const row = (delivery: ApiDelivery) =>
    html`<tr>
      <td>${moment(page, delivery.createdAt)}</td>
      <td>${delivery.event}<br /><code class="hint">${delivery.eventId}</code></td>
      <td>${t.t(`console.delivery.${delivery.state}`)}${delivery.parked ? html`<br /><span class="hint">${t.t('console.delivery.parked')}</span>` : ''}</td>
      <td>
        ${
          delivery.attempts.length === 0
            ? t.t('console.delivery.noAttempt')
            : html`<details>
                <summary>${t.t('console.delivery.attempts', { count: delivery.attemptCount })}</summary>
                <ul class="plain">
                  ${delivery.attempts.map(attempt)}
                </ul>
              </details>`
        }
      </td>
      <td>
        ${
          delivery.state === 'pending'
            ? ''
            : postForm(
                page,
                `/webhooks/${encodeURIComponent(hook.id)}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`,
                html`<button type="submit" class="link">${t.t('console.delivery.redeliver')}</button>`,
              )
        }
      </td>
    </tr>`;
  return html`<form class="search" method="get" action="${base}/webhooks/${encodeURIComponent(hook.id)}">
      <label for="state">${t.t('console.delivery.filter')}</label>
      <select id="state" name="state">
        <option value="">${t.t('console.delivery.any')}</option>
        ${(['pending', 'succeeded', 'failed', 'skipped'] as const).map(
          (name) => html`<option value="${name}" ${state === name ? html`selected` : ''}>${t.t(`console.delivery.${name}`)}</option>`,
        )}
      </select>
      <button type="submit">${t.t('console.delivery.show')}</button>
    </form>
    ${dataTable(page, [t.t('console.changes.when'), t.t('console.delivery.event'), t.t('console.user.status'), t.t('console.delivery.attemptsTitle'), ''], deliveries.map(row), t.t('console.delivery.empty'))}`;
}

/** One hook: its settings, what the last action did (a new signing key shown this once), its actions and its delivery log. */
export function webhookPage(
  page: ConsolePage,
  {
    hook,
    deliveries,
    state,
    outcome,
    replay,
    recover,
    previous,
    next,
    status,
  }: {
    hook: ApiHook;
    deliveries: ApiDelivery[];
    state: string;
    outcome?: HookOutcome | undefined;
    replay?: RangeDraft | undefined;
    recover?: RangeDraft | undefined;
    previous?: string | undefined;
    next?: string | undefined;
    status?: { error: string } | undefined;
  },
): string {
  const { t, base } = page;
  const path = `/webhooks/${encodeURIComponent(hook.id)}`;
  const said = outcomeNotice(page, outcome);
  const content = html`${
      said.secret
        ? html`<div class="reveal" role="status">
            <p>${t.t('console.webhook.keyOnce')}</p>
            <p><code class="secret">${said.secret}</code></p>
          </div>`
        : ''
    }
    <dl class="facts">
      <dt>${t.t('console.user.id')}</dt>
      <dd><code>${hook.id}</code></dd>
      <dt>${t.t('console.webhook.url')}</dt>
      <dd><code>${hook.config.url}</code></dd>
      <dt>${t.t('console.user.status')}</dt>
      <dd>${stateOf(page, hook)}</dd>
      <dt>${t.t('console.webhook.events')}</dt>
      <dd>${hook.events.join(t.t('list.separator'))}</dd>
      <dt>${t.t('console.webhook.ordering')}</dt>
      <dd>${hook.config.ordering === 'per-entity' ? t.t('console.webhook.perEntity') : t.t('console.webhook.unordered')}</dd>
    </dl>
    <div class="actions">
      ${postForm(page, `${path}/test`, html`<button type="submit">${t.t('console.webhook.test')}</button>`)}
      <a class="button" href="${base}${path}/${hook.enabled ? 'disable' : 'enable'}"
        >${t.t(hook.enabled ? 'console.webhook.disable' : 'console.webhook.enable')}</a
      >
      <a class="button" href="${base}${path}/edit">${t.t('console.webhook.edit')}</a>
      <a class="button" href="${base}${path}/rotate">${t.t('console.webhook.rotate')}</a>
      <a class="button" href="${base}${path}/delete">${t.t('console.webhook.delete')}</a>
    </div>
    <h2>${t.t('console.webhook.resend')}</h2>
    <div class="ranges">${rangeForm(page, 'replay', hook, replay)} ${rangeForm(page, 'recover', hook, recover)}</div>
    <h2>${t.t('console.webhook.deliveries')}</h2>
    ${deliveryLog(page, hook, deliveries, state)} ${pager(page, t.t('console.webhook.deliveries'), { previous, next })}
    <p><a href="${base}/webhooks">${t.t('console.back')}</a></p>`;
  return consoleLayout({ ...page, section: 'webhooks' }, { title: hook.name, notice: said.notice, error: status?.error ?? said.error }, content);
}

/** A change to a hook that asks first, on its own page: rotate the key, disable, enable (with what it missed), delete. */
export function confirmHookPage(
  page: ConsolePage,
  { hook, action, error }: { hook: ApiHook; action: 'rotate' | 'disable' | 'enable' | 'delete'; error?: string | undefined },
): string {
  const { t, base } = page;
  const path = `/webhooks/${encodeURIComponent(hook.id)}`;
  const content = html`<p>${t.t(`console.webhook.${action}.lead`)}</p>
    ${postForm(
      page,
      `${path}/${action}`,
      html`${
          action === 'enable'
            ? html`<label for="mode">${t.t('console.webhook.missed')}</label>
                <select id="mode" name="mode">
                  ${recoveryModeNames
                    .slice()
                    .reverse()
                    .map((mode) => html`<option value="${mode}">${t.t(`console.webhook.missed.${mode}`)}</option>`)}
                </select>`
            : ''
        }
        <div class="actions">
          <button type="submit">${t.t(`console.webhook.${action}`)}</button>
          <a href="${base}${path}">${t.t('action.cancel')}</a>
        </div>`,
    )}`;
  return consoleLayout({ ...page, section: 'webhooks' }, { title: t.t(`console.webhook.${action}.title`, { hook: hook.name }), error }, content);
}
