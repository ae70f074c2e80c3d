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

/** CPU ms so far of each PostgreSQL backend connected to `db`'s database. */
export async function backendsCpuMs(db: Pool): Promise<Map<number, number>> {
  return new Map((await backendPids(db)).map((pid) => [pid, processCpuMs(pid)]));
}

/** CPU ms `db`'s backends spent since `before` (backendsCpuMs); a backend that connected since counts from zero. */
export async function backendsCpuSinceMs(db: Pool, before: Map<number, number>): Promise<number> {
  const after = await backendPids(db);
  return after.reduce((sum, pid) => sum + processCpuMs(pid) - (before.get(pid) ?? 0), 0);
}

export interface CpuSpent {
  serverMs: number;
  databaseMs: number;
}

/** CPU the server process and the database's backends spent while `work` ran. */
export async function cpuDuring<T>(serverPid: number, db: Pool, work: () => Promise<T>): Promise<{ result: T; cpu: CpuSpent }> {
  const { result, cpu } = await cpuOfEachDuring([serverPid], db, work);
  return { result, cpu: { serverMs: cpu.serverMs, databaseMs: cpu.databaseMs } };
}

/** CpuSpent of several server processes (a layout's roles): `serverMs` is their sum, `processesMs` each one's, in the order given. */
export interface CpuOfEach extends CpuSpent {
  processesMs: number[];
}

/** CPU each of the server processes `pids` and the database's backends spent while `work` ran. */
export async function cpuOfEachDuring<T>(pids: number[], db: Pool, work: () => Promise<T>): Promise<{ result: T; cpu: CpuOfEach }> {
  const before = await backendsCpuMs(db);
  const servers0 = pids.map(processCpuMs);
  const result = await work();
  const processesMs = pids.map((pid, i) => processCpuMs(pid) - servers0[i]!);
  const serverMs = processesMs.reduce((a, b) => a + b, 0);
  return { result, cpu: { serverMs, processesMs, databaseMs: await backendsCpuSinceMs(db, before) } };
}

/** A process's resident memory now and at its peak (VmRSS, VmHWM), in MB; 0 once it has gone. */
export function processRssMb(pid: number): { now: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return { now: 0, peak: 0 };
  }
}
