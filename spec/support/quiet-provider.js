// Before each suite: oidc-provider 9 warns at import that Node 20 is not its supported runtime
// (README: Node 20.19 works; 22 LTS is recommended). Said once in the README, not in every suite's output.
const warn = console.warn.bind(console);
console.warn = (...args) => {
  if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider WARNING: Unsupported runtime')) return;
  warn(...args);
};
