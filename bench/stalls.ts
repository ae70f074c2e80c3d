// The event loop under an unauthenticated flood of the signal webhook: 12 connections (bench/flood.ts,
// a process of its own) post ~1 MiB JSON bodies without a signature to POST /api/v1/signals/{agentId}
// of a real listed agent, one kind of body per phase (60,000 keys; a flat array of half a million
// numbers; one long text), while another process (bench/load.ts) sends GET /api at a fixed rate
// (open loop: latency from each request's scheduled start, so a stalled loop shows in full). The
// service runs with its default refusal budgets (the attacker's address is soon answered 429);
// a last phase sends the 60,000 keys to a second instance in the same process (same event loop)
// with the budgets out of reach, so every post is refused on its headers (401). The same GET on
// the same server with nobody attacking, in the same run, is the baseline; target: the median
// under attack below 50 ms. Figures: median and p99 of GET /api, their ratio to the quiet ones,
// how the flood was answered, the server's CPU, and the machine's load average (the two cores
// are shared: other work on the machine shows in both sides).
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app.ts';
import { loadConfig } from '../infra/config.ts';
import { startTestApp, type TestApp } from '../test/support/app.ts';
import { signIn } from '../test/support/auth.ts';
import { listedFollowableAgent } from '../test/support/agents.ts';
import { cpuDuring } from './cpu.ts';
import type { FloodKind, FloodResult, FloodSpec } from './flood.ts';
import { fmt, percentile, report, verdict } from './measure.ts';
import { externalLoad, type LoadRun } from './paired.ts';

const ADMIN = 'stalls-admin@example.test';
const CONNECTIONS = 12;
/** GET /api a second: enough samples for a p99 in a few seconds, too few to load the server themselves. */
const PROBE_RATE = 25;
/** The flood runs this long before the probe starts, so the probe sees it at full strength. */
const RAMP_MS = 1_000;
const TARGET_MEDIAN_MS = 50;
/** How often the server's event loop is sampled for its delay. */
const LOOP_SAMPLE_MS = 10;
const KINDS: Record<FloodKind, string> = {
  keys: 'a JSON object of 60,000 keys',
  numbers: 'a flat array of 524,287 numbers',
  text: 'a text signal of one 1 MiB string',
};
/** The phases: the body, and whether the refusal budgets are at their defaults or out of reach. */
const PHASES: Array<[FloodKind, 'budgets' | 'no budgets']> = [
  ['keys', 'budgets'],
  ['numbers', 'budgets'],
  ['text', 'budgets'],
  ['keys', 'no budgets'],
];
/** Refused posts a minute no flood of this bench reaches. */
const OUT_OF_REACH = 1_000_000_000;

/** Runs bench/flood.ts in a child process for `seconds`. */
function floodFor(spec: FloodSpec): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bench/flood.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`flood exited ${code}`))));
    child.stdin.end(JSON.stringify(spec));
  });
}

const ms = (v: number) => `${fmt(v, v < 10 ? 2 : v < 100 ? 1 : 0)} ms`;

/** GET /api at PROBE_RATE from another process, with the server's CPU and its event loop's delay (this process is the server) meanwhile. */
async function probe(app: TestApp, seconds: number) {
  const delay = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  delay.enable();
  const run = await cpuDuring(process.pid, app.deps.pool, () =>
    externalLoad({ url: app.url, seconds, clients: [{ method: 'GET', path: '/api' }], ratePerSecond: PROBE_RATE }),
  );
  delay.disable();
  // The histogram holds each interval between samples: what exceeds the sampling interval is the delay.
  const late = (ns: number) => Math.max(0, ns / 1e6 - LOOP_SAMPLE_MS);
  return { ...run, loopDelayMs: { p50: late(delay.percentile(50)), p99: late(delay.percentile(99)), max: late(delay.max) } };
}
const loopDelay = (d: { p50: number; p99: number; max: number }) => `event-loop delay p50 ${ms(d.p50)}, p99 ${ms(d.p99)}, max ${ms(d.max)}`;

const p = (r: Pick<LoadRun, 'latenciesMs'>, q: number) => percentile(r.latenciesMs, q);
const load = () =>
  loadavg()
    .map((l) => fmt(l, 2))
    .join(' / ');
const answered = (f: FloodResult) =>
  `${Object.entries(f.statuses)
    .map(([status, n]) => `${fmt(n)}× ${status}`)
    .join(', ')}${f.cutOff ? `, ${fmt(f.cutOff)} cut off mid-body` : ''}`;

type Probed = Awaited<ReturnType<typeof probe>>;

/** One phase: a flood of `kind` at `url` while GET /api is probed on the app; its report rows. */
async function phase(app: TestApp, target: { url: string; path: string }, [kind, budget]: (typeof PHASES)[number], seconds: number, quiet: Probed) {
  const floodSeconds = seconds + RAMP_MS / 1000 + 0.5;
  const flooding = floodFor({ ...target, connections: CONNECTIONS, kind, seconds: floodSeconds });
  await new Promise((r) => setTimeout(r, RAMP_MS));
  const attacked = await probe(app, seconds);
  const flood = await flooding;
  const median = p(attacked.result, 50);
  const rows: Array<[string, string, string?]> = [
    [
      `GET /api under ${kind}, ${budget}`,
      ms(median),
      `median, ${fmt(median / p(quiet.result, 50), 1)}× quiet; p99 ${ms(p(attacked.result, 99))} (${fmt(p(attacked.result, 99) / p(quiet.result, 99), 1)}× quiet); ${attacked.result.failures} non-2xx; target median < ${TARGET_MEDIAN_MS} ms: ${verdict(median < TARGET_MEDIAN_MS)}`,
    ],
    [`    the server`, `${fmt(attacked.cpu.serverMs / seconds / 10, 0)}% CPU`, `of a core while probed; ${loopDelay(attacked.loopDelayMs)}`],
    [
      `    the flood (${KINDS[kind]}, ${fmt(flood.bodyBytes)} bytes)`,
      `${fmt(Object.values(flood.statuses).reduce((a, b) => a + b, 0) / floodSeconds)} /s`,
      `answered ${answered(flood)}; the flooding process's own CPU ${fmt(flood.cpuMs / floodSeconds / 10, 0)}% of a core`,
    ],
  ];
  return rows;
}

export async function stallsBench(seconds: number) {
  const defaults = loadConfig({ NODE_ENV: 'test' });
  const budgets = {
    RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN: String(defaults.RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN),
    RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN: String(defaults.RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN),
  };
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, ...budgets } });
  let unbudgeted: FastifyInstance | undefined;
  try {
    unbudgeted = await buildApp({
      ...app.deps,
      config: { ...app.deps.config, RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN: OUT_OF_REACH, RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN: OUT_OF_REACH },
    });
    const unbudgetedUrl = await unbudgeted.listen({ port: 0, host: '127.0.0.1' });
    const admin = await signIn(app, ADMIN);
    const developer = await signIn(app, 'stalls-dev@example.test');
    const { agentId } = await listedFollowableAgent(
      app,
      { developer: developer.accessToken, admin: admin.accessToken },
      { name: 'Stall target' },
      { live: true },
    );
    await probe(app, 1); // warm-up: JIT, connections
    const loadBefore = load();
    const quiet = await probe(app, seconds);
    const rows: Array<[string, string, string?]> = [
      [
        'GET /api, quiet',
        `${ms(p(quiet.result, 50))}`,
        `median; p99 ${ms(p(quiet.result, 99))}; ${quiet.result.count} calls at ${PROBE_RATE}/s, ${quiet.result.failures} non-2xx; ${loopDelay(quiet.loopDelayMs)}`,
      ],
    ];
    for (const each of PHASES) {
      const target = { url: each[1] === 'budgets' ? app.url : unbudgetedUrl, path: `/api/v1/signals/${agentId}` };
      rows.push(...(await phase(app, target, each, seconds, quiet)));
    }
    console.log(
      `\nEvent-loop stalls: GET /api at ${PROBE_RATE}/s (open loop, separate process) while ${CONNECTIONS} connections (another process) post ~1 MiB unsigned JSON bodies to POST /api/v1/signals/{agentId}, refusal budgets ${budgets.RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN} per address / ${budgets.RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN} per agent a minute (the defaults) or out of reach; ${fmt(seconds)} s per phase; load average (1/5/15 min) ${loadBefore} before, ${load()} after, on ${availableParallelism()} cores`,
    );
    report(rows);
  } finally {
    await unbudgeted?.close();
    await app.close();
  }
}
