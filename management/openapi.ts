import type Router from '@koa/router';

import { openApiWebhooks } from '../hooks/event-schemas/index.js';
import { successStatus, type GuardMiddleware, type GuardSchemas, type Schema } from '../lib/http/guard.js';

const errorBody = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, data: { type: 'object' } },
  required: ['code', 'message'],
};

const errorResponses = {
  400: 'The request is invalid: `code` names the problem, the message and `data.field` the field.',
  401: 'The access token is missing or invalid.',
  403: 'The access token lacks the scope (the message names it).',
  404: 'No such entity.',
  422: 'The request conflicts with existing data, or a partial update names no field it can change (`entity.invalid_input`).',
  503: 'The database cannot be reached now (`database.unavailable`, with `Retry-After`).',
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

const words = (segment: string) =>
  segment
    .replace(/[-_]/g, ' ')
    .replace(/\bsso\b/g, 'SSO')
    .replace(/\boidc\b/g, 'OIDC')
    .replace(/\bmfa\b/g, 'MFA');
/** `users` → `user`, `identities` → `identity`, `deliveries` → `delivery`; what is not plural stays. */
const singular = (noun: string) => (/ies$/.test(noun) ? noun.replace(/ies$/, 'y') : /(ss|us)$/.test(noun) ? noun : noun.replace(/s$/, ''));
const article = (noun: string) => (/^[aeiou]/i.test(noun) && !/^(user|use|one)/i.test(noun) ? 'an' : 'a');
/** Path segments that name an action rather than a resource (`POST .../rotate`). */
const actions = new Set(['rotate', 'revoke', 'test', 'redeliver', 'replay', 'recover', 'verify', 'authorization-uri', 'bootstrap']);

/**
 * A summary read off the route, for those that do not give their own: what the method does to the
 * resource the path names, and whose it is when it is nested (`GET /users/{userId}/roles`: "List
 * the roles of a user").
 */
export function summaryOf(method: string, path: string): string {
  const segments = path
    .replace(/^\/api\/?/, '')
    .split('/')
    .filter(Boolean);
  const isParam = (segment: string | undefined) => segment?.startsWith('{') ?? false;
  const last = segments.at(-1);
  const onItem = isParam(last);
  const nouns = segments.filter((segment) => !isParam(segment));
  const resource = nouns.at(-1) ?? 'API';
  const owners = nouns.slice(0, -1).filter((_, index, all) => isParam(segments[segments.indexOf(all[index]!) + 1]));
  const owner = owners.at(-1);
  const of = owner ? ` of ${article(singular(words(owner)))} ${singular(words(owner))}` : '';
  const thing = words(resource);
  if (!onItem && actions.has(resource) && method !== 'get') {
    const target = nouns.at(-2) ? singular(words(nouns.at(-2)!)) : 'it';
    return `${thing.charAt(0).toUpperCase()}${thing.slice(1)} ${article(target)} ${target}`;
  }
  switch (method) {
    case 'get':
      return onItem ? `Get ${article(singular(thing))} ${singular(thing)}${of}` : `List the ${thing}${of}`;
    case 'post':
      if (onItem) return `Act on ${article(singular(thing))} ${singular(thing)}${of}`;
      // A relation of an owner gets entries added; a collection gets one created.
      return owner ? `Add ${thing} to ${article(singular(words(owner)))} ${singular(words(owner))}` : `Create ${article(singular(thing))} ${singular(thing)}`;
    case 'put':
      return onItem ? `Replace ${article(singular(thing))} ${singular(thing)}${of}` : `Replace the ${thing}${of}`;
    case 'patch':
      return onItem ? `Update ${article(singular(thing))} ${singular(thing)}${of}` : `Update the ${thing}${of}`;
    case 'delete':
      return onItem ? `Delete ${article(singular(thing))} ${singular(thing)}${of}` : `Delete the ${thing}${of}`;
    default:
      return `${method.toUpperCase()} ${path}`;
  }
}

/** A stable id for each operation, from its method and path: `GET /api/users/{userId}/roles` is `getUsersByUserIdRoles`. */
export function operationIdOf(method: string, path: string): string {
  const pascal = (text: string) => text.replace(/(^|[-_.])([a-zA-Z0-9])/g, (_, _sep: string, letter: string) => letter.toUpperCase());
  const parts = path
    .replace(/^\/api\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith('{') ? `By${pascal(segment.slice(1, -1))}` : pascal(segment)));
  return `${method}${parts.join('') || 'Root'}`;
}

function operation(method: string, path: string, schemas: GuardSchemas, tag: string) {
  const status = String(successStatus(schemas, method));
  const scopes = schemas.public ? [] : (schemas.scopes ?? ['all']);
  return {
    operationId: operationIdOf(method, path),
    summary: schemas.summary ?? summaryOf(method, path),
    tags: [tag],
    ...(schemas.public ? { security: [] } : { security: scopes.map((scope) => ({ managementApi: [scope] })), 'x-scopes': scopes }),
    parameters: [...parameters('path', schemas.params), ...parameters('query', schemas.query)],
    ...(schemas.body && { requestBody: { required: !schemas.bodyOptional, content: { 'application/json': { schema: schemas.body } } } }),
    responses: {
      [status]: schemas.response ? { description: 'Success', content: { 'application/json': { schema: schemas.response } } } : { description: 'Success' },
      ...Object.fromEntries(
        Object.entries(errorResponses)
          .filter(([code]) => !schemas.public || !['401', '403'].includes(code))
          .map(([code, description]) => [code, { description, content: { 'application/json': { schema: errorBody } } }]),
      ),
    },
  };
}

/**
 * The OpenAPI 3.1 document of the Management API, read off the router: every route's guard
 * carries the schemas that validate it, so the document cannot drift from the code. Each
 * operation has an id, a summary, the scopes any one of which it needs (`x-scopes`, and as
 * OAuth 2.0 security requirements), and its error answers; `webhooks` holds each event's schema.
 */
export function buildOpenApiDocument(router: Router, { serverUrl, version, tokenUrl }: { serverUrl: string; version: string; tokenUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const layer of router.stack) {
    const guardMiddleware = (layer.stack as unknown[]).find(isGuard);
    if (!guardMiddleware || typeof layer.path !== 'string') continue;
    const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    // Grouped by the first segment after /api (the API reference's own documents as `reference`).
    const first = path.split('/')[2] ?? 'api';
    const tag = first.endsWith('.json') ? 'reference' : first;
    for (const method of layer.methods.filter((m) => m !== 'HEAD').map((m) => m.toLowerCase())) {
      paths[path] = { ...paths[path], [method]: operation(method, path, guardMiddleware.schemas, tag) };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'oidc-identity Management API',
      version,
      description:
        'Every route but the few marked public needs a bearer access token from the client credentials grant for this API, with the scope the operation names.',
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        managementApi: {
          type: 'oauth2',
          description: 'A client_credentials access token for the Management API resource (`<BASE_URL>/api`).',
          flows: {
            clientCredentials: {
              tokenUrl,
              scopes: {
                all: 'Every Management API route',
                impersonation: 'Issue subject tokens and revoke impersonations, nothing else',
                'hook-events': 'Read the webhook event feed, nothing else',
              },
            },
          },
        },
      },
    },
    security: [{ managementApi: ['all'] }],
    paths,
    // What hooks are sent (OpenAPI 3.1): one JSON Schema per event, from the catalog.
    webhooks: openApiWebhooks(),
  };
}
