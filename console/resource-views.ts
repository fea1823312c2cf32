import { html } from '../experience/views/markup.js';
import { consoleLayout, dataTable, postForm, textField, type ConsolePage, type FormError } from './views.js';

/** An API resource as the Management API answers one. */
export interface ApiResource {
  id: string;
  name: string;
  indicator: string;
  isDefault: boolean;
  accessTokenTtl: number;
}

/** A permission (a scope of an API resource). */
export interface ApiScope {
  id: string;
  resourceId: string;
  name: string;
  description: string | null;
}

export function resourcesPage(page: ConsolePage, { resources }: { resources: ApiResource[] }): string {
  const { t, base } = page;
  const rows = resources.map(
    (resource) =>
      html`<tr>
        <td><a href="${base}/resources/${encodeURIComponent(resource.id)}">${resource.name}</a></td>
        <td><code>${resource.indicator}</code></td>
        <td>${resource.isDefault ? t.t('console.resource.default') : ''}</td>
      </tr>`,
  );
  const content = html`<p><a class="button" href="${base}/resources/new">${t.t('console.resources.create')}</a></p>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.resource.indicator'), ''], rows, t.t('console.resources.empty'))}`;
  return consoleLayout({ ...page, section: 'resources' }, { title: t.t('console.resources.title') }, content);
}

export function newResourcePage(page: ConsolePage, { name, indicator, error }: { name: string; indicator: string; error?: FormError | undefined }): string {
  const { t, base } = page;
  const content = postForm(
    page,
    '/resources/new',
    html`${textField('name', 'name', t.t('console.user.name'), { value: name, error, required: true })}
      ${textField('indicator', 'indicator', `${t.t('console.resource.indicator')} ${t.t('console.resource.indicatorHint')}`, {
        value: indicator,
        error,
        required: true,
        maxLength: 2048,
      })}
      <div class="actions">
        <button type="submit">${t.t('console.resources.create')}</button>
        <a href="${base}/resources">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = error && !['name', 'indicator'].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'resources' }, { title: t.t('console.resources.create'), error: general }, content);
}

/** One API resource: what it is, its permissions (added here, each removed after confirming), and deleting it. */
export function resourcePage(
  page: ConsolePage,
  {
    resource,
    scopes,
    draft = { name: '', description: '' },
    notice,
  }: { resource: ApiResource; scopes: ApiScope[]; draft?: { name: string; description: string; error?: FormError }; notice?: string | undefined },
): string {
  const { t, base } = page;
  const path = `/resources/${encodeURIComponent(resource.id)}`;
  const rows = scopes.map(
    (scope) =>
      html`<tr>
        <td><code>${scope.name}</code></td>
        <td>${scope.description ?? ''}</td>
        <td><a href="${base}${path}/permissions/${encodeURIComponent(scope.id)}/delete">${t.t('console.delete')}</a></td>
      </tr>`,
  );
  const content = html`<dl class="facts">
      <dt>${t.t('console.resource.indicator')}</dt>
      <dd><code>${resource.indicator}</code></dd>
      <dt>${t.t('console.resource.tokenTtl')}</dt>
      <dd>${t.t('console.resource.seconds', { seconds: resource.accessTokenTtl })}</dd>
      <dt>${t.t('console.resource.default')}</dt>
      <dd>${t.t(resource.isDefault ? 'console.yes' : 'console.no')}</dd>
    </dl>
    <h2>${t.t('console.resource.permissions')}</h2>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.resource.description'), ''], rows, t.t('console.resource.noPermissions'))}
    ${postForm(
      page,
      `${path}/permissions`,
      html`<fieldset>
        <legend>${t.t('console.resource.addPermission')}</legend>
        ${textField('permission-name', 'name', t.t('console.user.name'), { value: draft.name, error: draft.error, required: true })}
        ${textField('permission-description', 'description', t.t('console.resource.description'), { value: draft.description, error: draft.error })}
        <button type="submit">${t.t('console.resource.addPermission')}</button>
      </fieldset>`,
    )}
    <div class="actions">
      <a class="button" href="${base}${path}/delete">${t.t('console.resource.delete')}</a>
      <a href="${base}/resources">${t.t('console.back')}</a>
    </div>`;
  const general = draft.error && !draft.error.field ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'resources' }, { title: resource.name, notice, error: general }, content);
}
