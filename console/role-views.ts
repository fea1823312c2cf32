import { html } from '../experience/views/markup.js';
import type { ApiApplication } from './application-views.js';
import type { ApiResource, ApiScope } from './resource-views.js';
import { userLabel, type ApiUser } from './user-views.js';
import { firstOf, consoleLayout, dataTable, errorAt, fieldError, invalidAttributes, postForm, textField, type ConsolePage, type FormError } from './views.js';

/** A role as the Management API answers one. */
export interface ApiRole {
  id: string;
  name: string;
  description: string;
  type: 'User' | 'MachineToMachine';
}

export const roleTypes = ['User', 'MachineToMachine'] as const;

const typeLabel = (page: ConsolePage, type: string) => page.t.t(type === 'MachineToMachine' ? 'console.role.type.MachineToMachine' : 'console.role.type.User');

export function rolesPage(page: ConsolePage, { roles }: { roles: ApiRole[] }): string {
  const { t, base } = page;
  const rows = roles.map(
    (role) =>
      html`<tr>
        <td><a href="${base}/roles/${encodeURIComponent(role.id)}">${role.name}</a></td>
        <td>${typeLabel(page, role.type)}</td>
        <td>${role.description}</td>
      </tr>`,
  );
  const content = html`<p><a class="button" href="${base}/roles/new">${t.t('console.roles.create')}</a></p>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.application.type'), t.t('console.resource.description')], rows, t.t('console.roles.empty'))}`;
  return consoleLayout({ ...page, section: 'roles' }, { title: t.t('console.roles.title') }, content);
}

export function newRolePage(page: ConsolePage, draft: { name: string; description: string; type: string; error?: FormError | undefined }): string {
  const { t, base } = page;
  const typeError = errorAt(draft.error, 'type');
  const content = postForm(
    page,
    '/roles/new',
    html`${textField('name', 'name', t.t('console.user.name'), { value: draft.name, error: draft.error, required: true, maxLength: 128 })}
      ${textField('description', 'description', t.t('console.resource.description'), { value: draft.description, error: draft.error, maxLength: 2048 })}
      <label for="type">${t.t('console.application.type')}</label>
      <select id="type" name="type" ${invalidAttributes('type', typeError)}>
        ${roleTypes.map((type) => html`<option value="${type}" ${draft.type === type ? html`selected` : ''}>${typeLabel(page, type)}</option>`)}
      </select>
      ${fieldError('type', typeError)}
      <div class="actions">
        <button type="submit">${t.t('console.roles.create')}</button>
        <a href="${base}/roles">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = draft.error && !['name', 'description', 'type'].includes(draft.error.field ?? '') ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'roles' }, { title: t.t('console.roles.create'), error: general }, content);
}

/** What a role's page shows: its permissions, who holds it, and what may be added. */
export interface RoleDetail {
  role: ApiRole;
  scopes: ApiScope[];
  resources: ApiResource[];
  /** Every permission of every resource: what may be added (those held are left out). */
  assignable: ApiScope[];
  /** The first 100 holders, and how many there are. */
  users: ApiUser[];
  applications: ApiApplication[];
  holders: number;
  /** Machine-to-machine applications that do not hold it yet. */
  candidates: ApiApplication[];
}

/** One role: its permissions (added from a list of every resource's), its users or applications (added by id or from a list), each removed after confirming. */
export function rolePage(
  page: ConsolePage,
  detail: RoleDetail,
  { notice, error }: { notice?: string | undefined; error?: FormError | undefined } = {},
): string {
  const { t, base } = page;
  const { role } = detail;
  const path = `/roles/${encodeURIComponent(role.id)}`;
  const resourceName = new Map(detail.resources.map(({ id, name }) => [id, name]));
  const remove = (href: string) => html`<a href="${base}${path}/${href}">${t.t('console.remove')}</a>`;
  const permissions = detail.scopes.map(
    (scope) =>
      html`<tr>
        <td>${resourceName.get(scope.resourceId) ?? scope.resourceId}</td>
        <td><code>${scope.name}</code></td>
        <td>${remove(`permissions/${encodeURIComponent(scope.id)}/remove`)}</td>
      </tr>`,
  );
  const held = new Set(detail.scopes.map(({ id }) => id));
  const byResource = detail.resources
    .map((resource) => ({ resource, scopes: detail.assignable.filter((scope) => scope.resourceId === resource.id && !held.has(scope.id)) }))
    .filter(({ scopes }) => scopes.length > 0);
  const permissionError = errorAt(error, 'scopeId');
  const addPermission =
    byResource.length === 0
      ? ''
      : postForm(
          page,
          `${path}/permissions`,
          html`<fieldset>
            <legend>${t.t('console.role.addPermission')}</legend>
            <label for="scopeId">${t.t('console.resource.permissions')}</label>
            <select id="scopeId" name="scopeId" ${invalidAttributes('scopeId', permissionError)}>
              ${byResource.map(
                ({ resource, scopes }) =>
                  html`<optgroup label="${resource.name}">${scopes.map((scope) => html`<option value="${scope.id}">${scope.name}</option>`)}</optgroup>`,
              )}
            </select>
            ${fieldError('scopeId', permissionError)}
            <button type="submit">${t.t('console.role.addPermission')}</button>
          </fieldset>`,
        );
  const holders =
    role.type === 'User'
      ? html`<h2>${t.t('console.role.users')}</h2>
          ${dataTable(
            page,
            [t.t('console.user.name'), t.t('console.user.id'), ''],
            detail.users.map(
              (user) =>
                html`<tr>
                  <td><a href="${base}/users/${encodeURIComponent(user.id)}">${userLabel(user)}</a></td>
                  <td><code>${user.id}</code></td>
                  <td>${remove(`users/${encodeURIComponent(user.id)}/remove`)}</td>
                </tr>`,
            ),
            t.t('console.role.noUsers'),
            firstOf(page, detail.users.length, detail.holders),
          )}
          ${postForm(
            page,
            `${path}/users`,
            html`<fieldset>
              <legend>${t.t('console.role.addUser')}</legend>
              ${textField('userId', 'userId', t.t('console.role.userId'), { value: '', error, required: true, maxLength: 128 })}
              <button type="submit">${t.t('console.role.addUser')}</button>
            </fieldset>`,
          )}`
      : html`<h2>${t.t('console.role.applications')}</h2>
          ${dataTable(
            page,
            [t.t('console.user.name'), t.t('console.user.id'), ''],
            detail.applications.map(
              (application) =>
                html`<tr>
                  <td><a href="${base}/applications/${encodeURIComponent(application.id)}">${application.name}</a></td>
                  <td><code>${application.id}</code></td>
                  <td>${remove(`applications/${encodeURIComponent(application.id)}/remove`)}</td>
                </tr>`,
            ),
            t.t('console.role.noApplications'),
            firstOf(page, detail.applications.length, detail.holders),
          )}
          ${
            detail.candidates.length === 0
              ? ''
              : postForm(
                  page,
                  `${path}/applications`,
                  html`<fieldset>
                    <legend>${t.t('console.role.addApplication')}</legend>
                    <label for="applicationId">${t.t('console.nav.applications')}</label>
                    <select id="applicationId" name="applicationId">
                      ${detail.candidates.map((application) => html`<option value="${application.id}">${application.name}</option>`)}
                    </select>
                    <button type="submit">${t.t('console.role.addApplication')}</button>
                  </fieldset>`,
                )
          }`;
  const content = html`<dl class="facts">
      <dt>${t.t('console.user.id')}</dt>
      <dd><code>${role.id}</code></dd>
      <dt>${t.t('console.application.type')}</dt>
      <dd>${typeLabel(page, role.type)}</dd>
      <dt>${t.t('console.resource.description')}</dt>
      <dd>${role.description}</dd>
    </dl>
    <h2>${t.t('console.resource.permissions')}</h2>
    ${dataTable(page, [t.t('console.nav.resources'), t.t('console.user.name'), ''], permissions, t.t('console.resource.noPermissions'))} ${addPermission}
    ${holders}
    <div class="actions">
      <a class="button" href="${base}${path}/delete">${t.t('console.role.delete')}</a>
      <a href="${base}/roles">${t.t('console.back')}</a>
    </div>`;
  const general = error && !['scopeId', 'userId'].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'roles' }, { title: role.name, notice, error: general }, content);
}
