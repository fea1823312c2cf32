import type { Clock } from '../../lib/clock.js';

/** A clock the test moves forward: the system's time plus what the test has added. */
export interface TestClock extends Clock {
  advance(ms: number): void;
}

export function createTestClock(): TestClock {
  let added = 0;
  const now = () => Date.now() + added;
  const waiters = new Set<{ until: number; resolve(): void; timer?: NodeJS.Timeout }>();
  /** Resolves a waiter whose time has come, or sets a timer for when it will. */
  const check = (waiter: { until: number; resolve(): void; timer?: NodeJS.Timeout }) => {
    clearTimeout(waiter.timer);
    const left = waiter.until - now();
    if (left > 0) {
      waiter.timer = setTimeout(() => check(waiter), left);
      return;
    }
    waiters.delete(waiter);
    waiter.resolve();
  };
  return {
    now: () => new Date(now()),
    wait(ms) {
      let waiter!: { until: number; resolve(): void; timer?: NodeJS.Timeout };
      const done = new Promise<void>((resolve) => {
        waiter = { until: now() + ms, resolve };
      });
      waiters.add(waiter);
      check(waiter);
      return {
        done,
        cancel: () => {
          clearTimeout(waiter.timer);
          waiters.delete(waiter);
          waiter.resolve();
        },
      };
    },
    advance(ms) {
      added += ms;
      for (const waiter of [...waiters]) check(waiter);
    },
  };
}
