import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import { confirmedRoute } from './confirm.js';
import type { Dispatch } from './dispatch.js';
import { admittedOf, apiFieldOf, drawNotFound, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw, managementCaller } from './routing.js';
import { jsonObjectOf, checkbox, consoleLayout, errorAt, fieldError, invalidAttributes, postForm, type ConsolePage, type FormError } from './views.js';

const types = ['access-token', 'client-credentials'] as const;
type CustomizerType = (typeof types)[number];

/** The form: the script, and the variables and samples as JSON text. */
interface CustomizerDraft {
  script: string;
  environmentVariables: string;
  tokenSample: string;
  contextSample: string;
  blockIssuanceOnError: boolean;
}
const jsonFields = ['environmentVariables', 'tokenSample', 'contextSample'] as const;

const starter = `const getCustomJwtClaims = async ({ token, context, environmentVariables, api }) => {
  return {};
};`;

function customizersPage(page: ConsolePage, stored: Record<CustomizerType, boolean>): string {
  const { t, base } = page;
  const content = html`<p>${t.t('console.claims.lead')}</p>
    <ul class="plain">
      ${types.map(
        (type) =>
          html`<li>
            <a href="${base}/jwt-customizers/${type}">${t.t(`console.claims.${type}`)}</a> ·
            ${t.t(stored[type] ? 'console.claims.set' : 'console.claims.unset')}
          </li>`,
      )}
    </ul>`;
  return consoleLayout({ ...page, section: 'jwt-customizers' }, { title: t.t('console.claims.title') }, content);
}

function customizerPage(
  page: ConsolePage,
  type: CustomizerType,
  draft: CustomizerDraft,
  { stored, notice, error, claims }: { stored: boolean; notice?: string | undefined; error?: FormError | undefined; claims?: string | undefined },
): string {
  const { t, base } = page;
  const area = (name: keyof Omit<CustomizerDraft, 'blockIssuanceOnError'>, rows: number) => {
    const text = errorAt(error, name);
    return html`<label for="${name}">${t.t(`console.claims.${name}`)}</label>
      <textarea id="${name}" name="${name}" rows="${rows}" spellcheck="false" ${invalidAttributes(name, text)}>${draft[name]}</textarea>
      ${fieldError(name, text)}`;
  };
  const content = html`<p>${t.t('console.claims.scriptLead')}</p>
    ${postForm(
      page,
      `/jwt-customizers/${type}`,
      html`${area('script', 14)} ${area('environmentVariables', 4)} ${area('tokenSample', 6)} ${area('contextSample', 6)}
        ${checkbox('blockIssuanceOnError', 'yes', t.t('console.claims.block'), draft.blockIssuanceOnError)}
        <div class="actions">
          <button type="submit" name="intent" value="test" class="secondary">${t.t('console.claims.test')}</button>
          <button type="submit" name="intent" value="save">${t.t('console.look.save')}</button>
        </div>`,
    )}
    ${
      claims === undefined
        ? ''
        : html`<h2>${t.t('console.claims.result')}</h2>
            <pre class="excerpt" role="status">${claims}</pre>`
    }
    <div class="actions">
      ${stored ? html`<a class="button" href="${base}/jwt-customizers/${type}/delete">${t.t('console.delete')}</a>` : ''}
      <a href="${base}/jwt-customizers">${t.t('console.back')}</a>
    </div>`;
  const general = error && !['script', ...jsonFields].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'jwt-customizers' }, { title: t.t(`console.claims.${type}`), notice, error: general }, content);
}

/**
 * The JWT customizers (Logto's `/api/configs/jwt-customizer`): a script per token type that adds
 * claims, its variables and samples; a dry run of the script as typed against the samples (the
 * claims it returns, or why it failed), saving it, deleting it.
 */
export function jwtCustomizerRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api } = managementCaller(dispatch);
  const typeOf = (ctx: ParameterizedContext): CustomizerType | undefined => {
    const type = types.find((name) => name === ctx.params.type);
    if (!type) drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.notFound.text'), '/jwt-customizers');
    return type;
  };

  router.get('/jwt-customizers', admitted, async (ctx) => {
    const answers = await Promise.all(types.map((type) => api(ctx, 'GET', `/api/configs/jwt-customizer/${type}`)));
    draw(ctx, customizersPage(admittedOf(ctx).page, { 'access-token': answers[0]!.status === 200, 'client-credentials': answers[1]!.status === 200 }));
  });

  router.get('/jwt-customizers/:type', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const type = typeOf(ctx);
    if (!type) return;
    const answer = await api(ctx, 'GET', `/api/configs/jwt-customizer/${type}`);
    const stored = answer.status === 200 ? (answer.body as Record<string, unknown>) : undefined;
    const json = (value: unknown) => JSON.stringify(value ?? {}, null, 2);
    const draft: CustomizerDraft = {
      script: typeof stored?.script === 'string' ? stored.script : starter,
      environmentVariables: json(stored?.environmentVariables),
      tokenSample: json(stored?.tokenSample),
      contextSample: json(stored?.contextSample),
      blockIssuanceOnError: stored?.blockIssuanceOnError === true,
    };
    draw(
      ctx,
      customizerPage(page, type, draft, { stored: stored !== undefined, notice: ctx.query.done === 'saved' ? page.t.t('console.claims.saved') : undefined }),
    );
  });

  // One form, two buttons: a dry run of what is typed (nothing saved), or saving it (Logto's PUT).
  router.post('/jwt-customizers/:type', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const type = typeOf(ctx);
    if (!type) return;
    const fields = formOf(ctx);
    const draft: CustomizerDraft = {
      script: fields.get('script') ?? '',
      environmentVariables: fields.get('environmentVariables') ?? '',
      tokenSample: fields.get('tokenSample') ?? '',
      contextSample: fields.get('contextSample') ?? '',
      blockIssuanceOnError: fields.get('blockIssuanceOnError') === 'yes',
    };
    const stored = (await api(ctx, 'GET', `/api/configs/jwt-customizer/${type}`)).status === 200;
    const refuse = (error: FormError, status = 400) => draw(ctx, customizerPage(page, type, draft, { stored, error }), status);
    const parsed: Record<string, Record<string, unknown>> = {};
    for (const name of jsonFields) {
      const value = jsonObjectOf(draft[name]);
      if (!value) return refuse({ field: name, text: page.t.t('console.connector.notJson') });
      parsed[name] = value;
    }
    const fieldOf = (field: string | undefined) => [...jsonFields, 'script'].find((name) => field?.startsWith(`body.${name}`));
    if (fields.get('intent') === 'test') {
      const answer = await api(ctx, 'POST', '/api/configs/jwt-customizer/test', {
        tokenType: type,
        script: draft.script,
        environmentVariables: parsed.environmentVariables,
        token: parsed.tokenSample,
        context: parsed.contextSample,
      });
      if (answer.status !== 200)
        return refuse({ field: fieldOf(apiFieldOf(answer)) ?? 'script', text: messageOf(answer) }, refusedStatus(answer) === 403 ? 400 : refusedStatus(answer));
      return draw(ctx, customizerPage(page, type, draft, { stored, claims: JSON.stringify(answer.body, null, 2) }));
    }
    const answer = await api(ctx, 'PUT', `/api/configs/jwt-customizer/${type}`, {
      script: draft.script,
      environmentVariables: parsed.environmentVariables,
      tokenSample: parsed.tokenSample,
      contextSample: parsed.contextSample,
      blockIssuanceOnError: draft.blockIssuanceOnError,
    });
    if (answer.status >= 300) return refuse({ field: fieldOf(apiFieldOf(answer)), text: messageOf(answer) }, refusedStatus(answer));
    seeOther(ctx, `/jwt-customizers/${type}?done=saved`);
  });

  confirmedRoute(router, admitted, draw, '/jwt-customizers/:type/delete', {
    load: async (ctx) => typeOf(ctx),
    describe: (ctx, type) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'jwt-customizers',
        title: t.t('console.claims.delete.title', { type: t.t(`console.claims.${type}`) }),
        lead: t.t('console.claims.delete.lead'),
        button: t.t('console.delete'),
        back: `/jwt-customizers/${type}`,
      };
    },
    call: (ctx, type) => api(ctx, 'DELETE', `/api/configs/jwt-customizer/${type}`),
    done: () => '/jwt-customizers',
  });
}
