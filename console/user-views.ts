import { html, type Html } from '../experience/views/markup.js';
import { momentOf, consoleLayout, dataTable, pager, postForm, type ConsolePage } from './views.js';

/** A user as the Management API answers one (Logto's shape), as far as the pages read it. */
export interface ApiUser {
  id: string;
  username: string | null;
  primaryEmail: string | null;
  primaryPhone: string | null;
  name: string | null;
  isSuspended: boolean;
  createdAt: number;
  lastSignInAt: number | null;
  customData?: Record<string, unknown>;
  /** Linked accounts at other providers, by connector target: `{userId, details}`. */
  identities?: Record<string, { userId: string }>;
}

/** A second factor as `GET /api/users/:id/mfa-verifications` answers it. */
export interface ApiFactor {
  id: string;
  type: string;
  createdAt: string | number;
  lastUsedAt?: string | number;
  name?: string;
}

/** A live session as `GET /api/users/:id/sessions` answers it, as far as the page reads it. */
export interface ApiSession {
  payload: { uid: string; loginTs?: number; amr?: string[] };
  lastSubmission: { signInContext?: { ip?: string; userAgent?: string } } | null;
  clientId: string | null;
  expiresAt: number;
  lastActiveAt?: string;
}

/** What the user's page shows beside the profile. */
export interface UserDetail {
  roles: Array<{ name: string }>;
  factors: ApiFactor[];
  sessions: ApiSession[];
  organizations: Array<{ id: string; name: string; organizationRoles: Array<{ name: string }> }>;
}

/** How a user is called on a page: the first of name, username, email, phone, else the id. */
export const userLabel = (user: ApiUser) => user.name ?? user.username ?? user.primaryEmail ?? user.primaryPhone ?? user.id;

const when = (page: ConsolePage, at: number | null) => (at === null ? page.t.t('console.user.never') : momentOf(page, at));

const status = (page: ConsolePage, user: ApiUser) => page.t.t(user.isSuspended ? 'console.user.suspended' : 'console.user.active');

/** The list: Logto's search over users, a page at a time. */
export function usersPage(
  page: ConsolePage,
  {
    users,
    search,
    total,
    from,
    previous,
    next,
    notice,
  }: {
    users: ApiUser[];
    search: string;
    total: number;
    from: number;
    previous?: string | undefined;
    next?: string | undefined;
    notice?: string | undefined;
  },
): string {
  const { t, base } = page;
  const rows = users.map(
    (user) =>
      html`<tr>
        <td><a href="${base}/users/${encodeURIComponent(user.id)}">${userLabel(user)}</a></td>
        <td>${user.username ?? ''}</td>
        <td>${user.primaryEmail ?? ''}</td>
        <td>${user.primaryPhone ?? ''}</td>
        <td>${status(page, user)}</td>
      </tr>`,
  );
  const content = html`<form class="search" method="get" action="${base}/users" role="search">
      <label for="search">${t.t('console.users.search')} <span class="hint">${t.t('console.users.searchHint')}</span></label>
      <input id="search" name="search" type="text" autocomplete="off" value="${search}" maxlength="256" />
      <button type="submit">${t.t('console.users.search')}</button>
    </form>
    ${dataTable(page, [t.t('console.user.name'), t.t('field.username'), t.t('field.email'), t.t('field.phone'), t.t('console.user.status')], rows, t.t('console.users.empty'), t.t('console.users.count', { from, to: from + users.length - 1, total }))}
    ${pager(page, t.t('console.users.title'), { previous, next })}`;
  return consoleLayout({ ...page, section: 'users' }, { title: t.t('console.users.title'), notice }, content);
}

/** A part of the user's page: its heading, its table (or a sentence when there is nothing to list), and what follows. */
function section(page: ConsolePage, title: string, rows: Html[], head: string[], empty: string, after: Html | string = ''): Html {
  return html`<h2>${title}</h2>
    ${dataTable(page, head, rows, empty)} ${after}`;
}

/** One user: the profile, custom data, roles, factors, identities, organizations and sessions, and what may be done to each. */
export function userPage(
  page: ConsolePage,
  { user, detail, notice, generated }: { user: ApiUser; detail: UserDetail; notice?: string | undefined; generated?: string | undefined },
): string {
  const { t, base } = page;
  const path = `${base}/users/${encodeURIComponent(user.id)}`;
  const none = t.t('console.user.none');
  const fact = (label: string, value: unknown) =>
    html`<dt>${label}</dt>
      <dd>${value}</dd>`;
  const moment = (at: string | number | undefined) => (at === undefined ? '' : when(page, new Date(at).getTime()));
  const factors = detail.factors.map(
    (factor) =>
      html`<tr>
        <td>${factor.name ? `${factor.type} (${factor.name})` : factor.type}</td>
        <td>${moment(factor.createdAt)}</td>
        <td>${factor.lastUsedAt === undefined ? t.t('console.user.never') : moment(factor.lastUsedAt)}</td>
        <td><a href="${path}/factors/${encodeURIComponent(factor.id)}/remove">${t.t('console.user.factor.remove')}</a></td>
      </tr>`,
  );
  const identities = Object.entries(user.identities ?? {}).map(
    ([target, identity]) =>
      html`<tr>
        <td>${target}</td>
        <td><code>${identity.userId}</code></td>
        <td><a href="${path}/identities/${encodeURIComponent(target)}/unlink">${t.t('console.user.identity.unlink')}</a></td>
      </tr>`,
  );
  const organizations = detail.organizations.map(
    (organization) =>
      html`<tr>
        <td><a href="${base}/organizations/${encodeURIComponent(organization.id)}">${organization.name}</a></td>
        <td>${organization.organizationRoles.map(({ name }) => name).join(t.t('list.separator')) || none}</td>
      </tr>`,
  );
  const sessions = detail.sessions.map(
    (session) =>
      html`<tr>
        <td>${session.payload.loginTs ? when(page, session.payload.loginTs * 1000) : ''}</td>
        <td>${session.lastActiveAt ? when(page, Date.parse(session.lastActiveAt)) : ''}</td>
        <td>${[session.lastSubmission?.signInContext?.ip, session.lastSubmission?.signInContext?.userAgent].filter(Boolean).join(' · ')}</td>
        <td>${session.clientId ?? ''}</td>
        <td><a href="${path}/sessions/${encodeURIComponent(session.payload.uid)}/end">${t.t('console.user.session.end')}</a></td>
      </tr>`,
  );
  const customData = JSON.stringify(user.customData ?? {}, null, 2);
  const content = html`${
      generated
        ? html`<div class="reveal" role="status">
            <p>${t.t('console.user.password.once')}</p>
            <p><code class="secret">${generated}</code></p>
          </div>`
        : ''
    }
    <dl class="facts">
      ${fact(t.t('console.user.id'), user.id)} ${fact(t.t('field.username'), user.username ?? '')} ${fact(t.t('field.email'), user.primaryEmail ?? '')}
      ${fact(t.t('field.phone'), user.primaryPhone ?? '')} ${fact(t.t('console.user.name'), user.name ?? '')}
      ${fact(t.t('console.user.status'), status(page, user))}
      ${fact(t.t('console.user.roles'), detail.roles.length > 0 ? detail.roles.map(({ name }) => name).join(t.t('list.separator')) : none)}
      ${fact(t.t('console.user.created'), when(page, user.createdAt))} ${fact(t.t('console.user.lastSignIn'), when(page, user.lastSignInAt))}
      ${fact(t.t('console.user.customData'), customData === '{}' ? none : html`<pre class="excerpt">${customData}</pre>`)}
    </dl>
    <div class="actions">
      <a href="${path}/${user.isSuspended ? 'reactivate' : 'suspend'}" class="button"
        >${t.t(user.isSuspended ? 'console.user.reactivate' : 'console.user.suspend')}</a
      >
      ${user.isSuspended ? '' : html`<a href="${path}/impersonate" class="button">${t.t('console.impersonate')}</a>`}
      <a href="${path}/password" class="button">${t.t('console.user.password')}</a>
      <a href="${path}/delete" class="button">${t.t('console.user.delete')}</a>
    </div>
    ${section(page, t.t('console.user.factors'), factors, [t.t('console.application.type'), t.t('console.user.created'), t.t('console.user.lastUsed'), ''], none)}
    ${section(page, t.t('console.user.identities'), identities, [t.t('console.user.identity.target'), t.t('console.user.id'), ''], none)}
    ${section(page, t.t('console.user.organizations'), organizations, [t.t('console.user.name'), t.t('console.user.roles')], none)}
    ${section(
      page,
      t.t('console.user.sessions'),
      sessions,
      [t.t('console.user.session.started'), t.t('console.user.session.active'), t.t('console.user.session.from'), t.t('console.nav.applications'), ''],
      none,
      sessions.length > 0 ? html`<p><a class="button" href="${path}/sign-out-everywhere">${t.t('console.user.signOutEverywhere')}</a></p>` : '',
    )}
    <p>
      <a href="${base}/impersonations?${new URLSearchParams({ user: user.id }).toString()}">${t.t('console.user.impersonations')}</a> ·
      <a href="${base}/users">${t.t('console.back')}</a>
    </p>`;
  return consoleLayout({ ...page, section: 'users' }, { title: userLabel(user), notice }, content);
}

/**
 * The confirmation a change to a user asks for on its own page (no script): what will happen,
 * any field it needs, and the form that does it.
 */
export function confirmPage(
  page: ConsolePage,
  {
    user,
    action,
    title,
    lead,
    button,
    fields = '',
    error,
  }: { user: ApiUser; action: string; title: string; lead: string; button: string; fields?: Html | string; error?: string | undefined },
): string {
  const { t, base } = page;
  const path = `/users/${encodeURIComponent(user.id)}`;
  const content = html`<p>${lead}</p>
    ${postForm(
      page,
      `${path}/${action}`,
      html`${fields}
        <div class="actions">
          <button type="submit">${button}</button>
          <a href="${base}${path}">${t.t('action.cancel')}</a>
        </div>`,
    )}`;
  return consoleLayout({ ...page, section: 'users' }, { title, error }, content);
}
