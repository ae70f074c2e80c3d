// The auditors' figure: `audit verify` replay in events per second over 1,000,000 pool events on the
// PostgreSQL store (target >= 100,000/s). The events are decided by the pool's own decider from a
// seeded random mix (follows, adds, withdrawals, trades opened, marked and closed, fees, venue
// legs and observations, settings changes, stops), a whole pool per append, 16 appends in flight
// (the store's group commit batches them). The subscriptions read model is then rebuilt, and the
// timed replay is the one `npm run audit -- verify` runs; the read-model comparison is timed apart.
// Each pass reports its rate and the CPU per event of this process and of the database's server
// processes (from /proc): on a shared machine the rates move with the load, the CPU much less.
import { poolDecider, type PoolCommand } from '../domain/pool/decide.ts';
import type { AgentTerms, FollowSettings, PoolEvent } from '../domain/pool/events.ts';
import { figuresOf } from '../domain/pool/history.ts';
import { evolve, initialState, poolId, type PoolState } from '../domain/pool/state.ts';
import type { CommandBody } from '../domain/shared/decider.ts';
import type { WalletContext } from '../domain/wallet/events.ts';
import { createPool, migrate, type Pool } from '../infra/db.ts';
import { START, type Position, type RecordedFact } from '../infra/eventstore/port.ts';
import { createPostgresEventStore } from '../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../infra/eventstore/postgres-schema.ts';
import { checkpointMigrations } from '../projections/checkpoints.ts';
import { rebuild } from '../projections/rebuild.ts';
import { compareAll, POOL_STREAM_PREFIX, READ_BATCH, readModelSnapshot, replayLog } from '../projections/subscriptions/audit.ts';
import { subscriptionsProjector } from '../projections/subscriptions/projector.ts';
import { oneTrade } from '../test/domain/pool/fixtures.ts';
import { freshDatabase } from '../test/support/db.ts';
import { backendsCpuMs, backendsCpuSinceMs } from './cpu.ts';
import { fmt, report, verdict } from './measure.ts';

const EVENTS_PER_POOL = 50;
const WRITERS = 16;
const AGENTS = 40;
const START_MS = Date.UTC(2025, 0, 1);

/** mulberry32: a small seeded generator, so every run writes the same log. */
function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
}

const terms = (k: number): AgentTerms => ({
  agentName: `Bench agent ${k}`,
  agentImageUrl: null,
  venue: k % 2 ? 'PERP_VENUE' : 'SPOT_VENUE',
  maxLeverage: k % 2 ? 5 : 1,
  successFeePercent: 10 + (k % 3) * 5,
  minAllocationUsd: 0,
  minTradeUsd: 0,
  minPerTradePercent: 0,
  recommendedPerTradePercent: 10,
  maxConcurrentPositions: 10,
  maxEntriesPerTrade: 3,
});
const settings = (usd: number, isPaused = false): FollowSettings => ({
  tradeMode: 'AUTO_TRADING',
  subscriptionType: 'AUTO_TRADING',
  allocationMode: 'USD_AMOUNT',
  allocationPercentageMin: null,
  allocationPercentageMax: null,
  allocationAmountUsd: usd,
  allocationAmountSol: null,
  goLiveUponConfirmation: true,
  isPaused,
});

/** One pool's history of about `length` events, decided by the pool's decider from random commands. */
export function simulatedPool(n: number, length: number): { stream: string; events: Array<{ event: PoolEvent; at: Date }> } {
  const rnd = seeded(n + 1);
  const userId = `bench-user-${Math.floor(n / 4)}`;
  const agentId = `bench-agent-${n % AGENTS}`;
  const walletContext: WalletContext = rnd.next() < 0.25 ? 'real' : 'virtual';
  const id = poolId(userId, agentId, walletContext);
  const agentTerms = terms(n % AGENTS);
  const out: Array<{ event: PoolEvent; at: Date }> = [];
  let state: PoolState = initialState();
  let clock = START_MS + n * 1000;
  let transfers = 0;
  let trades = 0;
  const decide = (command: CommandBody<PoolCommand>) => {
    const now = new Date((clock += rnd.int(1, 60_000)));
    const events = poolDecider.decide({ ...command, metadata: { now, actor: 'bench', correlationId: `bench-${n}` } } as PoolCommand, state);
    for (const event of events) {
      state = evolve(state, event);
      out.push({ event, at: now });
    }
  };
  /** A transfer as the routes plan it: the follow's carries its settings and terms, a later add does not. */
  const plan = (amountMicro: number, direction: 'in' | 'out', close = false) => {
    const pool = { kind: 'pool' as const, userId, agentId, walletContext };
    const wallet = { kind: 'wallet' as const, userId, walletContext };
    const transferId = `${id}#${direction === 'in' ? 'add' : 'withdraw'}-${++transfers}`;
    const follow = state.followed ? {} : { follow: { settings: settings(amountMicro), terms: agentTerms } };
    return direction === 'in'
      ? { transferId, amountMicro, from: wallet, to: { ...pool, ...follow } }
      : { transferId, amountMicro, from: { ...pool, ...(close ? { close: true as const } : {}) }, to: wallet };
  };
  /** a real pool's pending leg confirmed by the venue (a reclaim sometimes for less) */
  const settlePending = () => {
    for (const [transferId, leg] of Object.entries(state.pending)) {
      const amountMicro = leg.direction === 'out' && rnd.next() < 0.2 ? Math.floor(leg.amountMicro * 0.9) : leg.amountMicro;
      decide({ type: 'SettleAllocation', data: { transferId, outcome: 'confirmed', amountMicro } });
    }
  };
  const closeTrades = () => {
    if (!state.followed) return;
    for (const [tradeId, trade] of Object.entries(state.openTrades)) {
      decide({ type: 'CloseTrade', data: { tradeId, realizedPnlMicro: rnd.int(-Math.floor(trade.marginMicro / 2), trade.marginMicro) } });
    }
  };

  decide({ type: 'CreditPool', data: { transfer: plan(rnd.int(100, 5_000) * 1_000_000, 'in'), resumed: false } });
  while (out.length < length - 4) {
    settlePending();
    if (!state.followed) break;
    const figures = figuresOf(state)!;
    const free = figures.ledgerAvailableUsd - state.ledger.pendingOut;
    const roll = rnd.next();
    const open = Object.keys(state.openTrades);
    if (roll < 0.12) decide({ type: 'CreditPool', data: { transfer: plan(rnd.int(10, 1_000) * 1_000_000, 'in'), resumed: false } });
    else if (roll < 0.4 && free > 1_000_000 && open.length < 3)
      decide({ type: 'OpenTrade', data: oneTrade(`${id}#trade-${++trades}`, rnd.int(1, Math.floor(free / 3))) });
    else if (roll < 0.6 && open.length) decide({ type: 'MarkTrade', data: { tradeId: open[0]!, unrealizedPnlMicro: rnd.int(-1_000_000, 3_000_000) } });
    else if (roll < 0.8 && open.length) closeTrades();
    else if (roll < 0.9 && figures.withdrawableUsd > 1_000_000)
      decide({ type: 'DebitPool', data: { transfer: plan(rnd.int(1, Math.floor(figures.withdrawableUsd / 4)), 'out') } });
    else if (roll < 0.95 && walletContext === 'real') {
      const gap = rnd.int(-20_000, 20_000);
      decide({
        type: 'ObserveVenue',
        data: {
          status: Math.abs(gap) < 10_000 ? 'IN_SYNC' : 'GAP',
          venueEquityMicro: figures.currentBalanceUsd + gap,
          venueFreeMarginMicro: free,
          gapMicro: gap,
        },
      });
    } else
      decide({
        type: 'FollowAgent',
        data: {
          agentId,
          userId,
          walletContext,
          settings: settings(state.settings.allocationAmountUsd ?? 0, !state.settings.isPaused),
          terms: agentTerms,
          topsUp: state.openings ?? 0,
        },
      });
  }
  settlePending();
  if (rnd.next() < 0.1 && state.followed) {
    closeTrades();
    decide({ type: 'DebitPool', data: { transfer: plan(0, 'out', true) } });
    settlePending();
  }
  return { stream: `pool-${id}`, events: out };
}

/** Writes exactly `total` pool events: whole pools per append (the last one cut short), WRITERS appends in flight. */
async function writeLog(store: ReturnType<typeof createPostgresEventStore>, total: number): Promise<number> {
  let written = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (written < total) {
        const pool = simulatedPool(next++, EVENTS_PER_POOL);
        const events = pool.events.slice(0, total - written);
        written += events.length;
        if (events.length === 0) return;
        await store.append(
          pool.stream,
          events.map(({ event, at }) => ({
            type: event.type,
            data: event.data,
            metadata: { correlationId: pool.stream, actor: 'bench', occurredAt: at.toISOString() },
          })),
          { expectedRevision: 'no_stream' },
        );
      }
    }),
  );
  return next;
}

interface Pass {
  events: number;
  seconds: number;
  rate: number;
  /** CPU microseconds per event: this process's, and the database server's */
  nodeUs: number;
  serverUs: number;
}

/** Times `run` with the CPU it took here and on the server, per event it went through. */
async function timed<T extends { events: number }>(pool: Pool, run: () => Promise<T>): Promise<Pass & { result: T }> {
  const server0 = await backendsCpuMs(pool);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await run();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const serverMs = await backendsCpuSinceMs(pool, server0);
  const n = result.events;
  return { result, events: n, seconds, rate: n / seconds, nodeUs: (cpu.user + cpu.system) / n, serverUs: (serverMs * 1e3) / n };
}

/** Every batch of `read` from the start of the log, nothing done with the events; how many there were. */
async function readWhole(read: (from: Position) => Promise<RecordedFact[]>): Promise<{ events: number }> {
  let events = 0;
  for (let from: Position = START; ; ) {
    const batch = await read(from);
    events += batch.length;
    if (batch.length < READ_BATCH) return { events };
    from = batch.at(-1)!.position;
  }
}

const cpuNote = (p: Pass) => `Node CPU ${fmt(p.nodeUs, 2)} us/event, server CPU ${fmt(p.serverUs, 2)} us/event`;

export async function auditBench(total = 1_000_000) {
  // Commits need not be durable to load the log; the timed part only reads.
  const db = await freshDatabase('bench_audit');
  const pool = createPool(db.url, WRITERS + 4);
  const store = createPostgresEventStore({ pool });
  try {
    await migrate(pool, [...eventStoreMigrations, ...checkpointMigrations, ...subscriptionsProjector.migrations]);
    const w0 = performance.now();
    const pools = await writeLog(store, total);
    const writeSeconds = (performance.now() - w0) / 1000;
    await pool.query('VACUUM ANALYZE events');
    const mix = await pool.query<{ event_type: string; n: string }>('SELECT event_type, count(*) AS n FROM events GROUP BY 1 ORDER BY 2 DESC');
    const r0 = performance.now();
    await rebuild(store, pool, subscriptionsProjector);
    const rebuildSeconds = (performance.now() - r0) / 1000;

    // The ceilings: the same passes over the log with nothing done to the events, the whole events
    // (readAll) and the pool facts the replay reads (readAllFacts).
    const global = await timed(pool, () => readWhole((fromPosition) => store.readAll({ fromPosition, maxCount: READ_BATCH })));
    const facts = await timed(pool, () =>
      readWhole((fromPosition) => store.readAllFacts({ fromPosition, maxCount: READ_BATCH, streamPrefix: POOL_STREAM_PREFIX })),
    );

    // What `npm run audit -- verify` does: the read model's snapshot, the replay (timed), the comparison.
    const { checkpoint, rows } = await readModelSnapshot(pool);
    const replayed = await timed(pool, () => replayLog(store, checkpoint));
    const { result: replay, seconds: replaySeconds, rate } = replayed;
    const c0 = performance.now();
    const audits = compareAll(replay.pools, rows);
    const compareSeconds = (performance.now() - c0) / 1000;
    const matched = audits.filter((a) => a.status === 'MATCH').length;

    console.log(`\nAuditors' replay (PostgreSQL store, ${fmt(replay.events)} pool events in ${fmt(pools)} pools)`);
    report([
      [
        'log written (group commit)',
        `${fmt(total / writeSeconds)} ev/s`,
        `${fmt(writeSeconds, 1)} s; mix: ${mix.rows.map((r) => `${r.event_type} ${fmt(Number(r.n))}`).join(', ')}`,
      ],
      ['subscriptions read model rebuilt', `${fmt(total / rebuildSeconds)} ev/s`, `${fmt(rebuildSeconds, 1)} s, ${fmt(rows.size)} rows`],
      ['global read alone (ceiling)', `${fmt(global.rate)} ev/s`, `readAll, the same batches of 1,000, nothing folded; ${cpuNote(global)}`],
      [
        "pool facts read alone (replay's ceiling)",
        `${fmt(facts.rate)} ev/s`,
        `readAllFacts of the pool streams, batches of 1,000, nothing folded; ${cpuNote(facts)}`,
      ],
      [
        'audit verify: replay',
        `${fmt(rate)} ev/s`,
        `${fmt(replaySeconds, 2)} s, ${fmt((100 * rate) / facts.rate)}% of its read, ${cpuNote(replayed)}; target >= 100,000: ${verdict(rate >= 100_000)}`,
      ],
      [
        'audit verify: compare with rows',
        `${fmt(compareSeconds * 1000)} ms`,
        `${fmt(audits.length)} pools, ${fmt(matched)} match${matched === audits.length ? '' : ` (${fmt(audits.length - matched)} DIFFER)`}`,
      ],
      ['audit verify: replay + compare', `${fmt(replay.events / (replaySeconds + compareSeconds))} ev/s`, `${fmt(replaySeconds + compareSeconds, 2)} s`],
    ]);
    return { rate };
  } finally {
    await store.close();
    await pool.end();
    await db.drop();
  }
}
