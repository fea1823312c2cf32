/**
 * Time as the parts that schedule work read it (the webhook worker: due deliveries, leases, retry
 * delays, disabling). Injected, so that a test moves it forward instead of waiting for it.
 */
export interface Clock {
  now(): Date;
  /** Resolves once `ms` of this clock's time have passed, or at once when cancelled. */
  wait(ms: number): { done: Promise<void>; cancel(): void };
}

export const systemClock: Clock = {
  now: () => new Date(),
  wait(ms) {
    let cancel = () => {};
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      cancel = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    return { done, cancel };
  },
};
