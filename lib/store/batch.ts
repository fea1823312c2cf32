import { currentSession, outsideUnit } from './session.js';

/**
 * Group commit for hot, independent database operations (the token exchange's read and its
 * spending write). Calls that arrive while earlier ones are still on their way to the database
 * wait and then go as one command; a call that finds the database idle goes at once, alone.
 *
 * Why: every round trip costs the server CPU of its own (the driver, BSON, a socket write),
 * whatever it carries. Under load, requests overlap, and one command for many of them divides
 * that cost among them; with no load nothing waits, so latency is unchanged.
 *
 * `run` answers, for each key in order, its result or the Error for that key alone; a rejection
 * of `run` itself fails every call of the batch.
 *
 * Session-aware: a batch's command carries many callers' keys, so it runs outside any unit of work
 * (its `run` never sees the session of whichever caller happened to schedule it). A call made inside
 * a unit goes alone, with that unit's session, so that it joins the unit's transaction.
 */
export interface BatchOptions {
  /** Commands of this kind on their way at once; further calls queue for the next one. */
  maxInFlight?: number;
  /** Keys in one command at most. */
  maxBatch?: number;
}

interface Waiting<K, R> {
  key: K;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export function createBatch<K, R>(run: (keys: K[]) => Promise<Array<R | Error>>, { maxInFlight = 2, maxBatch = 200 }: BatchOptions = {}) {
  let queue: Array<Waiting<K, R>> = [];
  let inFlight = 0;
  let scheduled = false;

  function schedule() {
    if (scheduled || inFlight >= maxInFlight || queue.length === 0) return;
    scheduled = true;
    // After this turn of the event loop, so that calls made by requests parsed in the same turn go together.
    setImmediate(flush);
  }

  function flush() {
    scheduled = false;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    inFlight += 1;
    outsideUnit(() => run(batch.map(({ key }) => key)))
      .then(
        (results) =>
          batch.forEach((waiting, index) => {
            const result = results[index];
            if (result instanceof Error) waiting.reject(result);
            else waiting.resolve(result as R);
          }),
        (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
      )
      .finally(() => {
        inFlight -= 1;
        schedule();
      });
    schedule();
  }

  async function alone(key: K): Promise<R> {
    const [result] = await run([key]);
    if (result instanceof Error) throw result;
    return result as R;
  }

  return (key: K) =>
    currentSession()
      ? alone(key)
      : new Promise<R>((resolve, reject) => {
          queue.push({ key, resolve, reject });
          schedule();
        });
}
