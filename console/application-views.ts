import { html, type Html } from '../experience/views/markup.js';
import { consoleLayout, dataTable, fieldError, invalidAttributes, postForm, type ConsolePage } from './views.js';

/** An application as the Management API answers one, as far as the pages read it. */
export interface ApiApplication {
  id: string;
  name: string;
  type: 'Traditional' | 'SPA' | 'Native' | 'MachineToMachine';
  isThirdParty: boolean;
  oidcClientMetadata: { redirectUris: string[]; postLogoutRedirectUris: string[] };
  createdAt: number;
}

export const applicationTypes = ['Traditional', 'SPA', 'Native', 'MachineToMachine'] as const;

/** What a create form held, and what the API said was wrong with it (the field's id and the text). */
export interface ApplicationDraft {
  name: string;
  type: string;
  redirectUris: string;
  /** When editing: where a sign-out may return to, one per line. */
  postLogoutRedirectUris?: string;
  error?: { field?: string | undefined; text: string } | undefined;
}

const typeLabel = (page: ConsolePage, type: string) =>
  (applicationTypes as readonly string[]).includes(type) ? page.t.t(`console.application.type.${type as ApiApplication['type']}`) : type;

/** A field's reason, tied to its input (`aria-describedby`), when the last submit failed because of it. */
const errorAt = (draft: ApplicationDraft, id: string) => fieldError(id, draft.error?.field === id ? draft.error.text : undefined);
const invalid = (draft: ApplicationDraft, id: string) => invalidAttributes(id, draft.error?.field === id ? draft.error.text : undefined);

export function applicationsPage(page: ConsolePage, { applications }: { applications: ApiApplication[] }): string {
  const { t, base } = page;
  const content = html`<p><a href="${base}/applications/new" class="button">${t.t('console.applications.create')}</a></p>
    ${dataTable(
      page,
      [t.t('console.user.name'), t.t('console.application.type'), t.t('console.user.id')],
      applications.map(
        (application) =>
          html`<tr>
            <td><a href="${base}/applications/${encodeURIComponent(application.id)}">${application.name}</a></td>
            <td>${typeLabel(page, application.type)}</td>
            <td><code>${application.id}</code></td>
          </tr>`,
      ),
      t.t('console.user.none'),
    )}`;
  return consoleLayout({ ...page, section: 'applications' }, { title: t.t('console.applications.title') }, content);
}

/** The edit form: the name, and for those a person signs in to, the redirect URIs and the sign-out ones. */
export function editApplicationPage(page: ConsolePage, application: ApiApplication, draft: ApplicationDraft): string {
  const { t, base } = page;
  const path = `/applications/${encodeURIComponent(application.id)}`;
  const signsIn = application.type !== 'MachineToMachine';
  const content = postForm(
    page,
    `${path}/edit`,
    html`<label for="name">${t.t('console.user.name')}</label>
      <input id="name" name="name" type="text" autocomplete="off" required maxlength="256" value="${draft.name}" ${invalid(draft, 'name')} />
      ${errorAt(draft, 'name')}
      ${
        signsIn
          ? html`<label for="redirectUris">${t.t('console.application.redirectUris')} <span class="hint">${t.t('console.application.onePerLine')}</span></label>
              <textarea id="redirectUris" name="redirectUris" rows="3" ${invalid(draft, 'redirectUris')}>${draft.redirectUris}</textarea>
              ${errorAt(draft, 'redirectUris')}
              <label for="postLogoutRedirectUris"
                >${t.t('console.application.postLogoutRedirectUris')} <span class="hint">${t.t('console.application.onePerLine')}</span></label
              >
              <textarea id="postLogoutRedirectUris" name="postLogoutRedirectUris" rows="3" ${invalid(draft, 'postLogoutRedirectUris')}>
${draft.postLogoutRedirectUris ?? ''}</textarea>
              ${errorAt(draft, 'postLogoutRedirectUris')}`
          : ''
      }
      <div class="actions">
        <button type="submit">${t.t('console.look.save')}</button>
        <a href="${base}${path}">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = draft.error && !draft.error.field ? draft.error.text : undefined;
  return consoleLayout(
    { ...page, section: 'applications' },
    { title: t.t('console.application.edit.title', { application: application.name }), error: general },
    content,
  );
}

/** The create form: a name, a type, and (for those a person signs in to) redirect URIs, one per line. */
export function newApplicationPage(page: ConsolePage, draft: ApplicationDraft): string {
  const { t } = page;
  const content = postForm(
    page,
    '/applications/new',
    html`<label for="name">${t.t('console.user.name')}</label>
      <input id="name" name="name" type="text" autocomplete="off" required maxlength="256" value="${draft.name}" ${invalid(draft, 'name')} />
      ${errorAt(draft, 'name')}
      <label for="type">${t.t('console.application.type')}</label>
      <select id="type" name="type" ${invalid(draft, 'type')}>
        ${applicationTypes.map((type) => html`<option value="${type}" ${draft.type === type ? html`selected` : ''}>${typeLabel(page, type)}</option>`)}
      </select>
      ${errorAt(draft, 'type')}
      <label for="redirectUris">${t.t('console.application.redirectUris')} <span class="hint">${t.t('console.application.redirectUrisHint')}</span></label>
      <textarea id="redirectUris" name="redirectUris" rows="3" ${invalid(draft, 'redirectUris')}>${draft.redirectUris}</textarea>
      ${errorAt(draft, 'redirectUris')}
      <div class="actions">
        <button type="submit">${t.t('console.applications.create')}</button>
        <a href="${page.base}/applications">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = draft.error && !draft.error.field ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'applications' }, { title: t.t('console.applications.create'), error: general }, content);
}

/** One application: what it is, its secrets by name, and what may be done. */
export function applicationPage(
  page: ConsolePage,
  {
    application,
    secrets,
    created,
    roles = '',
    notice,
  }: {
    application: ApiApplication;
    secrets: Array<{ name: string; createdAt: number }>;
    created?: { name: string; value: string } | undefined;
    /** A machine-to-machine application's roles section. */
    roles?: Html | string;
    notice?: string | undefined;
  },
): string {
  const { t, base } = page;
  const path = `/applications/${encodeURIComponent(application.id)}`;
  const confidential = application.type === 'Traditional' || application.type === 'MachineToMachine';
  const content = html`${
      created
        ? html`<div class="notice" role="status">
            <p>${t.t('console.application.secretOnce', { name: created.name })}</p>
            <p><code class="secret">${created.value}</code></p>
          </div>`
        : ''
    }
    <dl class="facts">
      <dt>${t.t('console.user.id')}</dt>
      <dd><code>${application.id}</code></dd>
      <dt>${t.t('console.application.type')}</dt>
      <dd>${typeLabel(page, application.type)}</dd>
      <dt>${t.t('console.application.redirectUris')}</dt>
      <dd>
        ${
          application.oidcClientMetadata.redirectUris.length > 0
            ? html`<ul class="plain">
                ${application.oidcClientMetadata.redirectUris.map((uri) => html`<li>${uri}</li>`)}
              </ul>`
            : t.t('console.user.none')
        }
      </dd>
      ${
        confidential
          ? html`<dt>${t.t('console.application.secrets')}</dt>
              <dd>${secrets.length > 0 ? secrets.map(({ name }) => name).join(t.t('list.separator')) : t.t('console.user.none')}</dd>`
          : ''
      }
    </dl>
    ${
      confidential
        ? postForm(
            page,
            `${path}/secrets`,
            html`<div class="actions">
              <button type="submit">${t.t('console.application.newSecret')}</button>
            </div>`,
          )
        : ''
    }
    ${roles}
    <div class="actions">
      <a href="${base}${path}/edit" class="button">${t.t('console.application.edit')}</a>
      <a href="${base}${path}/look" class="button">${t.t('console.look.edit')}</a>
      <a href="${base}${path}/delete" class="button secondary">${t.t('console.application.delete')}</a>
      <a href="${base}/applications">${t.t('console.back')}</a>
    </div>`;
  return consoleLayout({ ...page, section: 'applications' }, { title: application.name, notice }, content);
}

export function deleteApplicationPage(page: ConsolePage, { application, error }: { application: ApiApplication; error?: string | undefined }): string {
  const { t, base } = page;
  const path = `/applications/${encodeURIComponent(application.id)}`;
  const content = html`<p>${t.t('console.application.delete.lead')}</p>
    ${postForm(
      page,
      `${path}/delete`,
      html`<div class="actions">
        <button type="submit">${t.t('console.application.delete')}</button>
        <a href="${base}${path}">${t.t('action.cancel')}</a>
      </div>`,
    )}`;
  return consoleLayout(
    { ...page, section: 'applications' },
    { title: t.t('console.application.delete.title', { application: application.name }), error },
    content,
  );
}
