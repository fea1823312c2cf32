import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** The share of the machine's CPU time that went to work over the next `ms` (0 to 1). */
async function busyShare(ms) {
  const total = (times) => Object.values(times).reduce((sum, time) => sum + time, 0);
  const before = cpus();
  await sleep(ms);
  let busy = 0;
  let all = 0;
  cpus().forEach(({ times }, core) => {
    const was = before[core]?.times ?? times;
    all += total(times) - total(was);
    busy += total(times) - total(was) - (times.idle - was.idle);
  });
  return all > 0 ? busy / all : 1;
}

/**
 * Two workers, and a third while the machine is otherwise quiet (under half its CPU busy over the
 * half second before the run): the suites that wait on deliveries, timers, child processes and the
 * browser leave a core idle, which the third fills (on two quiet cores, `test:quick`'s jest run:
 * 104-136 s with three, 130 s with two, 103-120 s with four). A machine already busy keeps two, so
 * that the suite does not ask it for more. (Not the load average: it still counts the build that
 * `npm test` ran just before.)
 */
const workers = (await busyShare(500)) < 0.5 ? 3 : 2;

/**
 * Test files are TypeScript, loaded by Node itself through tsx, in workers that keep the modules
 * they have loaded from one test file to the next (`spec/runner`).
 */
export default {
  runner: '<rootDir>/spec/runner/index.js',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/spec/support/global-setup.js',
  setupFiles: ['<rootDir>/spec/support/quiet-provider.js'],
  globalTeardown: '<rootDir>/spec/support/global-teardown.js',
  // A last resort against a hang: the waits inside tests have bounds of their own that say what they
  // waited for (deliveries settled, a server ready, the ledger caught up). eventsDuring waits on
  // deliveries twice, up to 30 s each, which 60 s could cut short before either said why; and on two
  // cores at a load of 9 to 13, 60 s ran out for two tests that take under a second when quiet.
  testTimeout: 120_000,
  maxWorkers: workers,
};
