import { html } from '../experience/views/markup.js';
import { consoleLayout, pager, postForm, type ConsolePage } from './views.js';

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
}

/** How a user is called on a page: the first of name, username, email, phone, else the id. */
export const userLabel = (user: ApiUser) => user.name ?? user.username ?? user.primaryEmail ?? user.primaryPhone ?? user.id;

const when = (page: ConsolePage, at: number | null) =>
  at === null ? page.t.t('console.user.never') : new Intl.DateTimeFormat(page.t.locale, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(at));

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
  }: { users: ApiUser[]; search: string; total: number; from: number; previous?: string | undefined; next?: string | undefined },
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
    ${
      users.length === 0
        ? html`<p>${t.t('console.users.empty')}</p>`
        : html`<div class="table">
            <table>
              <caption>
                ${t.t('console.users.count', { from, to: from + users.length - 1, total })}
              </caption>
              <thead>
                <tr>
                  <th scope="col">${t.t('console.user.name')}</th>
                  <th scope="col">${t.t('field.username')}</th>
                  <th scope="col">${t.t('field.email')}</th>
                  <th scope="col">${t.t('field.phone')}</th>
                  <th scope="col">${t.t('console.user.status')}</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>
          </div>`
    }
    ${pager(page, t.t('console.users.title'), { previous, next })}`;
  return consoleLayout({ ...page, section: 'users' }, { title: t.t('console.users.title') }, content);
}

/** One user: the profile, roles and factors, and what may be done. */
export function userPage(
  page: ConsolePage,
  { user, roles, factors, notice }: { user: ApiUser; roles: Array<{ name: string }>; factors: Array<{ type: string }>; notice?: string | undefined },
): string {
  const { t, base } = page;
  const path = `/users/${encodeURIComponent(user.id)}`;
  const fact = (label: string, value: unknown) =>
    html`<dt>${label}</dt>
      <dd>${value}</dd>`;
  const content = html`<dl class="facts">
      ${fact(t.t('console.user.id'), user.id)} ${fact(t.t('field.username'), user.username ?? '')} ${fact(t.t('field.email'), user.primaryEmail ?? '')}
      ${fact(t.t('field.phone'), user.primaryPhone ?? '')} ${fact(t.t('console.user.name'), user.name ?? '')}
      ${fact(t.t('console.user.status'), status(page, user))}
      ${fact(t.t('console.user.roles'), roles.length > 0 ? roles.map(({ name }) => name).join(t.t('list.separator')) : t.t('console.user.none'))}
      ${fact(t.t('console.user.factors'), factors.length > 0 ? [...new Set(factors.map(({ type }) => type))].join(t.t('list.separator')) : t.t('console.user.none'))}
      ${fact(t.t('console.user.created'), when(page, user.createdAt))} ${fact(t.t('console.user.lastSignIn'), when(page, user.lastSignInAt))}
    </dl>
    <div class="actions">
      <a href="${base}${path}/${user.isSuspended ? 'reactivate' : 'suspend'}" class="button"
        >${t.t(user.isSuspended ? 'console.user.reactivate' : 'console.user.suspend')}</a
      >
      ${user.isSuspended ? '' : html`<a href="${base}${path}/impersonate" class="button">${t.t('console.impersonate')}</a>`}
      <a href="${base}/impersonations?${new URLSearchParams({ user: user.id }).toString()}">${t.t('console.user.impersonations')}</a>
      <a href="${base}/users">${t.t('console.back')}</a>
    </div>`;
  return consoleLayout({ ...page, section: 'users' }, { title: userLabel(user), notice }, content);
}

/** The confirmation a destructive action asks for on its own page (no script): what will happen, and the form that does it. */
export function confirmPage(
  page: ConsolePage,
  { user, action, error }: { user: ApiUser; action: 'suspend' | 'reactivate'; error?: string | undefined },
): string {
  const { t, base } = page;
  const path = `/users/${encodeURIComponent(user.id)}`;
  const content = html`<p>${t.t(`console.user.${action}.lead`)}</p>
    ${postForm(
      page,
      `${path}/${action}`,
      html`<div class="actions">
        <button type="submit">${t.t(`console.user.${action}`)}</button>
        <a href="${base}${path}">${t.t('action.cancel')}</a>
      </div>`,
    )}`;
  return consoleLayout({ ...page, section: 'users' }, { title: t.t(`console.user.${action}.title`, { user: userLabel(user) }), error }, content);
}
