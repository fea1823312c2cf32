import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import type { Answer, Dispatch } from './dispatch.js';
import type { ApiRole } from './role-views.js';
import type { ConsoleStore } from './store.js';
import {
  applicationPage,
  applicationsPage,
  deleteApplicationPage,
  editApplicationPage,
  newApplicationPage,
  type ApiApplication,
  type ApplicationDraft,
} from './application-views.js';
import { applicationRolesSection, applicationSettingRoutes } from './application-settings.js';
import {
  admittedOf,
  apiFieldOf,
  drawNotFound,
  formOf as form,
  messageOf,
  refusedStatus,
  seeOther,
  type Admit,
  type Draw,
  noticeOf,
  managementCaller,
} from './routing.js';

/** The form's field a Management API error names (`data.field`: `body.name`, `body.oidcClientMetadata.redirectUris.0`). */
export function formFieldOf(answer: Answer): string | undefined {
  const field = apiFieldOf(answer);
  if (field === undefined) return undefined;
  if (field.startsWith('body.oidcClientMetadata.redirectUris')) return 'redirectUris';
  if (field.startsWith('body.oidcClientMetadata.postLogoutRedirectUris')) return 'postLogoutRedirectUris';
  return ({ 'body.name': 'name', 'body.type': 'type' } as Record<string, string>)[field];
}

/** A text area's lines, trimmed, the empty ones left out. */
export const linesOf = (text: string) =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);

/** The notices a redirect after a change names. */
const notices = { role: 'console.application.roleAdded', look: 'console.look.saved', edited: 'console.application.saved' } as const;

/** Applications: the list, creating one by type (its secret shown once), a new secret (shown once), deleting one (confirmed on its own page). */
export function applicationRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw, store: Pick<ConsoleStore, 'reveal' | 'takeReveal'>) {
  const { readAll } = managementCaller(dispatch);
  async function applicationOf(ctx: ParameterizedContext): Promise<ApiApplication | undefined> {
    const { session, page } = admittedOf(ctx);
    const found = await dispatch(ctx, session.userId, 'GET', `/api/applications/${encodeURIComponent(ctx.params.applicationId!)}`);
    if (found.status === 200) return found.body as ApiApplication;
    drawNotFound(ctx, draw, page.t.t('console.application.notFound'), '/applications');
    return undefined;
  }

  async function showApplication(ctx: ParameterizedContext, application: ApiApplication) {
    const { token, session, page } = admittedOf(ctx);
    const created = await store.takeReveal(token, session, application.id);
    const secrets = await dispatch(ctx, session.userId, 'GET', `/api/applications/${encodeURIComponent(application.id)}/secrets`);
    let roles;
    if (application.type === 'MachineToMachine') {
      const [held, offered] = await Promise.all([
        readAll<ApiRole>(ctx, `/api/applications/${encodeURIComponent(application.id)}/roles`),
        readAll<ApiRole>(ctx, '/api/roles?type=MachineToMachine'),
      ]);
      roles = applicationRolesSection(page, application, held, offered);
    }
    draw(
      ctx,
      applicationPage(page, {
        application,
        secrets: secrets.status === 200 ? (secrets.body as Array<{ name: string; createdAt: number }>) : [],
        created,
        roles,
        notice: noticeOf(ctx, notices),
      }),
    );
  }

  router.get('/applications', admitted, async (ctx) => {
    draw(ctx, applicationsPage(admittedOf(ctx).page, { applications: await readAll<ApiApplication>(ctx, '/api/applications') }));
  });

  router.get('/applications/new', admitted, (ctx) => {
    draw(ctx, newApplicationPage(admittedOf(ctx).page, { name: '', type: 'Traditional', redirectUris: '' }));
  });

  // Logto's POST /api/applications: a confidential application's first secret is in this answer only, and so on this page only.
  router.post('/applications/new', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const fields = form(ctx);
    const draft: ApplicationDraft = { name: fields.get('name') ?? '', type: fields.get('type') ?? '', redirectUris: fields.get('redirectUris') ?? '' };
    const redirectUris = linesOf(draft.redirectUris);
    const answer = await dispatch(ctx, session.userId, 'POST', '/api/applications', {
      name: draft.name,
      type: draft.type,
      ...(draft.type !== 'MachineToMachine' && { oidcClientMetadata: { redirectUris, postLogoutRedirectUris: [] } }),
    });
    if (answer.status !== 200) {
      draw(ctx, newApplicationPage(page, { ...draft, error: { field: formFieldOf(answer), text: messageOf(answer) } }), answer.status >= 500 ? 503 : 400);
      return;
    }
    const created = answer.body as ApiApplication & { secret?: string };
    if (created.secret) await store.reveal(admittedOf(ctx).token, session, { subject: created.id, name: 'Default secret', value: created.secret });
    ctx.status = 303;
    ctx.redirect(`${page.base}/applications/${encodeURIComponent(created.id)}`);
  });

  router.get('/applications/:applicationId', admitted, async (ctx) => {
    const application = await applicationOf(ctx);
    if (application) await showApplication(ctx, application);
  });

  // A new secret, named for when it was made; its value is on this page only.
  router.post('/applications/:applicationId/secrets', admitted, async (ctx) => {
    const { token, session, page } = admittedOf(ctx);
    const application = await applicationOf(ctx);
    if (!application) return;
    const name = `console ${new Date().toISOString()}`;
    const answer = await dispatch(ctx, session.userId, 'POST', `/api/applications/${encodeURIComponent(application.id)}/secrets`, { name });
    if (answer.status !== 201) throw new Error(`the secret could not be made: ${answer.status} ${messageOf(answer)}`);
    await store.reveal(token, session, { subject: application.id, name, value: (answer.body as { value: string }).value });
    ctx.status = 303;
    ctx.redirect(`${page.base}/applications/${encodeURIComponent(application.id)}`);
  });

  applicationSettingRoutes(router, admitted, dispatch, draw, applicationOf);

  router.get('/applications/:applicationId/edit', admitted, async (ctx) => {
    const application = await applicationOf(ctx);
    if (!application) return;
    const { redirectUris, postLogoutRedirectUris } = application.oidcClientMetadata;
    draw(
      ctx,
      editApplicationPage(admittedOf(ctx).page, application, {
        name: application.name,
        type: application.type,
        redirectUris: redirectUris.join('\n'),
        postLogoutRedirectUris: postLogoutRedirectUris.join('\n'),
      }),
    );
  });

  // Logto's PATCH /api/applications/:id: the name, and the URIs of an application a person signs in to.
  router.post('/applications/:applicationId/edit', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const application = await applicationOf(ctx);
    if (!application) return;
    const fields = form(ctx);
    const draft: ApplicationDraft = {
      name: (fields.get('name') ?? '').trim(),
      type: application.type,
      redirectUris: fields.get('redirectUris') ?? '',
      postLogoutRedirectUris: fields.get('postLogoutRedirectUris') ?? '',
    };
    const answer = await dispatch(ctx, session.userId, 'PATCH', `/api/applications/${encodeURIComponent(application.id)}`, {
      name: draft.name,
      ...(application.type !== 'MachineToMachine' && {
        oidcClientMetadata: { redirectUris: linesOf(draft.redirectUris), postLogoutRedirectUris: linesOf(draft.postLogoutRedirectUris ?? '') },
      }),
    });
    if (answer.status !== 200) {
      draw(ctx, editApplicationPage(page, application, { ...draft, error: { field: formFieldOf(answer), text: messageOf(answer) } }), refusedStatus(answer));
      return;
    }
    seeOther(ctx, `/applications/${encodeURIComponent(application.id)}?done=edited`);
  });

  router.get('/applications/:applicationId/delete', admitted, async (ctx) => {
    const application = await applicationOf(ctx);
    if (application) draw(ctx, deleteApplicationPage(admittedOf(ctx).page, { application }));
  });

  router.post('/applications/:applicationId/delete', admitted, async (ctx) => {
    const { session, page } = admittedOf(ctx);
    const application = await applicationOf(ctx);
    if (!application) return;
    const answer = await dispatch(ctx, session.userId, 'DELETE', `/api/applications/${encodeURIComponent(application.id)}`);
    if (answer.status !== 204) {
      draw(ctx, deleteApplicationPage(page, { application, error: messageOf(answer) }), answer.status >= 500 ? 503 : 400);
      return;
    }
    ctx.status = 303;
    ctx.redirect(`${page.base}/applications`);
  });
}
