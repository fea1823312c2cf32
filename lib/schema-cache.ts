import type { Ajv, ValidateFunction } from 'ajv';

/**
 * Validators compiled once per distinct schema and ajv instance, found by the schema's text. Ajv
 * remembers a schema by its object, and callers build theirs anew on every start and in every app
 * a process makes (each `createIdentity`): without this each would compile the same schema again,
 * and ajv would keep every copy. A validator is compiled at its first use.
 */
export function createSchemaCache() {
  const byInstance = new Map<Ajv, Map<string, () => ValidateFunction>>();
  return {
    /** `schema`'s validator under `ajv`, compiled when first called. */
    compiled(ajv: Ajv, schema: Record<string, unknown>): () => ValidateFunction {
      let byText = byInstance.get(ajv);
      if (!byText) byInstance.set(ajv, (byText = new Map()));
      const text = JSON.stringify(schema);
      let compiled = byText.get(text);
      if (!compiled) {
        let validate: ValidateFunction | undefined;
        compiled = () => (validate ??= ajv.compile(schema));
        byText.set(text, compiled);
      }
      return compiled;
    },
    /** Every schema's validator so far, each compiled when first called. */
    *all(): Iterable<() => ValidateFunction> {
      for (const byText of byInstance.values()) yield* byText.values();
    },
  };
}
