import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on Linux's usual builds. */
const ticksPerSecond = 100;

/** utime + stime (fields 14 and 15) and cutime + cstime (16 and 17) of a /proc stat line, in ticks. */
function statTimes(pid: number | 'self'): { own: number; reaped: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) };
}

/**
 * The CPU time of the processes this one started (the claims sandbox runs in one), in µs: those
 * still running and those that ended and were reaped. A server's figures count it as the server's
 * own, since it is work the server asked for. Linux only (/proc); elsewhere 0.
 */
export function childrenCpuMicros(): number {
  try {
    let ticks = statTimes('self').reaped;
    for (const task of readdirSync('/proc/self/task')) {
      for (const pid of readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
        try {
          ticks += statTimes(Number(pid)).own;
        } catch {
          // It ended between the listing and the read: counted among the reaped at the next reading.
        }
      }
    }
    return (ticks * 1_000_000) / ticksPerSecond;
  } catch {
    return 0;
  }
}
