// `npm test`'s checks before the suite, run at once rather than one after another (on two cores
// 41 s instead of 50): the build (dist/, which the suite's set-up and its child processes run),
// the type check of everything with the tests, and the formatting. Each one's output is printed
// whole when it ends, under its name; the exit code is 1 when any failed.
import { spawn } from 'node:child_process';

const checks = ['build', 'typecheck', 'format:check'];

function run(script) {
  return new Promise((resolve) => {
    const child = spawn(`npm run --silent ${script}`, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code) => {
      const text = Buffer.concat(output).toString().trim();
      process.stdout.write(`${code === 0 ? '✓' : '✕'} npm run ${script}${text ? `\n${text}` : ''}\n`);
      resolve(code === 0);
    });
  });
}

const passed = await Promise.all(checks.map(run));
process.exitCode = passed.every(Boolean) ? 0 : 1;
