import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { html } from '../experience/views/markup.js';
import type { ApiApplication } from './application-views.js';
import { confirmedRoute } from './confirm.js';
import type { Dispatch } from './dispatch.js';
import type { ApiRole } from './role-views.js';
import { admittedOf, apiFieldOf, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw, managementCaller } from './routing.js';
import { consoleLayout, postForm, textField, type ConsolePage, type FormError } from './views.js';

/** An application's own look on the sign-in pages, as the form holds it (empty: not set). */
interface Look {
  displayName: string;
  primaryColor: string;
  darkPrimaryColor: string;
  logoUrl: string;
  darkLogoUrl: string;
  termsOfUseUrl: string;
  privacyPolicyUrl: string;
}
const lookFields = ['displayName', 'primaryColor', 'darkPrimaryColor', 'logoUrl', 'darkLogoUrl', 'termsOfUseUrl', 'privacyPolicyUrl'] as const;

/** The form's field an API error names (`body.color.primaryColor` is `primaryColor`). */
const lookFieldOf = (field: string | undefined) => lookFields.find((name) => field !== undefined && field.split('.').includes(name));

function lookPage(page: ConsolePage, application: ApiApplication, look: Look, error?: FormError): string {
  const { t, base } = page;
  const path = `/applications/${encodeURIComponent(application.id)}`;
  const field = (name: (typeof lookFields)[number], maxLength = 2048) =>
    textField(name, name, t.t(`console.look.${name}`), {
      value: look[name],
      error,
      maxLength,
      type: name.endsWith('Color') || name === 'displayName' ? 'text' : 'url',
    });
  const content = html`<p>${t.t('console.look.lead')}</p>
    ${postForm(
      page,
      `${path}/look`,
      html`${field('displayName', 256)} ${field('primaryColor', 7)} ${field('darkPrimaryColor', 7)} ${field('logoUrl')} ${field('darkLogoUrl')}
        ${field('termsOfUseUrl')} ${field('privacyPolicyUrl')}
        <div class="actions">
          <button type="submit">${t.t('console.look.save')}</button>
          <a href="${base}${path}">${t.t('action.cancel')}</a>
        </div>`,
    )}`;
  const general = error && !error.field ? error.text : undefined;
  return consoleLayout({ ...page, section: 'applications' }, { title: t.t('console.look.title', { application: application.name }), error: general }, content);
}

/**
 * More of an application: its machine-to-machine roles (given from a list, each taken away after
 * confirming) and its own look on the sign-in pages (Logto's application sign-in experience).
 */
export function applicationSettingRoutes(
  router: Router,
  admitted: Admit,
  dispatch: Dispatch,
  draw: Draw,
  /** The application the route names, or undefined once its 404 page is drawn (`applications.ts`). */
  applicationOf: (ctx: ParameterizedContext) => Promise<ApiApplication | undefined>,
) {
  const { api } = managementCaller(dispatch);
  const at = (application: ApiApplication) => `/applications/${encodeURIComponent(application.id)}`;

  // Logto's POST /api/applications/:id/roles: a machine-to-machine role for the application (the API refuses a user role, or another type of application).
  router.post('/applications/:applicationId/roles', admitted, async (ctx) => {
    const application = await applicationOf(ctx);
    if (!application) return;
    const answer = await api(ctx, 'POST', `/api${at(application)}/roles`, { roleIds: [(formOf(ctx).get('roleId') ?? '').trim()] });
    if (answer.status >= 300) {
      const { page } = admittedOf(ctx);
      return draw(
        ctx,
        consoleLayout(
          { ...page, section: 'applications' },
          { title: application.name, error: messageOf(answer) },
          html`<p><a href="${page.base}${at(application)}">${page.t.t('console.back')}</a></p>`,
        ),
        refusedStatus(answer, { notFoundIsInput: true }),
      );
    }
    seeOther(ctx, `${at(application)}?done=role`);
  });

  confirmedRoute(router, admitted, draw, '/applications/:applicationId/roles/:roleId/remove', {
    load: applicationOf,
    describe: (ctx, application) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'applications',
        title: t.t('console.role.remove.title', { target: application.name, role: ctx.params.roleId! }),
        lead: t.t('console.role.remove.applications'),
        button: t.t('console.remove'),
        back: at(application),
      };
    },
    call: (ctx, application) => api(ctx, 'DELETE', `/api${at(application)}/roles/${encodeURIComponent(ctx.params.roleId!)}`),
    done: (_ctx, application) => at(application),
  });

  router.get('/applications/:applicationId/look', admitted, async (ctx) => {
    const application = await applicationOf(ctx);
    if (!application) return;
    const answer = await api(ctx, 'GET', `/api${at(application)}/sign-in-experience`);
    const stored = answer.status === 200 ? (answer.body as Record<string, any>) : {}; // eslint-disable-line @typescript-eslint/no-explicit-any
    const look: Look = {
      displayName: stored.displayName ?? '',
      primaryColor: stored.color?.primaryColor ?? '',
      darkPrimaryColor: stored.color?.darkPrimaryColor ?? '',
      logoUrl: stored.branding?.logoUrl ?? '',
      darkLogoUrl: stored.branding?.darkLogoUrl ?? '',
      termsOfUseUrl: stored.termsOfUseUrl ?? '',
      privacyPolicyUrl: stored.privacyPolicyUrl ?? '',
    };
    draw(ctx, lookPage(admittedOf(ctx).page, application, look));
  });

  // Logto's PUT /api/applications/:id/sign-in-experience: every field given; an empty one is unset.
  router.post('/applications/:applicationId/look', admitted, async (ctx) => {
    const application = await applicationOf(ctx);
    if (!application) return;
    const fields = formOf(ctx);
    const look = Object.fromEntries(lookFields.map((name) => [name, (fields.get(name) ?? '').trim()])) as unknown as Look;
    const orNull = (value: string) => (value === '' ? null : value);
    const answer = await api(ctx, 'PUT', `/api${at(application)}/sign-in-experience`, {
      displayName: orNull(look.displayName),
      color: { ...(look.primaryColor && { primaryColor: look.primaryColor }), ...(look.darkPrimaryColor && { darkPrimaryColor: look.darkPrimaryColor }) },
      branding: { ...(look.logoUrl && { logoUrl: look.logoUrl }), ...(look.darkLogoUrl && { darkLogoUrl: look.darkLogoUrl }) },
      termsOfUseUrl: orNull(look.termsOfUseUrl),
      privacyPolicyUrl: orNull(look.privacyPolicyUrl),
    });
    if (answer.status >= 300) {
      return draw(
        ctx,
        lookPage(admittedOf(ctx).page, application, look, { field: lookFieldOf(apiFieldOf(answer)), text: messageOf(answer) }),
        refusedStatus(answer),
      );
    }
    seeOther(ctx, `${at(application)}?done=look`);
  });
}

/** The roles section of a machine-to-machine application's page: what it holds, and giving it another. */
export function applicationRolesSection(page: ConsolePage, application: ApiApplication, held: ApiRole[], offered: ApiRole[]) {
  const { t, base } = page;
  const path = `/applications/${encodeURIComponent(application.id)}`;
  const holding = new Set(held.map(({ id }) => id));
  const more = offered.filter(({ id, type }) => type === 'MachineToMachine' && !holding.has(id));
  return html`<h2>${t.t('console.application.roles')}</h2>
    ${
      held.length === 0
        ? html`<p>${t.t('console.role.noneHeld')}</p>`
        : html`<ul class="plain">
            ${held.map(
              (role) =>
                html`<li>
                  <a href="${base}/roles/${encodeURIComponent(role.id)}">${role.name}</a> ·
                  <a href="${base}${path}/roles/${encodeURIComponent(role.id)}/remove">${t.t('console.remove')}</a>
                </li>`,
            )}
          </ul>`
    }
    ${
      more.length === 0
        ? ''
        : postForm(
            page,
            `${path}/roles`,
            html`<label for="roleId">${t.t('console.application.addRole')}</label>
              <select id="roleId" name="roleId">
                ${more.map((role) => html`<option value="${role.id}">${role.name}</option>`)}
              </select>
              <button type="submit">${t.t('console.application.addRole')}</button>`,
          )
    }`;
}
