// Before each suite: each JSON Schema is compiled once per worker, not once per test file.
//
// Jest gives every test file a module registry of its own, so each file loads the service's
// modules anew, with new ajv instances, which compiled the same settings schema again (about
// 110 ms of CPU a file) and the same route schemas (about 160 ms): about a tenth of the CPU of
// `test:quick`. A deployment loads these modules once and compiles each schema once.
//
// What ajv makes of a schema depends only on the schema, the instance's options and the formats
// and keywords the instance was given, which the service's modules give alike in every file; the
// key holds all four. The service names no schema by `$id`, so no instance is later asked for a
// schema that only the cache compiled. Each file's ajv class is patched as the file starts (the
// class is the file's own); the cache is kept on Node's `vm` module, which jest shares between files (its `module` it does not).
import vm from 'node:vm';

import Ajv from 'ajv/dist/core.js';

const cacheKey = Symbol.for('oidc-identity.spec.compiled-schemas');
const cache = (vm[cacheKey] ??= new Map());
const patched = Symbol.for('oidc-identity.spec.compile-shared');

/** The options that shape the code ajv writes (the URI resolver and the logger are objects of their own, the former circular). */
const options = ({ uriResolver, logger, ...rest }) => rest;

const prototype = Ajv.default.prototype;
if (!prototype[patched]) {
  const compile = prototype.compile;
  prototype.compile = function (schema, meta) {
    const key = JSON.stringify([options(this.opts), Object.keys(this.formats), Object.keys(this.RULES.keywords), meta ?? null, schema]);
    let validate = cache.get(key);
    if (!validate) {
      validate = compile.call(this, schema, meta);
      cache.set(key, validate);
    }
    return validate;
  };
  prototype[patched] = true;
}
