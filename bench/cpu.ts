// CPU time of the processes behind one side of a benchmark, read from /proc (Linux): the server
// process and the PostgreSQL backends connected to that side's database. Per request, it shows
// where a side spends the two cores the benchmark shares, which throughput alone does not.
import { readFileSync } from 'node:fs';
import type { Pool } from '../infra/db.ts';

/** Linux reports utime and stime in clock ticks of 1/100 s (USER_HZ). */
const TICK_MS = 10;

/** User plus system CPU of a process so far, in ms; 0 once it has gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the process state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

async function backendPids(db: Pool): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  return rows.map((r) => r.pid);
}

export interface CpuSpent {
  serverMs: number;
  databaseMs: number;
}

/** CPU the server process and the database's backends spent while `work` ran. */
export async function cpuDuring<T>(serverPid: number, db: Pool, work: () => Promise<T>): Promise<{ result: T; cpu: CpuSpent }> {
  const before = new Map((await backendPids(db)).map((pid) => [pid, processCpuMs(pid)]));
  const server0 = processCpuMs(serverPid);
  const result = await work();
  const serverMs = processCpuMs(serverPid) - server0;
  // A backend that connected during the run counts from zero.
  const after = await backendPids(db);
  const databaseMs = after.reduce((sum, pid) => sum + processCpuMs(pid) - (before.get(pid) ?? 0), 0);
  return { result, cpu: { serverMs, databaseMs } };
}
