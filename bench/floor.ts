// The floor of a signed-in request: GET /api/v1/users/me (token check, identity, the user's row,
// the plugin chain, the answer written) against Fastify's hello-world in a process of its own
// (bench/floor/hello.ts), both loaded by the same client process (bench/load.ts) at 16 clients in
// paired ABBA rounds (bench/paired.ts). Target: ours at least 0.35 of hello-world's rate.
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startTestApp } from '../test/support/app.ts';
import { manyUsers } from '../test/support/auth.ts';
import { spawnBenchServer } from './conventional/start.ts';
import { processCpuMs } from './cpu.ts';
import { fmt, report } from './measure.ts';
import { cpuPer, externalLoad, failed, latency, measuredLoad, paired, ratioNote, ROUNDS, type LoadRun } from './paired.ts';

const CLIENTS = 16;
const TARGET = 0.35;
const ME = '/api/v1/users/me';

/** bench/floor/hello.ts in a process of its own; resolves once it prints its URL. */
const startHello = () => spawnBenchServer(fileURLToPath(new URL('./floor/hello.ts', import.meta.url)));

export async function floorBench(seconds: number) {
  // As in service: precompiled answers are not compared with zod's encoding (that check is for tests, api/plugins/serializer.ts).
  const app = await startTestApp({ durable: true, config: { NODE_ENV: 'development' } });
  const hello = await startHello();
  try {
    const users = await manyUsers(app, 'floor', CLIENTS);
    const part = Math.max(2, seconds / ROUNDS);
    const load0 = loadavg();
    const runs = await paired(async (side): Promise<LoadRun> => {
      if (side === 'ours')
        return measuredLoad(process.pid, app.deps.pool, {
          url: app.url,
          seconds: part,
          clients: users.map((u) => ({ method: 'GET', path: ME, token: u.accessToken })),
        });
      // Hello-world has no database: its CPU is its process's alone.
      const before = processCpuMs(hello.pid);
      const run = await externalLoad({ url: hello.url, seconds: part, clients: users.map((u) => ({ method: 'GET', path: '/', token: u.accessToken })) });
      return { ...run, cpu: { serverMs: processCpuMs(hello.pid) - before, databaseMs: 0 } };
    });
    const load1 = loadavg();
    const { ours, conventional: helloRun } = runs;
    console.log(
      `\nThe floor: GET ${ME} against Fastify's hello-world (${CLIENTS} clients in a separate process; ${ROUNDS} ABBA rounds of ${fmt(part, 1)} s per side)`,
    );
    report([
      [`GET ${ME}, ours`, `${fmt(ours.perSecond)} /s`, `${latency(ours)}; non-2xx ${failed(ours)}`],
      ['hello-world', `${fmt(helloRun.perSecond)} /s`, `${latency(helloRun)}; non-2xx ${failed(helloRun)}`],
      ['ours / hello-world', fmt(runs.ratio, 2), ratioNote(runs, TARGET)],
      ['    server + database CPU per request, ours', cpuPer(ours), `hello-world ${cpuPer(helloRun)}`],
      ['    client CPU per request', `${fmt(ours.clientCpuMsPerRequest, 3)} ms`, `hello-world run ${fmt(helloRun.clientCpuMsPerRequest, 3)} ms`],
      [
        '    load average (1, 5, 15 min)',
        load1.map((l) => fmt(l, 2)).join(', '),
        `before the rounds ${load0.map((l) => fmt(l, 2)).join(', ')}; 2 cores shared with others`,
      ],
    ]);
  } finally {
    await hello.stop();
    await app.close();
  }
}
