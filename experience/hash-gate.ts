import { ApiError } from '../lib/errors.js';

/** Password hashes one process runs at once (scrypt at 32 MiB each, on libuv's thread pool). */
export const defaultMaxConcurrentHashes = 8;

/**
 * A cap on concurrent password hashes in this process: past it a request is refused at once
 * (429, `Retry-After: 1`) rather than queued, so that a flood of sign-ups cannot make a
 * legitimate sign-in wait behind it, nor hold memory for every hash it queued.
 */
export function createHashGate(max = defaultMaxConcurrentHashes) {
  let running = 0;
  return async function hashing<T>(work: () => Promise<T>): Promise<T> {
    if (running >= max) throw new ApiError('session.too_many_attempts', 'the server is busy; try again in a moment', { retryAfter: 1 });
    running += 1;
    try {
      return await work();
    } finally {
      running -= 1;
    }
  };
}

export type HashGate = ReturnType<typeof createHashGate>;
