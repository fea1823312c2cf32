/**
 * The API's OpenAPI 3.1 document as OpenAPI 3.0, for the tools and clients that read only 3.0
 * (Logto serves 3.0 at `/api/swagger.json`). JSON Schema's 2020-12 spellings become 3.0's: a type
 * list with `null` becomes `nullable`, `const` a one-value `enum`, a numeric `exclusiveMinimum`
 * the boolean form, `examples` one `example`; keywords 3.0 lacks are dropped. 3.0 has no
 * `webhooks`: the events' schemas are in the 3.1 document (`/api/openapi.json`).
 */
export function asOpenApi30(document: Record<string, unknown>): Record<string, unknown> {
  const { webhooks: _webhooks, ...rest } = document;
  return { ...(convert(rest) as Record<string, unknown>), openapi: '3.0.3' };
}

/** Keywords of JSON Schema 2020-12 that an OpenAPI 3.0 Schema Object does not have. */
const dropped = new Set([
  '$schema',
  '$id',
  '$defs',
  'propertyNames',
  'prefixItems',
  'contentEncoding',
  'contentMediaType',
  'unevaluatedProperties',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'if',
  'then',
  'else',
  'contains',
]);

/** Keywords whose value maps names to schemas: a property may be called `if` or `const` without being the keyword. */
const schemaMaps = new Set(['properties', 'patternProperties']);
const convertMap = (map: Record<string, unknown>) => Object.fromEntries(Object.entries(map).map(([name, schema]) => [name, convert(schema)]));

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (dropped.has(key)) continue;
    out[key] = schemaMaps.has(key) && inner !== null && typeof inner === 'object' ? convertMap(inner as Record<string, unknown>) : convert(inner);
  }
  if (Array.isArray(out.type)) {
    const types = (out.type as string[]).filter((type) => type !== 'null');
    if (types.length < (out.type as string[]).length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else {
      delete out.type;
      if (types.length > 1) out.anyOf = types.map((type) => ({ type }));
    }
  } else if (out.type === 'null') {
    delete out.type;
    out.nullable = true;
    out.enum = [null];
  }
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[exclusive] === 'number') {
      out[bound] = out[exclusive];
      out[exclusive] = true;
    }
  }
  if (Array.isArray(out.examples)) {
    if (out.examples.length > 0) out.example = out.examples[0];
    delete out.examples;
  }
  return out;
}
