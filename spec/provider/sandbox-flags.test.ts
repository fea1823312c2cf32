import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * V8's flags are one set per process. While the claims sandbox was a thread of the service, a
 * service started with a large young generation (`node --max-semi-space-size=32`, a common tuning)
 * aborted as a whole (`FATAL ERROR: Reached heap limit`, exit 134) when a claims script filled the
 * sandbox's heap. The sandbox now runs in a process of its own, started with V8's defaults.
 */
const sandboxModule = resolve('dist/provider/sandbox/index.js');
const program = `
const { Sandbox } = await import(${JSON.stringify(sandboxModule)});
// A time limit far past what filling 64 MiB takes on a loaded machine: the run must end by its heap, not its clock.
const sandbox = new Sandbox({ timeoutMs: 60000 });
const outcome = (run) => run.then((claims) => ({ claims }), (error) => ({ code: error.code }));
const filled = await outcome(sandbox.run('function getCustomJwtClaims() { const all = []; for (;;) all.push("x".repeat(1024) + all.length) }', {}));
const next = await outcome(sandbox.run('function getCustomJwtClaims({ token }) { return { seen: token.sub } }', { token: { sub: 'u1' } }));
await sandbox.close();
console.log(JSON.stringify({ filled, next }));
`;

/** Runs `program` in a node process started with `flags`; answers its exit code and what it printed. */
function runWith(flags: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', fail);
    child.once('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

describe('the claims sandbox and the service’s V8 flags', () => {
  it.each([[[]], [['--max-semi-space-size=32']], [['--max-semi-space-size=64']]])(
    'a script that fills its heap ends the sandbox only, and the next run works (service flags: %j)',
    async (flags) => {
      const { code, signal, stdout, stderr } = await runWith(flags);
      expect({ code, signal, stderr: stderr.split('\n').filter((line) => /FATAL|heap limit/.test(line)) }).toEqual({ code: 0, signal: null, stderr: [] });
      expect(JSON.parse(stdout)).toEqual({ filled: { code: 'crashed' }, next: { claims: { seen: 'u1' } } });
    },
  );
});
