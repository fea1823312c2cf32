import base from './jest.config.js';

/**
 * `npm run test:quick`: every suite but those that drive Chromium (`*browser*`, the pages' matrix,
 * the Basic OP conformance suites)
 * and those that start servers as child processes (several processes on one database, stopping and
 * killing them, the database lost or stalled under them, the package installed as users install it,
 * the claims sandbox under the service's V8 flags),
 * and the ledger's and sequencer's 1,000-record bursts (`overlapping-runs`, 45 s alone).
 * `npm test` runs them all; CI runs `npm test`.
 */
export default {
  ...base,
  testPathIgnorePatterns: [
    '/node_modules/',
    'browser\\.test\\.ts$',
    'pages-matrix\\.test\\.ts$',
    '/spec/conformance/basic-op(-codes)?\\.test\\.ts$',
    '/spec/operations/(processes|shutdown|database-lost|database-outage|logs|data-dir|engine-watchdog)\\.test\\.ts$',
    '/spec/package/',
    '/spec/store/(lost-answers|change-feed|overlapping-runs)\\.test\\.ts$',
    '/spec/hooks/(processes|crash-mid-write|feed)\\.test\\.ts$',
    '/spec/conformance/key-rotation\\.test\\.ts$',
    '/spec/impersonation/single-use\\.test\\.ts$',
    '/spec/provider/sandbox-flags\\.test\\.ts$',
  ],
};
