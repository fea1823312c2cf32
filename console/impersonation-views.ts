import { html, type Html } from '../experience/views/markup.js';
import { userLabel, type ApiUser } from './user-views.js';
import { momentOf, consoleLayout, dataTable, fieldError, invalidAttributes, pager, postForm, type ConsolePage } from './views.js';

/** An audit record as `GET /api/impersonations` answers it, as far as the pages read it. */
export interface AuditEntry {
  id: string;
  kind: string;
  impersonationId?: string;
  createdAt: number;
  targetUserId?: string;
  actorUserId?: string;
  boundActorId?: string;
  administratorId?: string;
  issuerClientId?: string;
  clientId?: string;
  resource?: string;
  scope?: string;
  reason?: string;
  ticketId?: string;
  failureReason?: string;
  expiresAt?: number;
  sequence?: number;
}

/** What the impersonation policy asks of a subject token's request (`GET /api/configs/impersonation`). */
export interface PolicyDemands {
  requireReason: boolean;
  requireTicketId: boolean;
}

/** What the administrator typed: kept when the form comes back with an error. */
export interface ImpersonationDraft {
  reason: string;
  ticketId: string;
  actorId: string;
}

const moment = (page: ConsolePage, at: number) => momentOf(page, at, { seconds: true });

/** Starting an impersonation of a user: why (and the ticket, as the policy asks), and who alone may exchange the token. */
export function impersonateForm(
  page: ConsolePage,
  {
    user,
    policy,
    draft,
    error,
  }: { user: ApiUser; policy: PolicyDemands; draft: ImpersonationDraft; error?: { field?: string | undefined; text: string } | undefined },
): string {
  const { t, base } = page;
  const path = `/users/${encodeURIComponent(user.id)}`;
  const at = (field: string) => (error?.field === field ? error.text : undefined);
  const field = (name: keyof ImpersonationDraft, label: string, hint: string, { required, maxLength }: { required: boolean; maxLength: number }) =>
    html`<label for="${name}">${label} <span class="hint">${hint}</span></label>
      <input
        id="${name}"
        name="${name}"
        type="text"
        value="${draft[name]}"
        maxlength="${maxLength}"
        autocomplete="off"
        ${required ? html`required aria-required="true"` : ''}
        ${invalidAttributes(name, at(name))}
      />
      ${fieldError(name, at(name))}`;
  const content = html`<p>${t.t('console.impersonate.lead')}</p>
    ${postForm(
      page,
      `${path}/impersonate`,
      html`${field('reason', t.t('console.impersonate.reason'), t.t(policy.requireReason ? 'console.impersonate.required' : 'console.impersonate.optional'), {
          required: policy.requireReason,
          maxLength: 500,
        })}
        ${field('ticketId', t.t('console.impersonate.ticket'), t.t(policy.requireTicketId ? 'console.impersonate.required' : 'console.impersonate.optional'), {
          required: policy.requireTicketId,
          maxLength: 128,
        })}
        ${field('actorId', t.t('console.impersonate.actor'), t.t('console.impersonate.actorHint'), { required: false, maxLength: 128 })}
        <div class="actions">
          <button type="submit">${t.t('console.impersonate.start')}</button>
          <a href="${base}${path}">${t.t('action.cancel')}</a>
        </div>`,
    )}`;
  const general = error && !['reason', 'ticketId', 'actorId'].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'users' }, { title: t.t('console.impersonate.title', { user: userLabel(user) }), error: general }, content);
}

/** The audit's records as a table: when, what, who acted, through which application, for what, why. */
export function auditTable(page: ConsolePage, records: AuditEntry[], { linkImpersonations }: { linkImpersonations: boolean }): Html | string {
  const { t, base } = page;
  const userLink = (id: string | undefined) => (id ? html`<a href="${base}/users/${encodeURIComponent(id)}">${id}</a>` : '');
  const row = (record: AuditEntry) =>
    html`<tr>
      <td>${moment(page, record.createdAt)}</td>
      <td>${record.kind}${record.failureReason ? html`<br /><span class="hint">${record.failureReason}</span>` : ''}</td>
      <td>
        ${
          linkImpersonations && record.impersonationId
            ? html`<a href="${base}/impersonations/${encodeURIComponent(record.impersonationId)}">${record.impersonationId}</a>`
            : (record.impersonationId ?? '')
        }
      </td>
      <td>${userLink(record.targetUserId)}</td>
      <td>${userLink(record.actorUserId ?? record.boundActorId)}</td>
      <td>${record.administratorId ? userLink(record.administratorId) : (record.clientId ?? record.issuerClientId ?? '')}</td>
      <td>${[record.resource, record.scope].filter(Boolean).join(' · ')}</td>
      <td>${[record.reason, record.ticketId].filter(Boolean).join(' · ')}</td>
    </tr>`;
  return dataTable(
    page,
    [
      t.t('console.changes.when'),
      t.t('console.changes.what'),
      t.t('console.audit.impersonation'),
      t.t('console.audit.user'),
      t.t('console.audit.actor'),
      t.t('console.changes.who'),
      t.t('console.audit.granted'),
      t.t('console.audit.why'),
    ],
    records.map(row),
    t.t('console.audit.empty'),
  );
}

/** One impersonation: its subject token (right after it was issued, this once), its audit, and the kill switch. */
export function impersonationPage(
  page: ConsolePage,
  {
    impersonationId,
    records,
    token,
    notice,
  }: { impersonationId: string; records: AuditEntry[]; token?: { value: string } | undefined; notice?: string | undefined },
): string {
  const { t, base } = page;
  const issued = records.find(({ kind }) => kind === 'subject_token.issued');
  const revoked = records.some(({ kind }) => kind === 'impersonation.revoked');
  const content = html`${
      token
        ? html`<div class="reveal" role="status">
            <p>${t.t('console.impersonation.tokenOnce', { expires: issued?.expiresAt ? moment(page, issued.expiresAt) : '' })}</p>
            <p><code class="secret">${token.value}</code></p>
          </div>`
        : ''
    }
    <dl class="facts">
      <dt>${t.t('console.audit.impersonation')}</dt>
      <dd><code>${impersonationId}</code></dd>
      <dt>${t.t('console.user.status')}</dt>
      <dd>${t.t(revoked ? 'console.impersonation.revoked' : 'console.impersonation.live')}</dd>
    </dl>
    <h2>${t.t('console.audit.title')}</h2>
    ${auditTable(page, records, { linkImpersonations: false })}
    <div class="actions">
      ${revoked ? '' : html`<a class="button" href="${base}/impersonations/${encodeURIComponent(impersonationId)}/revoke">${t.t('console.impersonation.revoke')}</a>`}
      ${issued?.targetUserId ? html`<a href="${base}/users/${encodeURIComponent(issued.targetUserId)}">${t.t('console.impersonation.toUser')}</a>` : ''}
      <a href="${base}/impersonations">${t.t('console.audit.title')}</a>
    </div>`;
  return consoleLayout({ ...page, section: 'impersonations' }, { title: t.t('console.impersonation.title'), notice }, content);
}

/** The kill switch, confirmed on its own page. */
export function revokePage(page: ConsolePage, { impersonationId, error }: { impersonationId: string; error?: string | undefined }): string {
  const { t, base } = page;
  const path = `/impersonations/${encodeURIComponent(impersonationId)}`;
  const content = html`<p>${t.t('console.impersonation.revoke.lead')}</p>
    ${postForm(
      page,
      `${path}/revoke`,
      html`<div class="actions">
        <button type="submit">${t.t('console.impersonation.revoke')}</button>
        <a href="${base}${path}">${t.t('action.cancel')}</a>
      </div>`,
    )}`;
  return consoleLayout({ ...page, section: 'impersonations' }, { title: t.t('console.impersonation.revoke.title', { id: impersonationId }), error }, content);
}

/** The whole audit, newest first, with the way to verify its chain. */
export function auditPage(
  page: ConsolePage,
  { user, records, previous, next }: { user?: string | undefined; records: AuditEntry[]; previous?: string | undefined; next?: string | undefined },
): string {
  const { t, base } = page;
  const content = html`<p>
      ${t.t('console.audit.lead')} <a href="${base}/impersonations/verify">${t.t('console.audit.verify')}</a> ·
      <a href="${base}/impersonation-policy">${t.t('console.policy.title')}</a>
    </p>
    ${user ? html`<p>${t.t('console.audit.ofUser', { user })} <a href="${base}/impersonations">${t.t('console.audit.all')}</a></p>` : ''}
    ${auditTable(page, records, { linkImpersonations: true })} ${pager(page, t.t('console.audit.title'), { previous, next })}`;
  return consoleLayout({ ...page, section: 'impersonations' }, { title: t.t('console.audit.title') }, content);
}

/** What the chain's verification found (`verifyImpersonationAudit`), and the checkpoints it checked against. */
export function verificationPage(
  page: ConsolePage,
  {
    result,
    checkpoints,
  }: {
    result: { ok: boolean; problems: string[]; checked: number; unchained: number; checkpointed: number };
    checkpoints: Array<{ sequence: number; createdAt: number }>;
  },
): string {
  const { t, base } = page;
  const content = html`<p class="${result.ok ? 'notice' : 'error'}" role="status">
      ${t.t(result.ok ? 'console.verify.intact' : 'console.verify.broken', { checked: result.checked, checkpointed: result.checkpointed })}
    </p>
    ${
      result.problems.length > 0
        ? html`<ul>
            ${result.problems.map((problem) => html`<li>${problem}</li>`)}
          </ul>`
        : ''
    }
    ${result.unchained > 0 ? html`<p>${t.t('console.verify.unchained', { count: result.unchained })}</p>` : ''}
    <h2>${t.t('console.verify.checkpoints')}</h2>
    ${
      checkpoints.length === 0
        ? html`<p>${t.t('console.verify.noCheckpoints')}</p>`
        : html`<ul class="plain">
            ${checkpoints.map(({ sequence, createdAt }) => html`<li>${t.t('console.verify.checkpoint', { sequence, when: moment(page, createdAt) })}</li>`)}
          </ul>`
    }
    <p><a href="${base}/impersonations">${t.t('console.back')}</a></p>`;
  return consoleLayout({ ...page, section: 'impersonations' }, { title: t.t('console.verify.title') }, content);
}
