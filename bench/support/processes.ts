import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { ChildStats } from './fixtures.js';

const childScript = fileURLToPath(new URL('./server-child.js', import.meta.url));

/** Whether `taskset` can pin processes here (Linux with util-linux). */
function canPin(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const pinning = canPin();

/** Pins this process (the load generator) to the second core, the server taking the first. */
export function pinLoadGenerator() {
  if (pinning) execFileSync('taskset', ['-a', '-cp', '1', String(process.pid)], { stdio: 'ignore' });
}

export interface ServerChild {
  kind: 'identity' | 'baseline';
  url: string;
  stats(): Promise<ChildStats>;
  /** Runs `work` under the server's CPU profiler when BENCH_PROFILE names a folder, writing `<folder>/<name>.cpuprofile`. */
  profiled<T>(name: string, work: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

/** Starts a server child, pinned to core 0 when it can be, and waits for its port. */
export async function startServerChild(kind: 'identity' | 'baseline', env: Record<string, string> = {}, script = childScript): Promise<ServerChild> {
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', script, kind], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  // A runner that dies takes its servers with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  // Pinned by pid, all its threads, before it starts serving.
  if (pinning) execFileSync('taskset', ['-a', '-cp', '0', String(child.pid)], { stdio: 'ignore' });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
    child.on('message', (message: { port?: number }) => {
      if (message.port) resolve(message.port);
    });
  });
  return {
    kind,
    url: `http://localhost:${port}`,
    stats: () =>
      new Promise((resolve) => {
        const listener = (message: { stats?: ChildStats }) => {
          if (!message.stats) return;
          child.off('message', listener);
          resolve(message.stats);
        };
        child.on('message', listener);
        child.send('stats');
      }),
    async profiled(name, work) {
      const folder = process.env.BENCH_PROFILE;
      if (!folder) return work();
      mkdirSync(folder, { recursive: true });
      const reply = (key: string) =>
        new Promise<void>((resolve) => {
          const listener = (message: Record<string, unknown>) => {
            if (!(key in message)) return;
            child.off('message', listener);
            resolve();
          };
          child.on('message', listener);
        });
      const started = reply('profiling');
      child.send({ profile: join(folder, `${name}.cpuprofile`) });
      await started;
      try {
        return await work();
      } finally {
        const written = reply('profiled');
        child.send({ profile: null });
        await written;
      }
    },
    stop: () =>
      new Promise((resolve) => {
        process.off('exit', killOnExit);
        child.removeAllListeners('exit');
        child.once('exit', () => resolve());
        child.send('exit');
      }),
  };
}
