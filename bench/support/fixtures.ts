/** What the benchmark runner and its server children agree on. */

/** What a server child reports about itself. */
export interface ChildStats {
  /** CPU time of every thread of the process. */
  cpuMicros: number;
  /** Time the main thread's event loop spent busy (event-loop utilization), in milliseconds. */
  busyMs: number;
  rss: number;
  heapUsed: number;
  commands: number;
}

export const baselineClient = { id: 'baseline-client', secret: 'baseline-client-secret-0123456789' };
export const benchResource = 'https://api.bench.test';
