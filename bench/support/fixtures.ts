/** What the benchmark runner and its server children agree on. */

/** What a server child reports about itself. */
export interface ChildStats {
  cpuMicros: number;
  rss: number;
  heapUsed: number;
  commands: number;
}

export const baselineClient = { id: 'baseline-client', secret: 'baseline-client-secret-0123456789' };
export const benchResource = 'https://api.bench.test';
