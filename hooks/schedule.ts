/**
 * When to try a failed delivery again. `schedule[n]` is the wait, in seconds, before attempt
 * n + 1; past its end the delivery has failed for good.
 */
export interface RetryPlan {
  schedule: number[];
  /** Random source, for tests; `Math.random` otherwise. */
  random?: () => number;
}

/** Waits are spread by ±20%, so that deliveries that failed together do not all come back together. */
const jitter = 0.2;

const maxRetryAfterMs = 24 * 60 * 60 * 1000;

/**
 * The wait before the next attempt, in milliseconds, after `attemptsMade` attempts; undefined
 * when none is left. A `Retry-After` from the receiver is honoured (never earlier than it asked),
 * up to a day, so that a receiver cannot park a delivery for ever.
 */
export function nextRetryDelay({ schedule, random = Math.random }: RetryPlan, attemptsMade: number, retryAfterMs: number | null = null): number | undefined {
  if (attemptsMade >= schedule.length) return undefined;
  const base = schedule[attemptsMade] * 1000;
  const spread = Math.round(base * (1 - jitter + 2 * jitter * random()));
  return Math.max(spread, Math.min(retryAfterMs ?? 0, maxRetryAfterMs));
}
