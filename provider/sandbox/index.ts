import { Worker } from 'node:worker_threads';

import { workerSource } from './worker-source.js';

export interface SandboxLimits {
  /** Wall-clock limit of one run, awaited work included. */
  timeoutMs: number;
  /** Heap limit of the worker that runs scripts. */
  memoryMb: number;
  /** Largest JSON result accepted. */
  maxResultBytes: number;
}

export const defaultSandboxLimits: SandboxLimits = { timeoutMs: 1000, memoryMb: 64, maxResultBytes: 16 * 1024 };
/** How long a new worker may take to start (a busy machine's thread start-up, not a script's time). */
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
  worker: Worker;
  resolve(output: string): void;
  reject(error: SandboxError): void;
  timer: NodeJS.Timeout;
}

/**
 * Runs operator scripts off the main thread, in a worker with a heap limit; a run that passes
 * its time limit (a loop, or a promise that never settles) has its worker terminated, and the
 * next run starts a fresh one. One warm worker serves runs one after another's messages.
 */
export class Sandbox {
  readonly #limits: SandboxLimits;
  #worker: Worker | undefined;
  /** Settles when the current worker has started and listens (its runs' time counts from then). */
  #ready: Promise<void> | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;

  constructor(limits: Partial<SandboxLimits> = {}) {
    this.#limits = { ...defaultSandboxLimits, ...limits };
  }

  #spawn(): Worker {
    const worker = new Worker(workerSource, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: this.#limits.memoryMb, maxYoungGenerationSizeMb: 16 },
      env: {},
      stdout: true,
      stderr: true,
    });
    worker.unref();
    this.#ready = new Promise<void>((resolve, reject) => {
      const late = setTimeout(() => {
        reject(new SandboxError('crashed', `the sandbox did not start within ${startUpMs} ms`));
        if (this.#worker === worker) this.#worker = undefined;
        void worker.terminate();
      }, startUpMs);
      late.unref();
      worker.once('message', () => {
        clearTimeout(late);
        resolve();
      });
      worker.once('error', (error) => {
        clearTimeout(late);
        reject(new SandboxError('crashed', `the sandbox failed: ${error.message}`));
      });
      worker.once('exit', () => {
        clearTimeout(late);
        reject(new SandboxError('crashed', 'the sandbox stopped'));
      });
    });
    // A start-up that failed is answered to the run that waits for it; nothing else waits.
    this.#ready.catch(() => undefined);
    worker.on('message', ({ id, output, error, timeout }: { id: number; output?: string; error?: string; timeout?: boolean }) => {
      const pending = this.#pending.get(id);
      if (!pending) return;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      if (timeout) pending.reject(this.#timeoutError());
      else if (error !== undefined) pending.reject(new SandboxError('script_error', error));
      else pending.resolve(output!);
    });
    const fail = (message: string) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const [id, pending] of this.#pending) {
        if (pending.worker !== worker) continue;
        clearTimeout(pending.timer);
        pending.reject(new SandboxError('crashed', message));
        this.#pending.delete(id);
      }
    };
    worker.on('error', (error) => fail(`the sandbox failed: ${error.message}`));
    worker.on('exit', () => fail('the sandbox stopped'));
    return worker;
  }

  /** The worker's limit on synchronous code and this side's wall clock end a run alike. */
  #timeoutError() {
    return new SandboxError('timeout', `the script did not finish within ${this.#limits.timeoutMs} ms`);
  }

  /** Runs `getCustomJwtClaims(input)` of `script`; resolves with the plain object it returned. */
  async run(script: string, input: unknown): Promise<Record<string, unknown>> {
    const worker = (this.#worker ??= this.#spawn());
    // The time limit is the script's: a new worker's start-up (slow on a busy machine) is not counted.
    await this.#ready;
    const id = (this.#nextId += 1);
    const output = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(this.#timeoutError());
        // The only sure way to stop a runaway script, sync or async, is to end its thread.
        if (this.#worker === worker) this.#worker = undefined;
        void worker.terminate();
      }, this.#limits.timeoutMs);
      this.#pending.set(id, { worker, resolve, reject, timer });
      worker.postMessage({ id, script, input: JSON.stringify(input), syncTimeoutMs: this.#limits.timeoutMs });
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
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }
}
