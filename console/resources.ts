import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';

import { confirmedRoute } from './confirm.js';
import type { Dispatch } from './dispatch.js';
import { newResourcePage, resourcePage, resourcesPage, type ApiResource, type ApiScope } from './resource-views.js';
import { admittedOf, apiFieldOf, drawNotFound, formOf, messageOf, refusedStatus, seeOther, type Admit, type Draw, managementCaller } from './routing.js';

/**
 * API resources and their permissions: the list, creating one (name and indicator), its page with
 * its permissions, adding a permission, deleting one or the resource (each confirmed on its own
 * page). Through Logto's `/api/resources` routes.
 */
export function resourceRoutes(router: Router, admitted: Admit, dispatch: Dispatch, draw: Draw) {
  const { api, readAll } = managementCaller(dispatch);
  const resourcePath = (ctx: ParameterizedContext) => `/api/resources/${encodeURIComponent(ctx.params.resourceId!)}`;

  async function resourceOf(ctx: ParameterizedContext): Promise<ApiResource | undefined> {
    const found = await api(ctx, 'GET', resourcePath(ctx));
    if (found.status === 200) return found.body as ApiResource;
    drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.resource.notFound'), '/resources');
    return undefined;
  }
  const scopesOf = (ctx: ParameterizedContext, resource: ApiResource) => readAll<ApiScope>(ctx, `/api/resources/${encodeURIComponent(resource.id)}/scopes`);

  router.get('/resources', admitted, async (ctx) => {
    draw(ctx, resourcesPage(admittedOf(ctx).page, { resources: await readAll<ApiResource>(ctx, '/api/resources') }));
  });

  router.get('/resources/new', admitted, (ctx) => {
    draw(ctx, newResourcePage(admittedOf(ctx).page, { name: '', indicator: '' }));
  });

  router.post('/resources/new', admitted, async (ctx) => {
    const fields = formOf(ctx);
    const draft = { name: (fields.get('name') ?? '').trim(), indicator: (fields.get('indicator') ?? '').trim() };
    const answer = await api(ctx, 'POST', '/api/resources', draft);
    if (answer.status !== 201) {
      const field = { 'body.name': 'name', 'body.indicator': 'indicator' }[apiFieldOf(answer) ?? ''];
      return draw(ctx, newResourcePage(admittedOf(ctx).page, { ...draft, error: { field, text: messageOf(answer) } }), refusedStatus(answer));
    }
    seeOther(ctx, `/resources/${encodeURIComponent((answer.body as ApiResource).id)}`);
  });

  router.get('/resources/:resourceId', admitted, async (ctx) => {
    const { page } = admittedOf(ctx);
    const resource = await resourceOf(ctx);
    if (!resource) return;
    const notice = ctx.query.done === 'permission' ? page.t.t('console.resource.permissionAdded') : undefined;
    draw(ctx, resourcePage(page, { resource, scopes: await scopesOf(ctx, resource), notice }));
  });

  // Logto's POST /api/resources/:id/scopes: a permission of the resource.
  router.post('/resources/:resourceId/permissions', admitted, async (ctx) => {
    const resource = await resourceOf(ctx);
    if (!resource) return;
    const fields = formOf(ctx);
    const draft = { name: (fields.get('name') ?? '').trim(), description: (fields.get('description') ?? '').trim() };
    const answer = await api(ctx, 'POST', `${resourcePath(ctx)}/scopes`, { name: draft.name, ...(draft.description && { description: draft.description }) });
    if (answer.status !== 201) {
      const field = { 'body.name': 'permission-name', 'body.description': 'permission-description' }[apiFieldOf(answer) ?? ''];
      const scopes = await scopesOf(ctx, resource);
      return draw(
        ctx,
        resourcePage(admittedOf(ctx).page, { resource, scopes, draft: { ...draft, error: { field, text: messageOf(answer) } } }),
        refusedStatus(answer),
      );
    }
    seeOther(ctx, `/resources/${encodeURIComponent(resource.id)}?done=permission`);
  });

  confirmedRoute(router, admitted, draw, '/resources/:resourceId/permissions/:scopeId/delete', {
    load: async (ctx) => {
      const resource = await resourceOf(ctx);
      const scope = resource && (await scopesOf(ctx, resource)).find(({ id }) => id === ctx.params.scopeId);
      if (resource && !scope)
        drawNotFound(ctx, draw, admittedOf(ctx).page.t.t('console.resource.noSuchPermission'), `/resources/${encodeURIComponent(resource.id)}`);
      return scope && { resource, scope };
    },
    describe: (ctx, { resource, scope }) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'resources',
        title: t.t('console.resource.deletePermission.title', { permission: scope.name }),
        lead: t.t('console.resource.deletePermission.lead'),
        button: t.t('console.delete'),
        back: `/resources/${encodeURIComponent(resource.id)}`,
      };
    },
    call: (ctx, { resource, scope }) => api(ctx, 'DELETE', `/api/resources/${encodeURIComponent(resource.id)}/scopes/${encodeURIComponent(scope.id)}`),
    done: (_ctx, { resource }) => `/resources/${encodeURIComponent(resource.id)}`,
  });

  confirmedRoute(router, admitted, draw, '/resources/:resourceId/delete', {
    load: resourceOf,
    describe: (ctx, resource) => {
      const { t } = admittedOf(ctx).page;
      return {
        section: 'resources',
        title: t.t('console.resource.delete.title', { resource: resource.name }),
        lead: t.t('console.resource.delete.lead'),
        button: t.t('console.resource.delete'),
        back: `/resources/${encodeURIComponent(resource.id)}`,
      };
    },
    call: (ctx, resource) => api(ctx, 'DELETE', `/api/resources/${encodeURIComponent(resource.id)}`),
    done: () => '/resources',
  });
}
