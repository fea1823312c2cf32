// Before each suite: retire the AsyncLocalStorage instances the worker's earlier suites enabled.
//
// Jest gives every test file a module registry of its own, so each file makes new instances of the
// storages that oidc-provider, Koa and the service create at import; Node (before its
// AsyncContextFrame storage, the default from 24) keeps every enabled instance in one process-wide
// list and copies each one's store into every promise and callback made afterwards. A worker that
// had run 40 files copied 120 stores per promise, nearly all of files long finished (`test:quick`'s
// jest run: 368 s with them, about 265 s without, on two quiet cores). A deployment makes these
// instances once.
//
// The class is the process's own (jest shares Node's built-in modules between files), so the
// methods that enable an instance are wrapped once per worker, and the instances of files that have
// finished are disabled when the next file starts, when nothing of theirs runs any more.
import { AsyncLocalStorage } from 'node:async_hooks';

const enabledKey = Symbol.for('oidc-identity.spec.enabled-async-storages');
if (!AsyncLocalStorage[enabledKey]) {
  const enabled = new Set();
  for (const method of ['run', 'enterWith']) {
    const original = AsyncLocalStorage.prototype[method];
    AsyncLocalStorage.prototype[method] = function (...args) {
      enabled.add(this);
      return original.apply(this, args);
    };
  }
  AsyncLocalStorage[enabledKey] = enabled;
}
const enabled = AsyncLocalStorage[enabledKey];
for (const storage of enabled) storage.disable();
enabled.clear();
