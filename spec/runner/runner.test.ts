import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** jest's JSON report, as much of it as these tests read. */
interface Report {
  numFailedTests: number;
  numPassedTests: number;
  numPendingTests: number;
  testResults: Array<{
    name: string;
    status: string;
    message: string;
    assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
  }>;
}

/** Runs jest over the runner's fixtures with the suites' runner, in a process of its own. */
async function runFixtures(): Promise<{ code: number | null; report: Report }> {
  const dir = await mkdtemp(join(tmpdir(), 'runner-'));
  try {
    const config = {
      rootDir: resolve('spec/fixtures/runner'),
      runner: resolve('spec/runner/index.js'),
      testMatch: ['**/*.fixture.ts'],
      testTimeout: 10_000,
      maxWorkers: 2,
      cacheDirectory: join(dir, 'cache'),
    };
    const output = join(dir, 'report.json');
    const child = spawn(process.execPath, ['node_modules/jest/bin/jest.js', '--ci', '--config', JSON.stringify(config), '--json', '--outputFile', output], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    const report = JSON.parse(await readFile(output, 'utf8').catch(() => `{"error": ${JSON.stringify(stderr)}}`)) as Report;
    return { code, report };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the suites runner (spec/runner)', () => {
  let code: number | null;
  let report: Report;
  const outcome = (name: string) => {
    const result = report.testResults.flatMap((file) => file.assertionResults).find((test) => test.fullName === name);
    if (!result) throw new Error(`no result for "${name}" in ${JSON.stringify(report)}`);
    return { status: result.status, message: result.failureMessages.join('\n') };
  };

  beforeAll(async () => {
    ({ code, report } = await runFixtures());
  });

  it('fails the run when any test fails', () => {
    expect(code).toBe(1);
    expect(report.numPassedTests).toBe(3);
    expect(report.numPendingTests).toBe(1);
  });

  it('reports a failed assertion with its difference', () => {
    const { status, message } = outcome('outcomes fails an assertion');
    expect(status).toBe('failed');
    expect(message).toContain('"colour": "blue"');
  });

  it("ends a test at its timeout and fails it, with jest's message", () => {
    const { status, message } = outcome('outcomes runs past its timeout');
    expect(status).toBe('failed');
    expect(message).toContain('Exceeded timeout of 200 ms');
  });

  it('fails the test during which a callback threw or a promise was rejected unawaited, and runs on', () => {
    expect(outcome('outcomes throws from a timer')).toMatchObject({ status: 'failed', message: expect.stringContaining('thrown from a timer') });
    expect(outcome('outcomes rejects a promise nobody awaits')).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('rejected unawaited'),
    });
    expect(outcome('outcomes runs each case (2)').status).toBe('passed');
  });

  it("fails the tests under a beforeAll that threw, with the hook's error", () => {
    expect(outcome('a failing beforeAll fails with it')).toMatchObject({ status: 'failed', message: expect.stringContaining('set-up failed') });
  });

  it('fails a file that cannot be loaded, naming what is missing', () => {
    const file = report.testResults.find((result) => result.name.endsWith('unloadable.fixture.ts'));
    expect(file).toMatchObject({ status: 'failed', message: expect.stringContaining('no-such-module') });
  });
});
