// One test file, in a jest worker that runs many (see `index.js`).
//
// The worker loads the service's modules once, through Node's own loader (TypeScript by tsx), and
// each test file after the first reuses them, as a deployment does. The file's tests run under
// jest-circus, jest's own runner of describe/it/hooks, with its timeouts, `each`, `only` and `skip`;
// `expect` is jest's. What jest's default runner adds and the suites do not use is left out: a
// sandbox per file, module mocks, fake timers and snapshots.
'use strict';

const { pathToFileURL } = require('node:url');

/** The file this worker runs now, the one it ran before, and the errors thrown in between. */
let current;
let previous;
/** @type {Array<{ error: unknown, after: string | undefined }>} */
const between = [];

/** @type {Promise<{ circus: typeof import('jest-circus'), formatResultsErrors: Function, formatExecError: Function, createEmptyTestResult: Function }> | undefined} */
let prepared;

/** Once per worker: TypeScript, jest's globals, then the project's setup files in order. */
async function prepare(config) {
  const { register } = await import('tsx/esm/api');
  register();
  const circus = await import('jest-circus');
  const { jestExpect } = await import('@jest/expect');
  const { formatResultsErrors, formatExecError } = await import('jest-message-util');
  const { createEmptyTestResult } = await import('@jest/test-result');
  Object.assign(globalThis, {
    expect: jestExpect,
    describe: circus.describe,
    fdescribe: circus.describe.only,
    xdescribe: circus.describe.skip,
    it: circus.it,
    fit: circus.it.only,
    xit: circus.it.skip,
    test: circus.test,
    xtest: circus.test.skip,
    beforeAll: circus.beforeAll,
    afterAll: circus.afterAll,
    beforeEach: circus.beforeEach,
    afterEach: circus.afterEach,
  });
  circus.addEventHandler((event) => {
    if (event.name === 'test_start') jestExpect.setState({ currentTestName: fullName(event.test) });
  });
  // An error thrown from a callback or a promise nobody awaited fails the test running then, or the
  // file when none is, as under jest's default runner; it does not end the worker. One that comes
  // between two files fails the next, which names the file before it.
  const unhandled = (error) => {
    const state = circus.getState();
    if (!current) between.push({ error, after: previous });
    else (state.currentlyRunningTest?.errors ?? state.unhandledErrors).push(error);
  };
  process.on('uncaughtException', unhandled);
  process.on('unhandledRejection', unhandled);
  for (const file of config.setupFiles) await import(pathToFileURL(file).href);
  return { circus, formatResultsErrors, formatExecError, createEmptyTestResult };
}

/** A test's name from its describe blocks down, as jest reports it. */
function fullName(test) {
  const names = [];
  for (let block = test; block && block.parent; block = block.parent) names.unshift(block.name);
  return names.join(' ');
}

/** The status jest reports for one of circus's results. */
function statusOf(result) {
  if (result.status === 'skip') return 'pending';
  if (result.status === 'todo') return 'todo';
  return result.errors.length > 0 ? 'failed' : 'passed';
}

/** jest-worker's entry: run `testPath`, answer jest's TestResult. */
module.exports = async function runFile({ testPath, config, globalConfig }) {
  prepared ??= prepare(config);
  const { circus, formatResultsErrors, formatExecError, createEmptyTestResult } = await prepared;
  circus.resetState();
  const state = circus.getState();
  state.testTimeout = globalConfig.testTimeout;
  if (globalConfig.testNamePattern) state.testNamePattern = new RegExp(globalConfig.testNamePattern, 'i');

  for (const { error, after } of between.splice(0)) {
    state.unhandledErrors.push(new Error(`thrown after ${after ?? 'no file'} finished, before this one began`, { cause: error }));
  }

  const start = Date.now();
  current = testPath;
  let run;
  try {
    // The query makes the file itself load anew should a worker be given it twice (`--watch`).
    await import(`${pathToFileURL(testPath).href}?run=${start}`);
    run = await circus.run();
  } finally {
    [current, previous] = [undefined, testPath];
  }
  const end = Date.now();

  const testResults = run.testResults.map((result) => ({
    ancestorTitles: result.testPath.slice(1, -1),
    duration: result.duration,
    failureDetails: result.errorsDetailed,
    failureMessages: result.errors,
    fullName: result.testPath.slice(1).join(' '),
    invocations: result.invocations,
    location: result.location,
    numPassingAsserts: result.numPassingAsserts,
    retryReasons: result.retryReasons,
    status: statusOf(result),
    title: result.testPath.at(-1),
  }));
  const count = (status) => testResults.filter((result) => result.status === status).length;
  let failureMessage = formatResultsErrors(testResults, config, globalConfig, testPath);
  let testExecError;
  if (run.unhandledErrors.length > 0) {
    testExecError = { message: '', stack: run.unhandledErrors.join('\n') };
    const formatted = run.unhandledErrorsDetailed.map((error) => formatExecError(error, config, globalConfig));
    failureMessage = `${failureMessage ?? ''}\n\n${formatted.join('\n')}`;
  }
  const empty = createEmptyTestResult();
  return {
    ...empty,
    displayName: config.displayName,
    failureMessage,
    numFailingTests: count('failed'),
    numPassingTests: count('passed'),
    numPendingTests: count('pending'),
    numTodoTests: count('todo'),
    perfStats: { ...empty.perfStats, start, end, runtime: end - start, slow: (end - start) / 1000 > config.slowTestThreshold },
    testExecError,
    testFilePath: testPath,
    testResults,
  };
};
