import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import type { ImpersonationPolicy } from '../impersonation/policy.js';
import type { Dispatch } from './dispatch.js';
import type { ApiRole } from './role-views.js';
import { admittedOf, apiFieldOf, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw, managementCaller } from './routing.js';
import {
  jsonObjectOf,
  checkbox,
  consoleLayout,
  errorAt,
  fieldError,
  invalidAttributes,
  postForm,
  textField,
  type ConsolePage,
  type FormError,
} from './views.js';

/** The form: the policy, with the ceilings as the JSON the API takes and the TTL as typed. */
interface PolicyDraft extends Omit<ImpersonationPolicy, 'scopeCeilings' | 'maxTokenTtl'> {
  maxTokenTtl: string;
  scopeCeilings: string;
}

function policyPage(
  page: ConsolePage,
  draft: PolicyDraft,
  roles: ApiRole[],
  { notice, error }: { notice?: string | undefined; error?: FormError | undefined },
) {
  const { t, base } = page;
  const ceilingsError = errorAt(error, 'scopeCeilings');
  const content = html`<p>${t.t('console.policy.lead')}</p>
    ${postForm(
      page,
      '/impersonation-policy',
      html`<fieldset>
          <legend>${t.t('console.policy.demands')}</legend>
          ${checkbox('requireReason', 'yes', t.t('console.policy.requireReason'), draft.requireReason)}
          ${checkbox('requireTicketId', 'yes', t.t('console.policy.requireTicketId'), draft.requireTicketId)}
          ${checkbox('requireActorToken', 'yes', t.t('console.policy.requireActorToken'), draft.requireActorToken)}
        </fieldset>
        ${textField('maxTokenTtl', 'maxTokenTtl', t.t('console.policy.maxTokenTtl'), { value: draft.maxTokenTtl, error, required: true, maxLength: 6 })}
        <fieldset>
          <legend>${t.t('console.policy.protected')}</legend>
          ${roles.length === 0 ? html`<p>${t.t('console.roles.empty')}</p>` : roles.map((role) => checkbox('protectedRoleIds', role.id, role.name, draft.protectedRoleIds.includes(role.id)))}
        </fieldset>
        <label for="scopeCeilings">${t.t('console.policy.ceilings')} <span class="hint">${t.t('console.policy.ceilingsHint')}</span></label>
        <textarea id="scopeCeilings" name="scopeCeilings" rows="6" spellcheck="false" ${invalidAttributes('scopeCeilings', ceilingsError)}>
${draft.scopeCeilings}</textarea>
        ${fieldError('scopeCeilings', ceilingsError)}
        <div class="actions">
          <button type="submit">${t.t('console.look.save')}</button>
          <a href="${base}/impersonations">${t.t('console.audit.title')}</a>
        </div>`,
    )}`;
  const general = error && !['maxTokenTtl', 'scopeCeilings'].includes(error.field ?? '') ? error.text : undefined;
  return consoleLayout({ ...page, section: 'impersonations' }, { title: t.t('console.policy.title'), notice, error: general }, content);
}

/** The impersonation policy (`GET/PATCH /api/configs/impersonation`): what a subject token's request must say, its longest life, the protected roles, the scope ceilings. */
export function impersonationPolicyRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api, readAll } = managementCaller(dispatch);
  const userRoles = async (ctx: ParameterizedContext) => (await readAll<ApiRole>(ctx, '/api/roles?type=User')).filter(({ type }) => type === 'User');

  router.get('/impersonation-policy', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const answer = await api(ctx, 'GET', '/api/configs/impersonation');
    if (answer.status !== 200) throw new Error(`the impersonation policy could not be read: ${answer.status} ${messageOf(answer)}`);
    const policy = answer.body as ImpersonationPolicy;
    const draft: PolicyDraft = { ...policy, maxTokenTtl: String(policy.maxTokenTtl), scopeCeilings: JSON.stringify(policy.scopeCeilings, null, 2) };
    draw(ctx, policyPage(page, draft, await userRoles(ctx), { notice: ctx.query.done === 'saved' ? page.t.t('console.policy.saved') : undefined }));
  });

  router.post('/impersonation-policy', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const fields = formOf(ctx);
    const draft: PolicyDraft = {
      requireReason: fields.get('requireReason') === 'yes',
      requireTicketId: fields.get('requireTicketId') === 'yes',
      requireActorToken: fields.get('requireActorToken') === 'yes',
      maxTokenTtl: (fields.get('maxTokenTtl') ?? '').trim(),
      protectedRoleIds: fields.getAll('protectedRoleIds'),
      scopeCeilings: fields.get('scopeCeilings') ?? '',
    };
    const refuse = async (error: FormError, status = 400) => draw(ctx, policyPage(page, draft, await userRoles(ctx), { error }), status);
    const ceilings = jsonObjectOf(draft.scopeCeilings);
    if (!ceilings) return refuse({ field: 'scopeCeilings', text: page.t.t('console.policy.notJson') });
    const ttl = /^\d{1,6}$/.test(draft.maxTokenTtl) ? Number(draft.maxTokenTtl) : Number.NaN;
    const answer = await api(ctx, 'PATCH', '/api/configs/impersonation', {
      requireReason: draft.requireReason,
      requireTicketId: draft.requireTicketId,
      requireActorToken: draft.requireActorToken,
      // Not a whole number: the API's own refusal names the field.
      maxTokenTtl: Number.isNaN(ttl) ? draft.maxTokenTtl : ttl,
      protectedRoleIds: draft.protectedRoleIds,
      scopeCeilings: ceilings,
    });
    if (answer.status !== 200) {
      const field = apiFieldOf(answer) ?? '';
      return refuse(
        {
          field: field.startsWith('body.maxTokenTtl') ? 'maxTokenTtl' : field.startsWith('body.scopeCeilings') ? 'scopeCeilings' : undefined,
          text: messageOf(answer),
        },
        refusedStatus(answer),
      );
    }
    seeOther(ctx, '/impersonation-policy?done=saved');
  });
}
