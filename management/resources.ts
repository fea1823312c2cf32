import { refusingDuplicates } from '../lib/store/entities.js';
import { createOwnerLocks } from '../lib/store/owner-lock.js';
import { ApiError, assertThat } from '../lib/errors.js';
import { guard } from '../lib/http/guard.js';
import { generateId } from '../lib/ids.js';
import { withId, type ResourceDocument, type ScopeDocument } from '../lib/store/models.js';
import { pageOf, pageOrAll, setPageHeaders } from '../lib/http/pagination.js';
import { originOf } from './origin.js';
import type { ApiRouter, ManagementDeps } from './deps.js';
import { idParams, paginationQuery } from './schemas/common.js';
import { resourceCreateSchema, resourcePatchSchema, resourceResponse, scopeCreateSchema, scopePatchSchema } from './schemas/resources.js';
import { scopeResponse } from '../lib/shapes.js';

const defaultAccessTokenTtl = 3600;

// Logto's codes (packages/core/src/routes/resource.ts): the Management API's resource is not changed through it.
const builtIn = (resource: ResourceDocument) =>
  new ApiError('resource.cannot_modify_management_api', `\`${resource.name}\` is built in and cannot be changed through the API`);

export function resourceRoutes(router: ApiRouter, deps: ManagementDeps) {
  const {
    queries: { resources },
  } = deps;
  const withOwnerLock = createOwnerLocks(deps.database.db);
  const indicatorTaken = (indicator: string) => () =>
    new ApiError('resource.resource_identifier_in_use', `a resource with indicator \`${indicator}\` exists already`);
  const scopeTaken = (name: string) => () => new ApiError('scope.name_exists', `this resource has a scope named \`${name}\` already`);

  async function writableResource(id: string) {
    const resource = await resources.findByIdOrThrow(id);
    assertThat(!resource.isBuiltIn, () => builtIn(resource));
    return resource;
  }

  router.get(
    '/resources',
    guard({ query: paginationQuery({ includeScopes: { enum: ['true', 'false'] } }), response: { type: 'array', items: resourceResponse } }),
    async (ctx) => {
      const { includeScopes, ...pagination } = ctx.guard.query;
      // Paging is optional here, as Logto's (resource.ts).
      const page = pageOrAll(pagination, { optional: true });
      const [total, found] = await Promise.all([page && resources.count(), resources.find(page)]);
      setPageHeaders(ctx, page, total);
      if (includeScopes !== 'true') {
        ctx.body = found.map(withId);
        return;
      }
      const scopes = await resources.scopes.findForResources(found.map(({ _id }) => _id));
      ctx.body = found.map((resource) => ({
        ...withId(resource),
        scopes: scopes.filter(({ resourceId }) => resourceId === resource._id).map(withId),
      }));
    },
  );

  router.post('/resources', guard({ body: resourceCreateSchema, response: resourceResponse, status: 201 }), async (ctx) => {
    const { body } = ctx.guard;
    const resource: ResourceDocument = {
      _id: generateId(),
      name: body.name,
      indicator: body.indicator,
      isDefault: false,
      accessTokenTtl: body.accessTokenTtl ?? defaultAccessTokenTtl,
      createdAt: Date.now(),
    };
    await refusingDuplicates(
      () =>
        deps.write(originOf(ctx), async ({ record }) => {
          await resources.insert(resource);
          record({ entity: 'Resource', action: 'created', id: resource._id, data: withId(resource) });
        }),
      indicatorTaken(body.indicator),
    );
    ctx.body = { ...withId(resource), scopes: [] };
  });

  router.get('/resources/:id', guard({ params: idParams('id'), response: resourceResponse }), async (ctx) => {
    ctx.body = withId(await resources.findByIdOrThrow(ctx.guard.params.id));
  });

  router.patch('/resources/:id', guard({ params: idParams('id'), body: resourcePatchSchema, response: resourceResponse }), async (ctx) => {
    const {
      params: { id },
      body,
    } = ctx.guard;
    await writableResource(id);
    const updated = await deps.write(originOf(ctx), async ({ record }) => {
      const after = await resources.update(id, body);
      record({ entity: 'Resource', action: 'updated', id, data: withId(after) });
      return after;
    });
    ctx.body = withId(updated);
  });

  // Logto's default API resource (resource.ts): at most one; marking one unmarks the other, each change announced.
  // One change at a time, in every process, so that two concurrent marks cannot leave two defaults.
  router.patch(
    '/resources/:id/is-default',
    guard({
      params: idParams('id'),
      body: { type: 'object', properties: { isDefault: { type: 'boolean' } }, required: ['isDefault'], additionalProperties: false },
      response: resourceResponse,
    }),
    async (ctx) => {
      const {
        params: { id },
        body: { isDefault },
      } = ctx.guard;
      await writableResource(id);
      const updated = await withOwnerLock('default-resource', () =>
        deps.write(originOf(ctx), async ({ record }) => {
          if (isDefault) {
            for (const other of await resources.findOtherDefaults(id)) {
              const after = await resources.update(other._id, { isDefault: false });
              record({ entity: 'Resource', action: 'updated', id: other._id, data: withId(after) });
            }
          }
          const after = await resources.update(id, { isDefault });
          record({ entity: 'Resource', action: 'updated', id, data: withId(after) });
          return after;
        }),
      );
      ctx.body = withId(updated);
    },
  );

  router.delete('/resources/:id', guard({ params: idParams('id') }), async (ctx) => {
    const { id } = ctx.guard.params;
    await writableResource(id);
    await deps.write(originOf(ctx), async ({ record }) => {
      const before = await resources.delete(id);
      record({ entity: 'Resource', action: 'deleted', id, data: withId(before) });
    });
    ctx.status = 204;
  });

  router.get(
    '/resources/:resourceId/scopes',
    guard({ params: idParams('resourceId'), query: paginationQuery(), response: { type: 'array', items: scopeResponse } }),
    async (ctx) => {
      const {
        params: { resourceId },
        query,
      } = ctx.guard;
      await resources.findByIdOrThrow(resourceId);
      const page = pageOf(query);
      const [total, found] = await Promise.all([resources.scopes.countForResource(resourceId), resources.scopes.findForResource(resourceId, page)]);
      setPageHeaders(ctx, page, total);
      ctx.body = found.map(withId);
    },
  );

  router.post(
    '/resources/:resourceId/scopes',
    guard({ params: idParams('resourceId'), body: scopeCreateSchema, response: scopeResponse, status: 201 }),
    async (ctx) => {
      const {
        params: { resourceId },
        body,
      } = ctx.guard;
      await writableResource(resourceId);
      const scope: ScopeDocument = {
        _id: generateId(),
        resourceId,
        name: body.name,
        description: body.description ?? null,
        createdAt: Date.now(),
      };
      await refusingDuplicates(
        () =>
          deps.write(originOf(ctx), async ({ intend, record }) => {
            await intend({ entity: 'Scope', action: 'created', id: scope._id });
            await resources.scopes.insert(scope);
            record({ entity: 'Scope', action: 'created', id: scope._id, data: withId(scope) });
          }),
        scopeTaken(body.name),
      );
      ctx.body = withId(scope);
    },
  );

  router.patch(
    '/resources/:resourceId/scopes/:scopeId',
    guard({ params: idParams('resourceId', 'scopeId'), body: scopePatchSchema, response: scopeResponse }),
    async (ctx) => {
      const {
        params: { resourceId, scopeId },
        body,
      } = ctx.guard;
      await writableResource(resourceId);
      const updated = await refusingDuplicates(
        () =>
          deps.write(originOf(ctx), async ({ intend, record }) => {
            await intend({ entity: 'Scope', action: 'updated', id: scopeId });
            const after = await resources.scopes.update(resourceId, scopeId, body);
            record({ entity: 'Scope', action: 'updated', id: scopeId, data: withId(after) });
            return after;
          }),
        scopeTaken(body.name ?? ''),
      );
      ctx.body = withId(updated);
    },
  );

  router.delete('/resources/:resourceId/scopes/:scopeId', guard({ params: idParams('resourceId', 'scopeId') }), async (ctx) => {
    const { resourceId, scopeId } = ctx.guard.params;
    await writableResource(resourceId);
    await deps.write(originOf(ctx), async ({ intend, record }) => {
      await intend({ entity: 'Scope', action: 'deleted', id: scopeId });
      const before = await resources.scopes.delete(resourceId, scopeId);
      record({ entity: 'Scope', action: 'deleted', id: scopeId, data: withId(before) });
    });
    ctx.status = 204;
  });
}
