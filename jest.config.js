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
  maxWorkers: 2,
};
