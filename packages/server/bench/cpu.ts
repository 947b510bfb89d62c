// CPU time per process, read from /proc (Linux), so a run can say where its CPU went: the server
// under test, or the local PostgreSQL processes. Elsewhere every reading is undefined.
import { readdirSync, readFileSync } from 'node:fs';

/** Kernel clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function statOf(pid: number | string): { comm: string; ms: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    // Fields after the command: state is field 3, utime and stime are fields 14 and 15.
    const fields = stat.slice(close + 2).split(' ');
    return { comm, ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** CPU time (user + system, ms) used so far by `pid`. */
export const processCpuMs = (pid: number): number | undefined => statOf(pid)?.ms;

/** CPU time (ms) used so far by every process named `postgres` on this machine. */
export function postgresCpuMs(): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let total = 0;
  for (const pid of entries) {
    const stat = statOf(pid);
    if (stat?.comm === 'postgres') total += stat.ms;
  }
  return total;
}
