import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import { confirmedRoute } from './confirm.js';
import type { Answer, Dispatch } from './dispatch.js';
import { admittedOf, apiFieldOf, drawNotFound, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw, managementCaller } from './routing.js';
import {
  jsonObjectOf,
  consoleLayout,
  dataTable,
  errorAt,
  fieldError,
  invalidAttributes,
  postForm,
  textField,
  type ConsolePage,
  type FormError,
} from './views.js';

/** A connector factory as `GET /api/connector-factories` answers (Logto's shape). */
interface ApiFactory {
  id: string;
  target: string;
  name: { en: string };
  configTemplate: string;
  formItems: Array<{ key: string; type: string; required: boolean }>;
}

/** A social connector as `GET /api/connectors` answers: its configuration never holds the client secret. */
interface ApiConnector {
  id: string;
  connectorId: string;
  target: string;
  config: Record<string, unknown>;
  metadata: { name: { en: string } };
}

interface ConnectorDraft {
  connectorId: string;
  name: string;
  config: string;
  clientSecret: string;
  error?: FormError | undefined;
}

/** The form's field an API refusal is about: the configuration (its code says so), the factory, or the name. */
function connectorFieldOf(answer: Answer): string | undefined {
  const code = (answer.body as { code?: string } | undefined)?.code;
  if (code === 'connector.invalid_config') return 'config';
  if (code === 'connector.not_found') return 'connectorId';
  const field = apiFieldOf(answer);
  if (field?.startsWith('body.config')) return 'config';
  if (field?.startsWith('body.metadata')) return 'name';
  return undefined;
}

function connectorsPage(page: ConsolePage, connectors: ApiConnector[]): string {
  const { t, base } = page;
  const rows = connectors.map(
    (connector) =>
      html`<tr>
        <td><a href="${base}/connectors/${encodeURIComponent(connector.id)}">${connector.metadata.name.en}</a></td>
        <td><code>${connector.target}</code></td>
        <td>${connector.connectorId}</td>
      </tr>`,
  );
  const content = html`<p><a class="button" href="${base}/connectors/new">${t.t('console.connectors.create')}</a></p>
    ${dataTable(page, [t.t('console.user.name'), t.t('console.connector.target'), t.t('console.connector.factory')], rows, t.t('console.connectors.empty'))}`;
  return consoleLayout({ ...page, section: 'connectors' }, { title: t.t('console.connectors.title') }, content);
}

/** The configuration as JSON in a text area, with the client secret apart (write-only: never shown). */
function configFields(page: ConsolePage, draft: ConnectorDraft, { secretRequired }: { secretRequired: boolean }) {
  const { t } = page;
  const configError = errorAt(draft.error, 'config');
  return html`<label for="config">${t.t('console.connector.config')} <span class="hint">${t.t('console.connector.configHint')}</span></label>
    <textarea id="config" name="config" rows="12" spellcheck="false" ${invalidAttributes('config', configError)}>${draft.config}</textarea>
    ${fieldError('config', configError)}
    ${textField(
      'clientSecret',
      'clientSecret',
      `${t.t('console.connector.secret')} ${t.t(secretRequired ? 'console.impersonate.optional' : 'console.connector.secretKept')}`,
      {
        value: '',
        error: draft.error,
        type: 'password',
        maxLength: 2048,
      },
    )}`;
}

function newConnectorPage(page: ConsolePage, factories: ApiFactory[], draft: ConnectorDraft): string {
  const { t, base } = page;
  const factoryError = errorAt(draft.error, 'connectorId');
  const content = postForm(
    page,
    '/connectors/new',
    html`<label for="connectorId">${t.t('console.connector.factory')}</label>
      <select id="connectorId" name="connectorId" ${invalidAttributes('connectorId', factoryError)}>
        ${factories.map((factory) => html`<option value="${factory.id}" ${draft.connectorId === factory.id ? html`selected` : ''}>${factory.name.en}</option>`)}
      </select>
      ${fieldError('connectorId', factoryError)}
      ${textField('name', 'name', t.t('console.user.name'), { value: draft.name, error: draft.error, maxLength: 128 })}
      ${configFields(page, draft, { secretRequired: true })}
      <div class="actions">
        <button type="submit">${t.t('console.connectors.create')}</button>
        <a href="${base}/connectors">${t.t('action.cancel')}</a>
      </div>`,
  );
  const general = draft.error && !['connectorId', 'name', 'config', 'clientSecret'].includes(draft.error.field ?? '') ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'connectors' }, { title: t.t('console.connectors.create'), error: general }, content);
}

function connectorPage(page: ConsolePage, connector: ApiConnector, draft: ConnectorDraft, notice?: string): string {
  const { t, base } = page;
  const path = `/connectors/${encodeURIComponent(connector.id)}`;
  const content = html`<dl class="facts">
      <dt>${t.t('console.connector.factory')}</dt>
      <dd>${connector.connectorId}</dd>
      <dt>${t.t('console.connector.target')}</dt>
      <dd><code>${connector.target}</code></dd>
    </dl>
    ${postForm(
      page,
      path,
      html`${configFields(page, draft, { secretRequired: false })}
        <div class="actions"><button type="submit">${t.t('console.look.save')}</button></div>`,
    )}
    <div class="actions">
      <a class="button" href="${base}${path}/delete">${t.t('console.connector.delete')}</a>
      <a href="${base}/connectors">${t.t('console.back')}</a>
    </div>`;
  const general = draft.error && !['config', 'clientSecret'].includes(draft.error.field ?? '') ? draft.error.text : undefined;
  return consoleLayout({ ...page, section: 'connectors' }, { title: connector.metadata.name.en, notice, error: general }, content);
}

/** The configuration the form holds as an object; a form error at the field when it is not a JSON object. */
function parseConfig(page: ConsolePage, text: string): { config: Record<string, unknown> } | { error: FormError } {
  const config = jsonObjectOf(text);
  return config ? { config } : { error: { field: 'config', text: page.t.t('console.connector.notJson') } };
}

/**
 * Social connectors (Logto's `/api/connectors`): the list, adding one from a factory with its
 * configuration (JSON) and client secret (write-only), changing the configuration, deleting one.
 */
export function connectorRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api } = managementCaller(dispatch);
  const factoriesOf = async (ctx: ParameterizedContext) => (await api(ctx, 'GET', '/api/connector-factories')).body as ApiFactory[];
  async function connectorOf(ctx: ParameterizedContext): Promise<ApiConnector | undefined> {
    const found = await api(ctx, 'GET', `/api/connectors/${encodeURIComponent(ctx.params.connectorId!)}`);
    if (found.status === 200) return found.body as ApiConnector;
    drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.connector.notFound'), '/connectors');
    return undefined;
  }
  const shown = (connector: ApiConnector) => JSON.stringify(connector.config, null, 2);

  router.get('/connectors', admitted, async (ctx) => {
    const answer = await api(ctx, 'GET', '/api/connectors');
    if (answer.status !== 200) throw new Error(`the connectors could not be listed: ${answer.status} ${messageOf(answer)}`);
    draw(ctx, connectorsPage(admittedOf(ctx).page, answer.body as ApiConnector[]));
  });

  router.get('/connectors/new', admitted, async (ctx) => {
    const factories = await factoriesOf(ctx);
    const [first] = factories;
    // The first factory's template to start from; another factory's is in its documentation.
    const config = first ? JSON.stringify(JSON.parse(first.configTemplate), null, 2) : '{}';
    draw(ctx, newConnectorPage(admittedOf(ctx).page, factories, { connectorId: first?.id ?? '', name: '', config, clientSecret: '' }));
  });

  router.post('/connectors/new', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const fields = formOf(ctx);
    const draft: ConnectorDraft = {
      connectorId: fields.get('connectorId') ?? '',
      name: (fields.get('name') ?? '').trim(),
      config: fields.get('config') ?? '',
      clientSecret: fields.get('clientSecret') ?? '',
    };
    const parsed = parseConfig(page, draft.config);
    if ('error' in parsed) return draw(ctx, newConnectorPage(page, await factoriesOf(ctx), { ...draft, error: parsed.error }), 400);
    const answer = await api(ctx, 'POST', '/api/connectors', {
      connectorId: draft.connectorId,
      config: { ...parsed.config, ...(draft.clientSecret && { clientSecret: draft.clientSecret }) },
      ...(draft.name && { metadata: { name: { en: draft.name } } }),
    });
    if (answer.status >= 300) {
      return draw(
        ctx,
        newConnectorPage(page, await factoriesOf(ctx), { ...draft, error: { field: connectorFieldOf(answer), text: messageOf(answer) } }),
        refusedStatus(answer),
      );
    }
    seeOther(ctx, `/connectors/${encodeURIComponent((answer.body as ApiConnector).id)}`);
  });

  router.get('/connectors/:connectorId', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const connector = await connectorOf(ctx);
    if (!connector) return;
    const notice = ctx.query.done === 'saved' ? page.t.t('console.connector.saved') : undefined;
    draw(ctx, connectorPage(page, connector, { connectorId: connector.connectorId, name: '', config: shown(connector), clientSecret: '' }, notice));
  });

  // Logto's PATCH /api/connectors/:id: the configuration replaced; the client secret only when a new one is typed.
  router.post('/connectors/:connectorId', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const connector = await connectorOf(ctx);
    if (!connector) return;
    const fields = formOf(ctx);
    const draft: ConnectorDraft = {
      connectorId: connector.connectorId,
      name: '',
      config: fields.get('config') ?? '',
      clientSecret: fields.get('clientSecret') ?? '',
    };
    const parsed = parseConfig(page, draft.config);
    if ('error' in parsed) return draw(ctx, connectorPage(page, connector, { ...draft, error: parsed.error }), 400);
    const answer = await api(ctx, 'PATCH', `/api/connectors/${encodeURIComponent(connector.id)}`, {
      config: { ...parsed.config, ...(draft.clientSecret && { clientSecret: draft.clientSecret }) },
    });
    if (answer.status >= 300)
      return draw(
        ctx,
        connectorPage(page, connector, { ...draft, error: { field: connectorFieldOf(answer), text: messageOf(answer) } }),
        refusedStatus(answer),
      );
    seeOther(ctx, `/connectors/${encodeURIComponent(connector.id)}?done=saved`);
  });

  confirmedRoute(router, admitted, draw, '/connectors/:connectorId/delete', {
    load: connectorOf,
    describe: (ctx, connector) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'connectors',
        title: t.t('console.connector.delete.title', { connector: connector.metadata.name.en }),
        lead: t.t('console.connector.delete.lead'),
        button: t.t('console.connector.delete'),
        back: `/connectors/${encodeURIComponent(connector.id)}`,
      };
    },
    call: (ctx, connector) => api(ctx, 'DELETE', `/api/connectors/${encodeURIComponent(connector.id)}`),
    done: () => '/connectors',
  });
}
