/**
 * The code of the sandbox's worker thread, as source text: it runs from a string
 * (`new Worker(source, { eval: true })`), so it is the same whether the package runs built or
 * from TypeScript. It evaluates an operator's script in a fresh V8 context that holds only
 * JavaScript's own built-ins: no `require`, no `process`, no host object at all, and none of the
 * built-ins whose memory lies outside the V8 heap (ArrayBuffer, the typed arrays, DataView,
 * WebAssembly.Memory), so that the worker's heap limit bounds everything a script can allocate.
 * A result is sent only once the script has left no work behind (its promise chains have run
 * out); a script that keeps the thread busy after answering times out like one that never
 * answers, and its thread is ended, so it cannot delay the next run. Input enters the
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
// Built-ins whose backing stores live outside the V8 heap, and so outside the heap limit.
const offHeap = new vm.Script(
  'for (const name of Object.getOwnPropertyNames(globalThis)) {' +
  '  if (/^(ArrayBuffer|SharedArrayBuffer|DataView|Atomics|WebAssembly)$/.test(name) || /^(Big)?(Int|Uint|Float)\\d+(Clamped)?Array$/.test(name)) delete globalThis[name];' +
  '}');
// Logto's api.denyAccess(message): made inside the context, as everything the script touches; the
// answer says which it was, claims or a refusal, so that no claims object can pass for a refusal.
const call = new vm.Script(
  'if (typeof __entry !== "function") throw new TypeError("the script must define a function getCustomJwtClaims");' +
  'class AccessDenied { constructor(message) { this.message = message === undefined ? "access denied" : String(message); } }' +
  'const api = Object.freeze({ denyAccess(message) { throw new AccessDenied(message); } });' +
  'Promise.resolve().then(() => __entry({ ...JSON.parse(__input), api })).then(' +
  '  (value) => JSON.stringify({ claims: value === undefined ? {} : value }),' +
  '  (error) => { if (error instanceof AccessDenied) return JSON.stringify({ denied: error.message.slice(0, 500) }); throw error; })');

parentPort.on('message', async ({ id, script, input, syncTimeoutMs }) => {
  try {
    const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
    offHeap.runInContext(context);
    compile(script).runInContext(context, { timeout: syncTimeoutMs });
    context.__input = input;
    const output = await call.runInContext(context, { timeout: syncTimeoutMs });
    // setImmediate runs only once the microtask queue is empty: nothing of this run is left.
    setImmediate(() => parentPort.postMessage({ id, output: typeof output === 'string' ? output : 'null' }));
  } catch (error) {
    // vm's own limit on synchronous code is the same limit as the host's: one kind of answer.
    if (error && error.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return parentPort.postMessage({ id, timeout: true });
    const message = error && typeof error === 'object' && typeof error.message === 'string' ? error.message : String(error);
    setImmediate(() => parentPort.postMessage({ id, error: message.slice(0, 500) }));
  }
});
// Started: a run's time counts from here, not from the thread's start-up.
parentPort.postMessage({ ready: true });
`;

/**
 * The code of the sandbox's process, as source text (`node -e`). It holds the worker thread above,
 * relays runs to it and answers back over its IPC channel. It exists for V8's flags, which are one
 * set per process: as a thread of the service, the worker shared the service's flags, and a service
 * started with a large young generation (`--max-semi-space-size=32`, a common tuning) aborted as a
 * whole when a script filled the worker's heap. This process starts with V8's defaults whatever
 * the service's flags, so the worker's heap limit ends the worker alone, as it should; a worker
 * that stops ends this process, and the service starts another for the next run. It ends too when
 * the service goes, whatever way (its IPC channel closes).
 */
export const processSource = String.raw`
const { Worker } = require('node:worker_threads');
let worker;
process.on('message', (message) => {
  if (worker) return worker.postMessage(message);
  // The first message says what to run, and with how much heap.
  worker = new Worker(message.source, {
    eval: true,
    resourceLimits: { maxOldGenerationSizeMb: message.memoryMb, maxYoungGenerationSizeMb: 16 },
    env: {},
    stdout: true,
    stderr: true,
  });
  worker.on('message', (answer) => process.send(answer));
  worker.on('error', () => process.exit(1));
  worker.on('exit', () => process.exit(1));
});
process.on('disconnect', () => process.exit(0));
`;
