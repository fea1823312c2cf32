import type Router from '@koa/router';

import { openApiWebhooks } from '../hooks/event-schemas.js';
import { successStatus, type GuardMiddleware, type GuardSchemas, type Schema } from '../lib/http/guard.js';

const errorBody = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, data: { type: 'object' } },
  required: ['code', 'message'],
};

const errorResponses = {
  400: 'The request is invalid: the message and `data.field` name the field.',
  401: 'The access token is missing or invalid.',
  403: 'The access token lacks the scope.',
  404: 'No such entity.',
  422: 'The request conflicts with existing data, or a partial update names no field it can change (`entity.invalid_input`).',
};

const isGuard = (middleware: unknown): middleware is Pick<GuardMiddleware, 'schemas'> => typeof middleware === 'function' && 'schemas' in middleware;

function parameters(where: 'path' | 'query', schema: Schema | undefined) {
  const properties = (schema?.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: property,
  }));
}

function operation(method: string, schemas: GuardSchemas, tag: string) {
  const status = String(successStatus(schemas, method));
  return {
    tags: [tag],
    ...(schemas.public && { security: [] }),
    parameters: [...parameters('path', schemas.params), ...parameters('query', schemas.query)],
    ...(schemas.body && { requestBody: { required: true, content: { 'application/json': { schema: schemas.body } } } }),
    responses: {
      [status]: schemas.response ? { description: 'Success', content: { 'application/json': { schema: schemas.response } } } : { description: 'Success' },
      ...Object.fromEntries(
        Object.entries(errorResponses).map(([code, description]) => [code, { description, content: { 'application/json': { schema: errorBody } } }]),
      ),
    },
  };
}

/**
 * The OpenAPI 3.1 document of the Management API, read off the router: every route's guard
 * carries the schemas that validate it, so the document cannot drift from the code.
 */
export function buildOpenApiDocument(router: Router, { serverUrl, version }: { serverUrl: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const layer of router.stack) {
    const guardMiddleware = (layer.stack as unknown[]).find(isGuard);
    if (!guardMiddleware || typeof layer.path !== 'string') continue;
    const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const tag = path.split('/')[2] ?? 'api';
    for (const method of layer.methods.filter((m) => m !== 'HEAD').map((m) => m.toLowerCase())) {
      paths[path] = { ...paths[path], [method]: operation(method, guardMiddleware.schemas, tag) };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'oidc-identity Management API', version },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    security: [{ bearer: [] }],
    paths,
    // What hooks are sent (OpenAPI 3.1): one JSON Schema per event, from the catalog.
    webhooks: openApiWebhooks(),
  };
}
