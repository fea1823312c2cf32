/**
 * What one custom-claims sandbox run costs, alone (`npm run bench:sandbox`; see BENCHMARKS.md):
 * runs of one small script one at a time, after some to warm up, and the wall time and CPU per
 * run, in this process (the service's side) and in the sandbox's process.
 *
 *   BENCH_SANDBOX_RUNS=2000 BENCH_SANDBOX_WARM=300 (the defaults)
 */
import { Sandbox } from '../provider/sandbox/index.js';
import { childrenCpuMicros } from './support/child-cpu.js';

const runs = Number(process.env.BENCH_SANDBOX_RUNS ?? 2000);
const warm = Number(process.env.BENCH_SANDBOX_WARM ?? 300);
const script = 'function getCustomJwtClaims({ token }) { return { tier: "gold", sub: token.sub } }';

const sandbox = new Sandbox({ timeoutMs: 5000 });
try {
  for (let i = 0; i < warm; i += 1) await sandbox.run(script, { token: { sub: `u${i}` } });
  const [started, own, children] = [performance.now(), process.cpuUsage(), childrenCpuMicros()];
  for (let i = 0; i < runs; i += 1) await sandbox.run(script, { token: { sub: `u${i}` } });
  const wallMicros = (performance.now() - started) * 1000;
  const { user, system } = process.cpuUsage(own);
  const perRun = (micros: number) => `${(micros / runs).toFixed(0)} µs`;
  console.log(`${runs} sandbox runs, one at a time, Node ${process.version}:`);
  console.log(`  wall time per run: ${perRun(wallMicros)}`);
  console.log(`  CPU per run in this process: ${perRun(user + system)}`);
  console.log(`  CPU per run in the sandbox's process: ${perRun(childrenCpuMicros() - children)} (Linux only; 10 ms ticks)`);
} finally {
  await sandbox.close();
}
