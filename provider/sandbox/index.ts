import { spawn, type ChildProcess } from 'node:child_process';

import { processSource, workerSource } from './worker-source.js';

export interface SandboxLimits {
  /** Wall-clock limit of one run, awaited work included. */
  timeoutMs: number;
  /** Heap limit of the worker thread that runs scripts. */
  memoryMb: number;
  /** Largest JSON result accepted. */
  maxResultBytes: number;
}

export const defaultSandboxLimits: SandboxLimits = { timeoutMs: 1000, memoryMb: 64, maxResultBytes: 16 * 1024 };
/** How long a new sandbox may take to start (a busy machine's process and thread start-up, not a script's time). */
const startUpMs = 30_000;

export class SandboxError extends Error {
  override name = 'SandboxError';
  constructor(
    readonly code: 'timeout' | 'script_error' | 'result_too_large' | 'invalid_result' | 'crashed' | 'access_denied',
    message: string,
  ) {
    super(message);
  }
}

interface Pending {
  child: ChildProcess;
  resolve(output: string): void;
  reject(error: SandboxError): void;
  timer: NodeJS.Timeout;
}

/**
 * Runs operator scripts outside the service's process: in a worker thread with a heap limit, in a
 * process of its own (`worker-source.ts` says why). A run that passes its time limit (a loop, or a
 * promise that never settles) has its process ended, and the next run starts a fresh one. One warm
 * sandbox serves runs one after another's messages.
 */
export class Sandbox {
  readonly #limits: SandboxLimits;
  #child: ChildProcess | undefined;
  /** Settles when the current sandbox's worker has started and listens (its runs' time counts from then). */
  #ready: Promise<void> | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;

  constructor(limits: Partial<SandboxLimits> = {}) {
    this.#limits = { ...defaultSandboxLimits, ...limits };
  }

  #spawn(): ChildProcess {
    // Node with no flags of the service's (the command line's or NODE_OPTIONS): V8's defaults.
    const child = spawn(process.execPath, ['-e', processSource], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: process.platform === 'win32' ? { SystemRoot: process.env.SystemRoot } : {},
      windowsHide: true,
    });
    // Neither the process nor its channel keeps the service running; the process ends with the service.
    child.unref();
    child.channel?.unref();
    this.#ready = new Promise<void>((resolve, reject) => {
      const late = setTimeout(() => {
        reject(new SandboxError('crashed', `the sandbox did not start within ${startUpMs} ms`));
        if (this.#child === child) this.#child = undefined;
        child.kill('SIGKILL');
      }, startUpMs);
      late.unref();
      child.once('message', () => {
        clearTimeout(late);
        resolve();
      });
      child.once('error', (error) => {
        clearTimeout(late);
        reject(new SandboxError('crashed', `the sandbox failed: ${error.message}`));
      });
      child.once('exit', () => {
        clearTimeout(late);
        reject(new SandboxError('crashed', 'the sandbox stopped'));
      });
    });
    // A start-up that failed is answered to the run that waits for it; nothing else waits.
    this.#ready.catch(() => undefined);
    child.on('message', ({ id, output, error, timeout }: { id: number; output?: string; error?: string; timeout?: boolean }) => {
      const pending = this.#pending.get(id);
      if (!pending) return;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      if (timeout) pending.reject(this.#timeoutError());
      else if (error !== undefined) pending.reject(new SandboxError('script_error', error));
      else pending.resolve(output!);
    });
    const fail = (message: string) => {
      if (this.#child === child) this.#child = undefined;
      for (const [id, pending] of this.#pending) {
        if (pending.child !== child) continue;
        clearTimeout(pending.timer);
        pending.reject(new SandboxError('crashed', message));
        this.#pending.delete(id);
      }
    };
    child.on('error', (error) => fail(`the sandbox failed: ${error.message}`));
    child.on('exit', () => fail('the sandbox stopped'));
    // What to run, and with how much heap: the process starts its worker with them.
    child.send({ source: workerSource, memoryMb: this.#limits.memoryMb });
    return child;
  }

  /** The worker's limit on synchronous code and this side's wall clock end a run alike. */
  #timeoutError() {
    return new SandboxError('timeout', `the script did not finish within ${this.#limits.timeoutMs} ms`);
  }

  /** Runs `getCustomJwtClaims(input)` of `script`; resolves with the plain object it returned. */
  async run(script: string, input: unknown): Promise<Record<string, unknown>> {
    const child = (this.#child ??= this.#spawn());
    // While a run waits for its answer, the sandbox keeps this process running (in a script with nothing else to wait for); idle, it does not.
    this.#hold(child, 1);
    try {
      return await this.#runIn(child, script, input);
    } finally {
      this.#hold(child, -1);
    }
  }

  /** Runs in flight per sandbox process. */
  readonly #holds = new WeakMap<ChildProcess, number>();
  #hold(child: ChildProcess, change: number) {
    const holds = (this.#holds.get(child) ?? 0) + change;
    this.#holds.set(child, holds);
    if (holds > 0) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }

  async #runIn(child: ChildProcess, script: string, input: unknown): Promise<Record<string, unknown>> {
    // The time limit is the script's: a new sandbox's start-up (slow on a busy machine) is not counted.
    await this.#ready;
    const id = (this.#nextId += 1);
    const output = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(this.#timeoutError());
        // The only sure way to stop a runaway script, sync or async, is to end its process.
        if (this.#child === child) this.#child = undefined;
        child.kill('SIGKILL');
      }, this.#limits.timeoutMs);
      this.#pending.set(id, { child, resolve, reject, timer });
      child.send({ id, script, input: JSON.stringify(input), syncTimeoutMs: this.#limits.timeoutMs });
    });
    if (Buffer.byteLength(output) > this.#limits.maxResultBytes) {
      throw new SandboxError('result_too_large', `the result is larger than ${this.#limits.maxResultBytes} bytes`);
    }
    const answer = JSON.parse(output) as { claims?: unknown; denied?: string } | null;
    // The script refused the token (`api.denyAccess`): not a failure of the script, its decision.
    if (answer && typeof answer.denied === 'string') throw new SandboxError('access_denied', answer.denied);
    const result = answer?.claims;
    if (result === null || typeof result !== 'object' || Array.isArray(result)) {
      throw new SandboxError('invalid_result', 'getCustomJwtClaims must return an object');
    }
    return result as Record<string, unknown>;
  }

  async close(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Held until it has gone, so that a caller awaiting the close sees it through.
    child.ref();
    child.kill('SIGKILL');
    await exited;
  }
}
