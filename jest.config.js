import { availableParallelism, loadavg } from 'node:os';

/**
 * Two workers, and a third while the machine is otherwise quiet (its load under its cores): the suites
 * that wait on deliveries, timers, child processes and the browser leave a core idle, which the third
 * fills (on two quiet cores, the whole suite's jest run: 887 s against 933 s with two; `test:quick`,
 * before the console's suites: 4m05s against 4m50s with two and 4m28s with four). A machine already
 * busy keeps two, so that the suite does not ask it for more.
 */
const workers = loadavg()[0] < availableParallelism() ? 3 : 2;

/** Tests run as native ESM (oidc-provider, jose and openid-client are ESM-only). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The same library's CommonJS build: its ES build imports JSON without an import attribute, which Jest's
    // module loader warns about on every file (Node itself loads either build silently).
    '^libphonenumber-js/max$': '<rootDir>/node_modules/libphonenumber-js/max/index.cjs',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }] },
  globalSetup: '<rootDir>/spec/support/global-setup.js',
  setupFiles: ['<rootDir>/spec/support/quiet-provider.js'],
  globalTeardown: '<rootDir>/spec/support/global-teardown.js',
  testTimeout: 60000,
  maxWorkers: workers,
};
