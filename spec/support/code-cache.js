// Before each suite: the worker keeps V8's code cache of every module it has compiled.
//
// Jest gives every test file a module registry of its own, so each file compiles the whole module
// graph again (about 800 modules: the service, oidc-provider, the MongoDB driver, Koa, ajv), and
// V8 parsed the same sources once a file: about a tenth of the CPU of `test:quick`. Jest compiles
// through `node:vm` (`compileFunction` for CommonJS, `SourceTextModule` for ES modules), which
// takes a code cache; these are wrapped once per worker so that the first compile of a source
// keeps its cache and later compiles of the same source (by file name and text) start from it.
// V8 checks the cache against the source and its own flags, and compiles anew when it rejects one.
// The cache holds compiled code, not state: each file still evaluates every module afresh.
import vm from 'node:vm';

const wrapped = Symbol.for('oidc-identity.spec.code-cache');
if (!vm[wrapped]) {
  /** Per kind, file name (and a function's parameters): the source compiled and V8's cache of it. */
  const caches = new Map();
  /**
   * Node 20 loses a module's dynamic-import callback when V8 takes its code from a cache
   * (`ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING` at the `import()`), so a source that may call
   * `import()` is compiled as jest compiles it, every time.
   */
  const cacheable = (name, source) => name !== undefined && !/\bimport\s*\(/.test(source);
  const cached = (key, source) => {
    const entry = caches.get(key);
    return entry?.source === source ? entry.data : undefined;
  };

  const compileFunction = vm.compileFunction;
  vm.compileFunction = function (code, params = [], options = {}) {
    const [key, keep] = [`function ${options.filename} (${params.join(',')})`, cacheable(options.filename, code)];
    const data = keep ? cached(key, code) : undefined;
    if (data) return compileFunction.call(this, code, params, { ...options, cachedData: data });
    const compiled = compileFunction.call(this, code, params, { ...options, produceCachedData: keep });
    if (compiled.cachedDataProduced) caches.set(key, { source: code, data: compiled.cachedData });
    return compiled;
  };

  // Present under `--experimental-vm-modules`, as the test scripts run jest.
  const SourceTextModule = vm.SourceTextModule;
  if (SourceTextModule)
    vm.SourceTextModule = class extends SourceTextModule {
      constructor(code, options = {}) {
        const [key, keep] = [`module ${options.identifier}`, cacheable(options.identifier, code)];
        const data = keep ? cached(key, code) : undefined;
        super(code, data ? { ...options, cachedData: data } : options);
        if (keep && !data) caches.set(key, { source: code, data: this.createCachedData() });
      }
    };
  vm[wrapped] = true;
}
