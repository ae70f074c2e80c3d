// The layout users run, on this one machine: `npm start` (every role in one process) against the
// split layout (`start:api` twice, `start:projections`, `start:workers`), each as OS processes
// (bench/layout-role.ts, main.ts's runtime) on a fresh database and Redis scope of its own, driven
// by the same client process (bench/load.ts: 16 users; in the split layout the users alternate
// between its two API processes, there being no load balancer) in paired rounds, the order turning
// each round (bench/paired.ts): follows, GET subscriptions, GET users/me, withdrawals. Per layout:
// rates, latencies, non-2xx, projector lag during follows, CPU per request of each process and of
// the database, resident memory of each process; then split / all-in-one.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../infra/config.ts';
import type { RoleName } from '../runtime.ts';
import { startTestApp, type TestApp } from '../test/support/app.ts';
import { spawnServiceProcess, type SpawnedProcess } from '../test/support/process.ts';
import { cpuOfEachDuring, processRssMb } from './cpu.ts';
import { ADMIN, AGENTS, followBodies, followEveryAgent, fund, PATH, seedFlow, WITHDRAW_USD, withdrawnUsd, withdrawPath } from './http.ts';
import { fmt, percentile, report } from './measure.ts';
import { externalLoad, failed, latency, paired, ratioNote, ROUNDS, type LoadClient, type LoadRun, type Paired } from './paired.ts';

const ENTRY = fileURLToPath(new URL('./layout-role.ts', import.meta.url));
const LAYOUTS = { 'all-in-one': ['all'], split: ['api', 'api', 'projections', 'workers'] } satisfies Record<string, RoleName[]>;
type LayoutName = keyof typeof LAYOUTS;
/** paired() compares 'ours' with 'conventional': here the split layout with the all-in-one, so its ratio is split / all-in-one */
const LAYOUT_OF = { ours: 'split', conventional: 'all-in-one' } as const;

interface Layout {
  name: LayoutName;
  /** the setup's API in this process (idle during the runs), its database and Redis scope */
  app: TestApp;
  roles: RoleName[];
  processes: SpawnedProcess[];
  apiUrls: string[];
  lagFile: string;
  /** when the measured follow runs ran (epoch ms): the projector lag counted is that of events appended then */
  followWindows: Array<[number, number]>;
  /** CPU ms of each process (in `roles` order) over the measured rounds, per request kind */
  cpuMs: Record<string, number[]>;
}

/** The layout's processes on a fresh database, with the same environment each (the service's defaults, but for the logs and the rate limits). */
async function startLayout(name: LayoutName): Promise<Layout> {
  const REDIS_PREFIX = `bench-layout-${randomBytes(4).toString('hex')}`;
  const app = await startTestApp({
    durable: true,
    roles: { projections: false, workers: false },
    redisKeyPrefix: '',
    config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX },
  });
  const lagFile = join(tmpdir(), `${REDIS_PREFIX}-lag.json`);
  const env = {
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATABASE_POOL_SIZE: String(loadConfig({}).DATABASE_POOL_SIZE),
    REDIS_PREFIX,
    ADMIN_EMAILS: ADMIN,
    SMTP_URL: app.deps.config.SMTP_URL!,
    LAG_FILE: lagFile,
  };
  const roles: RoleName[] = LAYOUTS[name];
  const processes = roles.map((role) => spawnServiceProcess(app, role, env, ENTRY));
  const urls = await Promise.all(processes.map((p) => p.started)).catch(async (err) => {
    await Promise.all(processes.map((p) => p.stop()));
    await app.close();
    throw err;
  });
  const apiUrls = urls.filter((_, i) => roles[i] === 'api' || roles[i] === 'all');
  return { name, app, roles, processes, apiUrls, lagFile, followWindows: [], cpuMs: {} };
}

/** Stops the processes (the projecting one writes its lags), drops the database; the lags of the measured follows. */
async function stopLayout(layout: Layout): Promise<number[]> {
  await Promise.all(layout.processes.map((p) => p.stop()));
  await layout.app.close();
  const { createdAt, lagMs } = JSON.parse(readFileSync(layout.lagFile, 'utf8')) as { createdAt: number[]; lagMs: number[] };
  return lagMs.filter((_, i) => layout.followWindows.some(([from, to]) => createdAt[i]! >= from && createdAt[i]! <= to));
}

/** One load run on `layout`: user i calls the layout's API processes in turn; CPU of each process and of the database. */
async function run(layout: Layout, kind: string, seconds: number, round: number, clients: Array<Omit<LoadClient, 'url'>>): Promise<LoadRun> {
  const from = Date.now();
  const spec = { url: layout.apiUrls[0]!, seconds, clients: clients.map((c, i) => ({ ...c, url: layout.apiUrls[i % layout.apiUrls.length] })) };
  const pids = layout.processes.map((p) => p.child.pid!);
  const { result, cpu } = await cpuOfEachDuring(pids, layout.app.deps.pool, () => externalLoad(spec));
  if (round >= 0) {
    const total = (layout.cpuMs[kind] ??= pids.map(() => 0));
    for (const [i, ms] of cpu.processesMs.entries()) total[i]! += ms;
    if (kind === 'follow') layout.followWindows.push([from, Date.now()]);
  }
  return { ...result, cpu };
}

/** CPU per request of each process and of the database, and in all. */
function cpuPerRequest(layout: Layout, kind: string, r: LoadRun): string {
  const per = (ms: number) => fmt(ms / Math.max(1, r.count), 2);
  const parts = layout.roles.map((role, i) => `${role} ${per(layout.cpuMs[kind]![i]!)}`);
  return `${parts.join(' + ')} + database ${per(r.cpu.databaseMs)} = ${per(r.cpu.serverMs + r.cpu.databaseMs)} ms`;
}

const totalCpu = (r: LoadRun) => (r.cpu.serverMs + r.cpu.databaseMs) / Math.max(1, r.count);

export async function layoutBench(seconds: number) {
  const layouts = {} as Record<LayoutName, Layout>;
  const lags = {} as Record<LayoutName, number[]>;
  try {
    for (const name of Object.keys(LAYOUTS) as LayoutName[]) layouts[name] = await startLayout(name);
    const seeds = await Promise.all(Object.values(layouts).map((l) => seedFlow(l.app)));
    // Both seeds made the same agents and users in the same order; each layout uses its own ids and tokens.
    const seedOf = (l: Layout) => seeds[Object.values(layouts).indexOf(l)]!;
    const part = Math.max(2, seconds / ROUNDS);
    const load0 = loadavg();
    const phase = (kind: string, clients: (l: Layout, round: number) => Array<Omit<LoadClient, 'url'>>) =>
      paired((side, round) => {
        const layout = layouts[LAYOUT_OF[side]];
        return run(layout, kind, part, round, clients(layout, round));
      });
    const follows = await phase('follow', (l, round) =>
      seedOf(l).users.map((u) => ({ method: 'POST', path: PATH, token: u.accessToken, bodies: followBodies(seedOf(l).agentIds, round) })),
    );
    const rows = await Promise.all(
      Object.values(layouts).map((l) => followEveryAgent({ url: l.apiUrls[0]! }, l.app.deps.pool, seedOf(l).users, seedOf(l).agentIds)),
    );
    const lists = await phase('GET subscriptions', (l) => seedOf(l).users.map((u) => ({ method: 'GET', path: PATH, token: u.accessToken })));
    const mes = await phase('GET users/me', (l) => seedOf(l).users.map((u) => ({ method: 'GET', path: '/api/v1/users/me', token: u.accessToken })));
    const withdrawAgent = (l: Layout, user: number) => seedOf(l).agentIds[user % AGENTS]!;
    for (const l of Object.values(layouts)) await fund({ url: l.apiUrls[0]! }, seedOf(l).users, (i) => withdrawAgent(l, i));
    const withdrawals = await phase('withdraw', (l) =>
      seedOf(l).users.map((u, i) => ({ method: 'POST', path: withdrawPath(withdrawAgent(l, i)), token: u.accessToken, bodies: [{ amountUsd: WITHDRAW_USD }] })),
    );
    const moneyOk = await Promise.all(
      (['ours', 'conventional'] as const).map(async (side) => {
        const [r, warm] = [withdrawals[side], withdrawals.warmup[side]];
        const expected = Math.round((r.count - r.failures + warm.count - warm.failures) * WITHDRAW_USD * 100) / 100;
        const pool = layouts[LAYOUT_OF[side]].app.deps.pool;
        for (const until = Date.now() + 5000; (await withdrawnUsd(pool)) !== expected && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
        return (await withdrawnUsd(pool)) === expected;
      }),
    );
    const load1 = loadavg();
    const rss = Object.values(layouts).map((l) => `${l.name}: ${l.roles.map((role, i) => memory(role, l.processes[i]!.child.pid!)).join(', ')}`);
    for (const l of Object.values(layouts)) lags[l.name] = await stopLayout(l);

    const kinds: Array<[string, Paired]> = [
      ['follow', follows],
      ['GET subscriptions', lists],
      ['GET users/me', mes],
      ['withdraw', withdrawals],
    ];
    console.log(
      [
        '\nThe layout users run: npm start (all roles in one process) against the split layout (start:api x2, start:projections, start:workers)',
        `on this machine (${availableParallelism()} cores; ${seeds[0]!.users.length} users in a separate client process, alternating between`,
        `the split layout's API processes; ${ROUNDS} rounds of ${fmt(part, 1)} s per layout, the order turning each round; durable commits)`,
      ].join(' '),
    );
    report([
      ...kinds.flatMap(
        ([kind, p]): Array<[string, string, string?]> =>
          (['conventional', 'ours'] as const).flatMap((side): Array<[string, string, string?]> => {
            const [layout, r] = [layouts[LAYOUT_OF[side]], p[side]];
            return [
              [`${kind}, ${layout.name}`, `${fmt(r.perSecond)} /s`, `${latency(r)}; non-2xx ${failed(r)}; ${r.count} calls`],
              ['    CPU per request', cpuPerRequest(layout, kind, r)],
            ];
          }),
      ),
      ...(['conventional', 'ours'] as const).map((side): [string, string, string] => {
        const lag = lags[LAYOUT_OF[side]];
        return [
          `projector lag during follows, ${LAYOUT_OF[side]}`,
          `${fmt(percentile(lag, 99), 1)} ms`,
          `p99 (p50 ${fmt(percentile(lag, 50), 1)} ms) of ${lag.length} events`,
        ];
      }),
      ['rows per GET subscriptions answer', rows.map((r) => `${r.lo}..${r.hi}`).join(' / '), 'all-in-one / split: must be equal'],
      ['withdrawals paid out = 2xx answers', moneyOk.every(Boolean) ? 'yes' : 'NO', `split ${moneyOk[0]}, all-in-one ${moneyOk[1]}`],
      ['resident memory (now, peak)', '', rss.join('; ')],
      [
        'load average (1, 5, 15 min)',
        load1.map((l) => fmt(l, 2)).join(', '),
        `before the rounds ${load0.map((l) => fmt(l, 2)).join(', ')}; cores shared with others`,
      ],
    ]);
    console.log('  split / all-in-one');
    report(
      kinds.flatMap(
        ([kind, p]): Array<[string, string, string?]> => [
          [`    ${kind}, rate`, fmt(p.ratio, 2), ratioNote(p)],
          [`    ${kind}, CPU per request`, fmt(totalCpu(p.ours) / totalCpu(p.conventional), 2), 'every process and the database'],
          [`    ${kind}, p99`, fmt(percentile(p.ours.latenciesMs, 99) / percentile(p.conventional.latenciesMs, 99), 2)],
        ],
      ),
    );
  } finally {
    for (const l of Object.values(layouts)) if (!lags[l.name]) await stopLayout(l).catch(() => {});
  }
}

const memory = (role: RoleName, pid: number) => {
  const { now, peak } = processRssMb(pid);
  return `${role} ${fmt(now)}/${fmt(peak)} MB`;
};
