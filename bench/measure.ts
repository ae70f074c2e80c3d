// Small measuring helpers shared by the benchmarks.

export interface Run {
  count: number;
  seconds: number;
  perSecond: number;
  latenciesMs: number[];
}

/** `clients` concurrent loops of `op` for `seconds`; latencies of every call. */
export async function closedLoop(clients: number, seconds: number, op: (client: number, i: number) => Promise<unknown>): Promise<Run> {
  const latenciesMs: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; performance.now() < until; i++) {
        const t0 = performance.now();
        await op(client, i);
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { count: latenciesMs.length, seconds: elapsed, perSecond: latenciesMs.length / elapsed, latenciesMs };
}

/**
 * `rate` requests a second for `seconds`, each started on its schedule whether or not earlier ones
 * have answered (open loop), round-robin over `clients`; each latency runs from the request's
 * scheduled start, so a stall (of the server or of this client) shows in the tail instead of
 * delaying the requests behind it unseen (coordinated omission).
 */
export async function openLoop(rate: number, seconds: number, clients: number, op: (client: number, i: number) => Promise<unknown>): Promise<Run> {
  const latenciesMs: number[] = [];
  const total = Math.max(1, Math.round(rate * seconds));
  const inFlight: Promise<unknown>[] = [];
  const started = performance.now();
  const due = (i: number) => started + (i * 1000) / rate;
  for (let i = 0; i < total; ) {
    const now = performance.now();
    for (; i < total && due(i) <= now; i++) {
      const scheduled = due(i);
      inFlight.push(op(i % clients, Math.floor(i / clients)).then(() => latenciesMs.push(performance.now() - scheduled)));
    }
    if (i < total) await new Promise((r) => setTimeout(r, Math.max(0, due(i) - performance.now())));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  return { count: latenciesMs.length, seconds: elapsed, perSecond: latenciesMs.length / elapsed, latenciesMs };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function report(rows: Array<[string, string, string?]>): void {
  const w = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v, note] of rows) console.log(`  ${k.padEnd(w)}  ${v.padStart(14)}${note ? `   ${note}` : ''}`);
}

export const verdict = (ok: boolean) => (ok ? 'meets target' : 'BELOW TARGET');
