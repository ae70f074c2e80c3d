// The reconciliation sweep over 10,000 bridges in flight (target: all checked within one
// sweep interval, ≤ 10 s). 10,000 real perp pools, each with a bridge deposit in flight, are written
// straight to the event store (their pool events and wallet debits, as follows would write them)
// and projected; the venue has started every bridge. Then one sweep is timed: every leg's record
// read from the venue (nothing to do: BRIDGING), every real pool compared (none: all in motion);
// then, the bridges final, the sweep that queues a settle job for each, and how long the workers
// take to settle all 10,000.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { poolId as poolIdOf } from '../domain/pool/state.ts';
import type { PoolEvent } from '../domain/pool/events.ts';
import type { TransferPlan } from '../domain/transfer/plan.ts';
import { realPools } from '../projections/subscriptions/queries.ts';
import { legsAtVenue } from '../projections/transfers/queries.ts';
import { startTestApp } from '../test/support/app.ts';
import { simulated } from '../test/infra/venues/fixtures.ts';
import { terms, settings } from '../test/domain/pool/fixtures.ts';
import { bullConnection, queuePrefix } from '../workers/index.ts';
import { sweep, RECONCILIATION_QUEUE, type ReconciliationDeps } from '../workers/reconciliation.ts';
import { fmt, report, verdict } from './measure.ts';

const BRIDGES = 10_000;
const TARGET_MS = 10_000;

export async function reconciliationBench(bridges = BRIDGES): Promise<void> {
  const { clock, venues } = simulated();
  // The app's own workers settle the queued legs; its scheduled sweep stays out of the measurement.
  const app = await startTestApp({ durable: true, venues, config: { RECONCILIATION_INTERVAL_MS: '3600000', DATABASE_POOL_SIZE: '12' } });
  try {
    const agentId = randomUUID();
    const perpTerms = { ...terms, venue: 'PERP_VENUE' as const, maxLeverage: 5 };
    const at = new Date().toISOString();
    const metadata = { correlationId: 'bench-reconciliation', actor: 'bench', occurredAt: at };
    let last: Parameters<typeof app.deps.readYourWrites>[0] | undefined;
    const t0 = performance.now();
    for (let from = 0; from < bridges; from += 250) {
      const appends = [];
      for (let i = from; i < Math.min(bridges, from + 250); i++) {
        const userId = randomUUID();
        const id = poolIdOf(userId, agentId, 'real');
        const transfer: TransferPlan = {
          transferId: `${id}#add-1`,
          amountMicro: 100_000_000,
          from: { kind: 'wallet', userId, walletContext: 'real' },
          to: { kind: 'pool', userId, agentId, walletContext: 'real' },
        };
        const pool: PoolEvent[] = [
          {
            type: 'AgentFollowed',
            data: { ...settings, poolId: id, agentId, userId, walletContext: 'real', walletMode: 'REAL', terms: perpTerms, subscribedAt: at },
          },
          { type: 'AllocationPending', data: { transferId: transfer.transferId, amountMicro: transfer.amountMicro, at } },
          { type: 'BridgeStatusChanged', data: { transferId: transfer.transferId, status: 'PENDING_BRIDGE', bridgeTransactionId: null, at } },
        ];
        const wallet = [
          { type: 'WalletOpened', data: { virtualStartMicro: 10_000_000_000, openedAt: at } },
          { type: 'WalletDeposited', data: { depositId: `bench-${i}`, walletContext: 'real', amountMicro: 100_000_000, at } },
          { type: 'WalletDebited', data: { transfer } },
        ];
        const event = (e: { type: string; data: unknown }) => ({ id: randomUUID(), type: e.type, data: e.data, metadata });
        appends.push(app.deps.store.append(`wallet-${userId}`, wallet.map(event), { expectedRevision: 'no_stream' }));
        appends.push(app.deps.store.append(`pool-${id}`, pool.map(event), { expectedRevision: 'no_stream' }));
        appends.push(venues.perp.bridge.start({ transferId: transfer.transferId, direction: 'deposit', poolId: id, amountMicro: transfer.amountMicro }));
      }
      const results = await Promise.all(appends);
      last = (results.at(-2) as { position: Parameters<typeof app.deps.readYourWrites>[0] }).position;
    }
    await app.deps.readYourWrites(last);
    const { rows } = await app.deps.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfers WHERE status = 'pending' AND leg_pool_id IS NOT NULL");
    const setupS = (performance.now() - t0) / 1000;

    const connection = bullConnection(app.deps.config.REDIS_URL);
    const queue = new Queue(RECONCILIATION_QUEUE, { connection, prefix: queuePrefix(app.runtime.keyPrefix) });
    const deps: ReconciliationDeps = {
      dispatch: app.deps.dispatch,
      clock: app.deps.clock,
      venues,
      config: { RECONCILIATION_INTERVAL_MS: 5_000 },
      queries: { legsAtVenue: (a, l) => legsAtVenue(app.deps.pool, a, l), realPools: (a, l) => realPools(app.deps.pool, a, l) },
    };
    const s0 = performance.now();
    const quiet = await sweep(deps, queue);
    const quietMs = performance.now() - s0;

    clock.advance(60_000);
    const s1 = performance.now();
    const final = await sweep(deps, queue);
    const finalMs = performance.now() - s1;
    // The app's workers take the settle jobs: every add confirmed through SettleTransfer.
    const w0 = performance.now();
    for (;;) {
      const { rows: done } = await app.deps.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM subscriptions WHERE pending_in_micro = 0 AND confirmed_in_micro > 0',
      );
      if (done[0]!.n >= bridges) break;
      if (performance.now() - w0 > 600_000) throw new Error(`settled only ${done[0]!.n} of ${bridges}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const settleS = (performance.now() - w0) / 1000;
    await queue.close();
    connection.disconnect();

    console.log(`\nReconciliation sweep over ${fmt(rows[0]!.n)} bridges in flight (${fmt(setupS, 1)} s to write and project them)`);
    report([
      [
        'sweep, every bridge checked',
        `${fmt(quietMs / 1000, 2)} s`,
        `${quiet.legs} legs, ${quiet.queued} actions; target <= ${TARGET_MS / 1000} s: ${verdict(quiet.legs === bridges && quietMs <= TARGET_MS)}`,
      ],
      [
        'sweep, every bridge final',
        `${fmt(finalMs / 1000, 2)} s`,
        `${final.queued} settle jobs queued; target <= ${TARGET_MS / 1000} s: ${verdict(final.queued === bridges && finalMs <= TARGET_MS)}`,
      ],
      [
        '    settled by the workers',
        `${fmt(settleS, 1)} s`,
        `${fmt(bridges / settleS)} settlements/s (SettleTransfer: pool settlement, bridge status, transfer resumed)`,
      ],
    ]);
  } finally {
    await app.close();
  }
}
