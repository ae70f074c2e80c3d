// Load runs from a separate client process (bench/load.ts) and paired rounds of two sides, shared
// by the benchmarks that compare ours with the conventional baseline (bench/http.ts, bench/chatter.ts).
import { spawn } from 'node:child_process';
import type { Pool } from '../infra/db.ts';
import { cpuDuring, type CpuSpent } from './cpu.ts';
import { fmt, percentile, verdict, type Run } from './measure.ts';

export type LoadRun = Run & { failures: number; statuses: Record<string, number>; clientCpuMsPerRequest: number; cpu: CpuSpent; signing?: SigningCost };

/** One concurrent client: what it sends, cycling through `bodies`; a webhook client signs each body anew instead of sending a token. */
export interface LoadClient {
  /** the server this client calls, when not the spec's `url` (the split layout's clients alternate between its API processes) */
  url?: string;
  method: string;
  path: string;
  token?: string;
  bodies?: unknown[];
  /** the agent's signing secret: each request carries a fresh signature (infra/signing/webhook.ts) */
  webhookSecret?: string;
  /** extra headers sent with every request of this client (an Idempotency-Key) */
  headers?: Record<string, string>;
  /** API key mode: x-api-key, and x-timestamp + x-signature made anew for each request (infra/api-keys.ts), since a signature is accepted once */
  apiKey?: { key: string; secret: string };
}

/** What signing requests (API keys, webhooks) cost the load generator (bench/load.ts). */
export interface SigningCost {
  /** signatures made before the clock started (outside the measured window), and during the run once those ran out */
  presigned: number;
  inline: number;
  /** time spent signing, in all */
  ms: number;
  /** the latest x-timestamp signed: the next run's timestamps start after it (else a signature could repeat) */
  lastTimestampMs: number;
}

export interface LoadSpec {
  url: string;
  seconds: number;
  /** one entry per concurrent client (bench/load.ts) */
  clients: LoadClient[];
  /** a fixed rate (requests a second, open loop, round-robin over the clients) instead of closed loops */
  ratePerSecond?: number;
  /** API-key clients: this many signatures per client are made before the clock starts, their cost timed apart */
  presign?: number;
  /** signing clients (API keys, webhooks): timestamps start after this (epoch ms), the previous run's signing.lastTimestampMs */
  timestampsAfterMs?: number;
}

/** Runs bench/load.ts in a child process (a separate client, not sharing the server's event loop). */
export function externalLoad(spec: LoadSpec): Promise<Omit<LoadRun, 'cpu'>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bench/load.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited ${code}`))));
    child.stdin.end(JSON.stringify(spec));
  });
}

export const latency = (r: Run) => `p50 ${fmt(percentile(r.latenciesMs, 50), 1)} ms, p99 ${fmt(percentile(r.latenciesMs, 99), 1)} ms`;
/** ms of CPU per request: the server process (ours: with its projectors) and its database backends. */
export const cpuPer = (r: LoadRun) => `${fmt(r.cpu.serverMs / Math.max(1, r.count), 2)} + ${fmt(r.cpu.databaseMs / Math.max(1, r.count), 2)} ms`;
export const failed = (r: LoadRun) => `${r.failures}${r.failures ? ` ${JSON.stringify(r.statuses)}` : ''}`;

/** The middle value (the mean of the two middle ones for an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rounds per pair of sides; each side runs `seconds` in all, split over the rounds. */
export const ROUNDS = 4;

/** Several runs of one side as one: counts, time and latencies added up. */
export function merged(runs: LoadRun[]): LoadRun {
  const count = runs.reduce((n, r) => n + r.count, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    count,
    seconds,
    perSecond: count / seconds,
    latenciesMs: runs.flatMap((r) => r.latenciesMs),
    failures: runs.reduce((n, r) => n + r.failures, 0),
    statuses,
    clientCpuMsPerRequest: runs.reduce((n, r) => n + r.clientCpuMsPerRequest * r.count, 0) / Math.max(1, count),
    cpu: { serverMs: runs.reduce((n, r) => n + r.cpu.serverMs, 0), databaseMs: runs.reduce((n, r) => n + r.cpu.databaseMs, 0) },
  };
}

export interface Paired {
  ours: LoadRun;
  conventional: LoadRun;
  /** each round's rates, ours and theirs (a trend across rounds shows here) */
  rounds: Array<[number, number]>;
  /** the unmeasured warm-up runs (they did work too: a money check counts them) */
  warmup: { ours: LoadRun; conventional: LoadRun };
  /** the median of the rounds' ratios */
  ratio: number;
  ratios: number[];
}

/**
 * Ours and the conventional side in alternating rounds, ABBA (ours, theirs, theirs, ours, …), so a
 * shared machine that speeds up or slows down during the run weighs on both sides alike; the ratio
 * is the median of the rounds' ratios. `round` is the round's number (bodies may depend on it).
 */
export async function paired(run: (side: 'ours' | 'conventional', round: number) => Promise<LoadRun>): Promise<Paired> {
  // Both sides warm first (JIT, connections, PostgreSQL's caches), unmeasured: a cold first round
  // of the baseline ran ~30% slower than its later ones and flattered our first ratio.
  const warmup = { ours: await run('ours', -1), conventional: await run('conventional', -1) };
  const ours: LoadRun[] = [];
  const theirs: LoadRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order: Array<'ours' | 'conventional'> = round % 2 === 0 ? ['ours', 'conventional'] : ['conventional', 'ours'];
    for (const side of order) (side === 'ours' ? ours : theirs).push(await run(side, round));
  }
  const ratios = ours.map((o, i) => o.perSecond / theirs[i]!.perSecond);
  const rounds = ours.map((o, i): [number, number] => [o.perSecond, theirs[i]!.perSecond]);
  return { ours: merged(ours), conventional: merged(theirs), rounds, warmup, ratio: median(ratios), ratios };
}

/**
 * Ours against several baselines in the same rounds: each round runs every side once, in an order
 * that turns round by round (ours first, then last), so drift weighs on all alike; each baseline's
 * ratio is the median over the rounds of ours / it, as `paired` gives for one.
 */
export async function pairedWith<B extends string>(
  baselines: readonly B[],
  run: (side: 'ours' | B, round: number) => Promise<LoadRun>,
): Promise<Record<B, Paired>> {
  const sides: Array<'ours' | B> = ['ours', ...baselines];
  const warmup = new Map<'ours' | B, LoadRun>();
  for (const side of sides) warmup.set(side, await run(side, -1));
  const runs = new Map<'ours' | B, LoadRun[]>(sides.map((side) => [side, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) runs.get(side)!.push(await run(side, round));
  }
  const ours = runs.get('ours')!;
  const result = {} as Record<B, Paired>;
  for (const b of baselines) {
    const theirs = runs.get(b)!;
    const ratios = ours.map((o, i) => o.perSecond / theirs[i]!.perSecond);
    result[b] = {
      ours: merged(ours),
      conventional: merged(theirs),
      rounds: ours.map((o, i): [number, number] => [o.perSecond, theirs[i]!.perSecond]),
      warmup: { ours: warmup.get('ours')!, conventional: warmup.get(b)! },
      ratio: median(ratios),
      ratios,
    };
  }
  return result;
}

/** The rounds behind a paired ratio, and the verdict against `target` when there is one. */
export const ratioNote = (p: Paired, target?: number) =>
  `median of ${p.ratios.length} rounds (${p.ratios.map((r) => fmt(r, 2)).join(', ')}; /s ${p.rounds.map(([o, c]) => `${fmt(o)}:${fmt(c)}`).join(' ')})${
    target === undefined ? '' : `; target >= ${target}: ${verdict(p.ratio >= target)}`
  }`;

/** A load run with the CPU the server process `serverPid` and `db`'s backends spent meanwhile. */
export async function measuredLoad(serverPid: number, db: Pool, spec: LoadSpec): Promise<LoadRun> {
  const { result, cpu } = await cpuDuring(serverPid, db, () => externalLoad(spec));
  return { ...result, cpu };
}
