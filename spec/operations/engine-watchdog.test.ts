import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A host that starts the embedded engine and then waits, as `npm start` without MONGODB_URI does. */
const host = `
import { startEmbeddedMongo } from './dist/lib/store/embedded-mongo.js';
const engine = await startEmbeddedMongo();
console.log('ENGINE ' + engine.pid);
setInterval(() => {}, 1000);
`;

/** Starts the host in a process group of its own (as a terminal's job is) and answers it with its engine's pid. */
async function startHost() {
  const child = spawn(process.execPath, ['--input-type=module', '-e', host], { cwd: process.cwd(), detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  const enginePid = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ENGINE (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the host exited (${code}) before its engine started: ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, enginePid, exited };
}

/** Whether `pid` is a live process (one that exited but was not yet reaped is a zombie, `Z`). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls until the engine is gone; one still there 30 s after its host is one left behind. */
async function untilGone(pid: number) {
  for (const deadline = Date.now() + 30_000; alive(pid); await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (Date.now() > deadline) throw new Error(`the engine (pid ${pid}) outlived its host by 30 s`);
  }
}

/**
 * The embedded engine dies with the process that started it, however that process dies: a normal
 * exit runs a handler, but SIGKILL, or a terminal's Ctrl-C (SIGINT's default action), runs none, so
 * a watchdog on a pipe from the host kills the engine when the kernel closes that pipe.
 */
describe('the embedded engine never outlives the process that started it', () => {
  it.each([
    ['SIGKILL to the host', (pid: number) => process.kill(pid, 'SIGKILL')],
    ["Ctrl-C to the host's process group (SIGINT)", (pid: number) => process.kill(-pid, 'SIGINT')],
  ])('%s: the engine is gone soon after', async (_how, kill) => {
    const { child, enginePid, exited } = await startHost();
    try {
      expect(alive(enginePid)).toBe(true);
      kill(child.pid!);
      await exited;
      await untilGone(enginePid);
      expect(alive(enginePid)).toBe(false);
    } finally {
      // A failure here must not leave what it found behind.
      if (alive(enginePid)) process.kill(enginePid, 'SIGKILL');
    }
  });
});
