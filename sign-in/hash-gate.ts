import { ApiError } from '../lib/errors.js';
import { addressKey } from '../lib/http/client-address.js';
import type { Counters } from './counters.js';

/** Password hashes one process runs at once (scrypt at 32 MiB each, on libuv's thread pool). */
export const defaultMaxConcurrentHashes = 8;
/** Of those, how many one client address may hold, so that one address cannot take them all. */
export const defaultMaxConcurrentHashesPerAddress = 2;

const busy = () => new ApiError('session.too_many_attempts', 'the server is busy; try again in a moment', { retryAfter: 1 });

/**
 * A cap on concurrent password hashes in this process, in all and per client address: past
 * either a request is refused at once (429, `Retry-After: 1`) rather than queued, so that a flood
 * of sign-ups cannot make a legitimate sign-in wait behind it, nor hold memory for every hash it
 * queued, and a flood from one address leaves the other slots to everyone else.
 */
export function createHashGate(max = defaultMaxConcurrentHashes, perAddress = defaultMaxConcurrentHashesPerAddress) {
  let running = 0;
  const byAddress = new Map<string, number>();
  return async function hashing<T>(address: string, work: () => Promise<T>): Promise<T> {
    const mine = byAddress.get(address) ?? 0;
    if (running >= max || mine >= perAddress) throw busy();
    running += 1;
    byAddress.set(address, mine + 1);
    try {
      return await work();
    } finally {
      running -= 1;
      const left = byAddress.get(address)! - 1;
      if (left === 0) byAddress.delete(address);
      else byAddress.set(address, left);
    }
  };
}

export type HashGate = ReturnType<typeof createHashGate>;

/**
 * Every password hash or check an end user can cause (the pages, the Experience API, the Account
 * API) goes through here: the client address's hash budget is counted first (429 past it, before
 * any work), then the work takes a slot of the process's cap.
 */
export function budgetedHashing(counters: Counters, gate: HashGate) {
  return async function hashFor<T>(ip: string, work: () => Promise<T>): Promise<T> {
    const address = addressKey(ip);
    const budget = await counters.hit('passwordHash', address);
    if (budget.over) throw new ApiError('session.too_many_attempts', 'too many attempts; try again later', { retryAfter: budget.retryAfter });
    return gate(address, work);
  };
}

export type BudgetedHashing = ReturnType<typeof budgetedHashing>;
