// The event loop under an unauthenticated flood of the signal webhook: 12 connections (bench/flood.ts,
// a process of its own) post ~1 MiB JSON bodies without a signature to POST /api/v1/signals/{agentId}
// of a real listed agent, one kind of body per phase (60,000 keys; a flat array of half a million
// numbers; one long text), while another process (bench/load.ts) sends GET /api at a fixed rate
// (open loop: latency from each request's scheduled start, so a stalled loop shows in full). The
// same GET on the same server with nobody attacking, in the same run, is the baseline; target:
// the median under attack below 50 ms. Figures: median and p99 of GET /api, their ratio to the
// quiet ones, how the flood was answered, the server's CPU, and the machine's load average.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
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
const KINDS: Array<[FloodKind, string]> = [
  ['keys', 'a JSON object of 60,000 keys'],
  ['numbers', 'a flat array of 524,287 numbers'],
  ['text', 'a text signal of one 1 MiB string'],
];

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

const probe = (app: TestApp, seconds: number) =>
  cpuDuring(process.pid, app.deps.pool, () => externalLoad({ url: app.url, seconds, clients: [{ method: 'GET', path: '/api' }], ratePerSecond: PROBE_RATE }));

const ms = (v: number) => `${fmt(v, v < 10 ? 2 : v < 100 ? 1 : 0)} ms`;
const p = (r: Pick<LoadRun, 'latenciesMs'>, q: number) => percentile(r.latenciesMs, q);
const load = () => loadavg().map((l) => fmt(l, 2)).join(' / ');
const answered = (f: FloodResult) =>
  `${Object.entries(f.statuses)
    .map(([status, n]) => `${fmt(n)}× ${status}`)
    .join(', ')}${f.cutOff ? `, ${fmt(f.cutOff)} cut off mid-body` : ''}`;

export async function stallsBench(seconds: number) {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  try {
    const admin = await signIn(app, ADMIN);
    const developer = await signIn(app, 'stalls-dev@example.test');
    const { agentId } = await listedFollowableAgent(app, { developer: developer.accessToken, admin: admin.accessToken }, { name: 'Stall target' }, { live: true });
    const path = `/api/v1/signals/${agentId}`;
    await probe(app, 1); // warm-up: JIT, connections
    const loadBefore = load();
    const quiet = await probe(app, seconds);
    const rows: Array<[string, string, string?]> = [
      ['GET /api, quiet', `${ms(p(quiet.result, 50))}`, `median; p99 ${ms(p(quiet.result, 99))}; ${quiet.result.count} calls at ${PROBE_RATE}/s, ${quiet.result.failures} non-2xx`],
    ];
    const medians: number[] = [];
    for (const [kind, what] of KINDS) {
      const flooding = floodFor({ url: app.url, path, connections: CONNECTIONS, kind, seconds: seconds + RAMP_MS / 1000 + 0.5 });
      await new Promise((r) => setTimeout(r, RAMP_MS));
      const attacked = await probe(app, seconds);
      const flood = await flooding;
      const median = p(attacked.result, 50);
      medians.push(median);
      rows.push(
        [`GET /api under ${kind}`, ms(median), `median, ${fmt(median / p(quiet.result, 50), 1)}× quiet; p99 ${ms(p(attacked.result, 99))} (${fmt(p(attacked.result, 99) / p(quiet.result, 99), 1)}× quiet); ${attacked.result.failures} non-2xx; target median < ${TARGET_MEDIAN_MS} ms: ${verdict(median < TARGET_MEDIAN_MS)}`],
        [`    the flood (${what}, ${fmt(flood.bodyBytes)} bytes)`, `${fmt(Object.values(flood.statuses).reduce((a, b) => a + b, 0) / (seconds + RAMP_MS / 1000 + 0.5))} /s`, `answered ${answered(flood)}; server CPU ${fmt(attacked.cpu.serverMs / seconds / 10, 0)}% of a core while probed`],
      );
    }
    console.log(
      `\nEvent-loop stalls: GET /api at ${PROBE_RATE}/s (open loop, separate process) while ${CONNECTIONS} connections (another process) post ~1 MiB unsigned JSON bodies to POST /api/v1/signals/{agentId}; ${fmt(seconds)} s per phase; load average (1/5/15 min) ${loadBefore} before, ${load()} after, on ${availableParallelism()} cores`,
    );
    report(rows);
    return { quietMedianMs: p(quiet.result, 50), attackedMediansMs: medians };
  } finally {
    await app.close();
  }
}

