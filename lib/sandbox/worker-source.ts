/**
 * The code of the sandbox's worker thread, as source text: it runs from a string
 * (`new Worker(source, { eval: true })`), so it is the same whether the package runs built or
 * from TypeScript. It evaluates an operator's script in a fresh V8 context that holds only
 * JavaScript's own built-ins: no `require`, no `process`, no host object at all. Input enters the
 * context as JSON text and leaves it as JSON text, so no object of the host's realm (whose
 * constructors would lead back to `process`) is ever reachable from the script.
 */
export const workerSource = String.raw`
const { parentPort } = require('node:worker_threads');
const vm = require('node:vm');

// Compiled once (per script text), run in a fresh context each time: compiling is work a run
// need not repeat, while the context is what keeps one run's state from the next.
const compiled = new Map();
const compile = (script) => {
  let entry = compiled.get(script);
  if (!entry) {
    entry = new vm.Script(script + '\n;globalThis.__entry = typeof getCustomJwtClaims === "function" ? getCustomJwtClaims : undefined;');
    if (compiled.size >= 32) compiled.delete(compiled.keys().next().value);
    compiled.set(script, entry);
  }
  return entry;
};
const call = new vm.Script(
  'if (typeof __entry !== "function") throw new TypeError("the script must define a function getCustomJwtClaims");' +
  'Promise.resolve(__entry(JSON.parse(__input))).then((value) => JSON.stringify(value === undefined ? {} : value))');

parentPort.on('message', async ({ id, script, input, syncTimeoutMs }) => {
  try {
    const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
    compile(script).runInContext(context, { timeout: syncTimeoutMs });
    context.__input = input;
    const output = await call.runInContext(context, { timeout: syncTimeoutMs });
    parentPort.postMessage({ id, output: typeof output === 'string' ? output : 'null' });
  } catch (error) {
    const message = error && typeof error === 'object' && typeof error.message === 'string' ? error.message : String(error);
    parentPort.postMessage({ id, error: message.slice(0, 500) });
  }
});
`;
