import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface EmbeddedMongo {
  uri: string;
  /** The engine's process id (fault-injection tests stop and resume it). */
  pid: number;
  /** Settles if the engine exits without `stop()` (its data, all in memory, is then gone). */
  died: Promise<string>;
  stop(): Promise<void>;
}

function binaryPath(): string {
  const require = createRequire(import.meta.url);
  try {
    const manifest = require.resolve('@jongodb/memory-server-bin-linux-x64-gnu/package.json');
    return join(dirname(manifest), 'bin', 'jongodb');
  } catch {
    // An optional dependency: npm skips it off linux-x64 with glibc.
    throw new Error('the embedded MongoDB engine is only available on Linux x64 (glibc); set MONGODB_URI to a MongoDB server');
  }
}

/**
 * Starts the in-memory MongoDB-compatible engine (jongodb) as a child process on a
 * free loopback port (or `port`), as a one-node replica set so that transactions work. Its data
 * lives in memory only and is gone when it stops.
 */
export async function startEmbeddedMongo({ timeoutMs = 30_000, port = 0 } = {}): Promise<EmbeddedMongo> {
  const child = spawn(binaryPath(), ['--host=127.0.0.1', `--port=${port}`, '--topology-profile=singleNodeReplicaSet', '--replica-set-name=rs0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C (or a supervisor's signal to the group) reaches the
    // server, which stops it after its last snapshot, not the engine before the server is done with it.
    detached: true,
  });

  const uri = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`embedded MongoDB did not start within ${timeoutMs} ms: ${output.slice(-500)}`)), timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`embedded MongoDB exited with code ${code}: ${output.slice(-500)}`)));
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /JONGODB_URI=(\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(match[1]);
      }
    });
  });
  // Keep draining its output so that a full pipe never blocks it.
  child.stdout.resume();
  child.stderr.resume();
  // A parent that dies must not leave the engine behind: on a normal exit this handler stops it; on
  // any other death (SIGKILL, a signal's default action, where no handler runs) the watchdog does.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const watchdog = watchOver(child.pid!);

  let stopping = false;
  const died = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      // Its pid may be given to another process now: the watchdog must not outlive it.
      watchdog.kill('SIGKILL');
      if (!stopping) resolve(`the embedded MongoDB engine exited (${signal ?? `code ${code}`}); the data it held is gone`);
    });
  });
  return {
    uri,
    pid: child.pid!,
    died,
    stop: () => {
      stopping = true;
      watchdog.kill('SIGKILL');
      return stopChild(child, killOnExit);
    },
  };
}

/**
 * A shell that waits on a pipe from this process and kills the engine `pid` when the pipe ends,
 * which the kernel does when this process dies however it dies. In a process group of its own, so
 * that the terminal's Ctrl-C (sent to the whole foreground group, and possibly before the shell is
 * far enough to ignore it) cannot take it with this process. Its stdin is not counted as work that
 * keeps this process alive.
 */
function watchOver(pid: number): ChildProcess {
  const watchdog = spawn('/bin/sh', ['-c', `trap '' INT TERM HUP QUIT; read _; kill -9 ${pid} 2>/dev/null`], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  watchdog.once('error', () => undefined);
  watchdog.unref();
  (watchdog.stdin as unknown as { _handle?: { unref?: () => void } } | null)?._handle?.unref?.();
  return watchdog;
}

function stopChild(child: ChildProcess, killOnExit: () => void): Promise<void> {
  process.removeListener('exit', killOnExit);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
