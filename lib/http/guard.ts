import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { DefaultState, Middleware } from 'koa';

import { ApiError } from '../errors.js';
import { createSchemaCache } from '../schema-cache.js';
import { addWebUrlFormats } from './web-origin.js';

/** JSON Schema, as ajv and OpenAPI 3.1 both read it. */
export type Schema = Record<string, unknown>;

/** A schema written `as const`, from which the type of the values it admits is read. */
export type TypedSchema = Exclude<JSONSchema, boolean>;

/** What a schema admits, as a type: a route's values are typed by the schema that checks them, never by a hand-kept interface. */
export type Admitted<S> = S extends TypedSchema ? FromSchema<S> : undefined;

export interface GuardSchemas {
  params?: TypedSchema;
  query?: TypedSchema;
  body?: TypedSchema;
  /** A request without a body is taken as `{}` (every field of `body` is optional). */
  bodyOptional?: boolean;
  /** A PATCH that names no field reaches the handler (where Logto answers the entity as it is) instead of 422. */
  emptyPatch?: boolean;
  /** Shapes the response: fields the schema does not name are removed, so a stored secret cannot leak. */
  response?: Schema;
  /** The success status this route answers with. */
  status?: number;
  /** Answers without a token (documentation only: authentication is the router's business). */
  public?: boolean;
  /** Scopes any one of which the caller's token must carry; `all` unless given. */
  scopes?: string[];
  /** The operation's summary in the API reference, when the one read off its method and path would not say it well. */
  summary?: string;
}

/** An object schema with exactly these fields, each required. */
export const exactObject = <const P extends Record<string, TypedSchema>>(properties: P) =>
  ({ type: 'object', properties, required: Object.keys(properties) as Array<keyof P & string>, additionalProperties: false }) as const;

/** What `guard` leaves on the context: the checked values, typed by the schemas that checked them. */
export interface Guarded<S extends GuardSchemas> {
  guard: { params: Admitted<S['params']>; query: Admitted<S['query']>; body: Admitted<S['body']> };
}

export type GuardMiddleware<S extends GuardSchemas = GuardSchemas> = Middleware<DefaultState, Guarded<S>> & { schemas: GuardSchemas };

/** The status a route answers with when it succeeds: the declared one, else 204 for a delete and 200 otherwise. */
export const successStatus = (schemas: GuardSchemas, method: string) => schemas.status ?? (method.toLowerCase() === 'delete' ? 204 : 200);

/**
 * Free-form objects (custom data, metadata) may not have keys that MongoDB would read as
 * operators or paths, nor `__proto__`, and may not nest without end.
 */
const maxDepth = 16;
function hasUnsafeKey(value: unknown, depth = 0): string | undefined {
  if (depth > maxDepth) return 'nests too deeply';
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = hasUnsafeKey(item, depth + 1);
      if (problem) return problem;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      // `__proto__` too: merged with a careless Object.assign it would replace a prototype.
      if (key.startsWith('$') || key.includes('.') || key.includes('\0') || key === '__proto__') return `has a key that is not allowed (\`${key}\`)`;
      const problem = hasUnsafeKey(item, depth + 1);
      if (problem) return problem;
    }
  }
  return undefined;
}

function addKeywords(ajv: Ajv): Ajv {
  addWebUrlFormats(ajv);
  ajv.addKeyword({
    keyword: 'x-safe-keys',
    errors: true,
    validate: function safeKeys(_enabled: boolean, data: unknown, _schema?: unknown, context?: { instancePath: string }) {
      const problem = hasUnsafeKey(data);
      if (problem) {
        const error: ErrorObject = { keyword: 'x-safe-keys', message: problem, params: {}, instancePath: context?.instancePath ?? '', schemaPath: '' };
        (safeKeys as ValidateFunction).errors = [error];
        return false;
      }
      return true;
    },
  });
  return ajv;
}

/*
 * Bodies are JSON and are taken as sent; path and query values are strings and are coerced.
 * A field a schema does not name is dropped, not refused, as Logto's guard does (zod strips
 * unknown keys): a client written for a newer Logto still works, and since only the fields a
 * schema names ever reach a handler, nothing can be mass-assigned. Objects that are free-form
 * by design (custom data) say `additionalProperties: true` and are kept whole.
 */
const bodyAjv = addKeywords(new Ajv({ allErrors: false, strict: false, removeAdditional: true }));
const stringAjv = addKeywords(new Ajv({ allErrors: false, strict: false, coerceTypes: 'array', useDefaults: true, removeAdditional: true }));
const responseAjv = addWebUrlFormats(new Ajv({ allErrors: false, strict: false, removeAdditional: true }));

/**
 * A response schema names every field an answer may carry: objects that list their properties
 * drop any other (ajv's `removeAdditional`), so a stored field never leaks by accident. Objects
 * without a property list (custom data) are kept as they are.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const entries = Object.entries(schema).map(([key, value]) => [key, key === 'enum' || key === 'required' ? value : closed(value)]);
  const result = Object.fromEntries(entries) as Record<string, unknown>;
  if ('properties' in result && !('additionalProperties' in result)) result.additionalProperties = false;
  return result;
}

/** The failing field as a dotted path (`body.oidcClientMetadata.redirectUris.0`) and a sentence about it. */
function describe(where: string, error: ErrorObject): { field: string; message: string } {
  const path = `${where}${error.instancePath.replaceAll('/', '.')}`;
  switch (error.keyword) {
    case 'required': {
      const field = `${path}.${(error.params as { missingProperty: string }).missingProperty}`;
      return { field, message: `${field} is required` };
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ');
      return { field: path, message: `${path} must be one of ${allowed}` };
    }
    default:
      return { field: path, message: `${path} ${error.message ?? 'is invalid'}` };
  }
}

/**
 * Compiling a schema costs a few milliseconds and the API has hundreds: each is compiled when a
 * route using it first runs (or when `compileAllGuards` asks), so a start does not pay for routes it
 * never serves; and once per process, shared by every app it makes (`createSchemaCache`).
 */
const compiledSchemas = createSchemaCache();

/** Compiles every schema of every route declared so far, as their first requests would, and answers how many there are: a schema ajv refuses throws here. */
export function compileAllGuards(): number {
  let count = 0;
  for (const compile of compiledSchemas.all()) {
    compile();
    count += 1;
  }
  return count;
}

function validator(ajv: Ajv, where: string, schema: TypedSchema | undefined) {
  if (!schema) return (value: unknown) => value;
  const compiled = compiledSchemas.compiled(ajv, schema as Schema);
  return (value: unknown) => {
    const validate = compiled();
    if (!validate(value)) {
      const { field, message } = describe(where, validate.errors![0]);
      // Logto's code for a bad `page` or `page_size` (koa-pagination.ts).
      const code = field === 'query.page' || field === 'query.page_size' ? 'guard.invalid_pagination' : 'guard.invalid_input';
      throw new ApiError(code, message, { field });
    }
    return value;
  };
}

/**
 * A partial update (a PATCH whose body names fields and requires none) that names no field it
 * knows would change nothing: Logto answers it 422 `entity.invalid_input`, and so do we.
 */
function isPartialUpdate(schema: TypedSchema | undefined): boolean {
  if (!schema || typeof schema !== 'object' || !('properties' in schema)) return false;
  const required = (schema as { required?: unknown[] }).required;
  return !required || required.length === 0;
}

/** A NUL character in a path or a search is never meant, and MongoDB refuses it in a pattern: 400, not 500. */
function rejectNul(where: string, values: Record<string, unknown>) {
  for (const [name, value] of Object.entries(values)) {
    if ((Array.isArray(value) ? value : [value]).some((item) => typeof item === 'string' && item.includes('\u0000'))) {
      throw new ApiError('guard.invalid_input', `${where}.${name} must not contain a NUL character`, { field: `${where}.${name}` });
    }
  }
}

/**
 * Validates a route's path parameters, query and body against schemas compiled once,
 * when the route first runs, and leaves the values on `ctx.guard`. A request that fails
 * is answered 400 with the field named, before the handler (and so any write) runs.
 */
export function guard<const S extends GuardSchemas>(schemas: S): GuardMiddleware<S> {
  const checkParams = validator(stringAjv, 'params', schemas.params);
  const checkQuery = validator(stringAjv, 'query', schemas.query);
  const checkBody = validator(bodyAjv, 'body', schemas.body);
  const partial = !schemas.emptyPatch && isPartialUpdate(schemas.body);
  const response = schemas.response;
  const shapeResponse = response ? compiledSchemas.compiled(responseAjv, closed(response) as Schema) : undefined;

  const scopes = schemas.public ? [] : (schemas.scopes ?? ['all']);
  const middleware: Middleware<DefaultState, Guarded<S> & { params?: Record<string, string> }> = async (ctx, next) => {
    // Least privilege: a token with a narrow scope (`impersonation`) opens only the routes that name it.
    const held = ctx.state.auth?.scopes;
    if (scopes.length > 0 && !scopes.some((scope) => held?.has(scope))) {
      throw new ApiError('auth.forbidden', `the access token lacks the required scope (${scopes.join(' or ')})`);
    }
    // Writes record it as the status of the request that made them (webhook payloads carry it).
    ctx.state.successStatus = successStatus(schemas, ctx.method);
    rejectNul('params', ctx.params ?? {});
    rejectNul('query', ctx.query);
    // The casts are what the validators just proved.
    ctx.guard = {
      params: checkParams({ ...ctx.params }) as Admitted<S['params']>,
      query: checkQuery({ ...ctx.query }) as Admitted<S['query']>,
      body: checkBody(ctx.request.body ?? (schemas.bodyOptional ? {} : undefined)) as Admitted<S['body']>,
    };
    if (partial && ctx.method === 'PATCH' && Object.keys(ctx.guard.body ?? {}).length === 0) {
      throw new ApiError('entity.invalid_input', 'the body names no field this route can change', { field: 'body' });
    }
    await next();
    if (schemas.status && ctx.status === 200 && schemas.status !== 200) ctx.status = schemas.status;
    // A response that does not fit its schema is our bug; the shaping still removes unknown fields.
    const shape = shapeResponse?.();
    if (shape && ctx.body !== undefined && !shape(ctx.body)) {
      throw new ApiError('internal_error', `response of ${ctx.method} ${ctx.path} does not fit its schema: ${responseAjv.errorsText(shape.errors)}`);
    }
  };
  return Object.assign(middleware as Middleware<DefaultState, Guarded<S>>, { schemas });
}
