// The agent-figures read model from pool events written by hand: what each pool and each agent
// adds up to (fees across openings and what claims took of them, trades without the released
// margins, capital confirmed in), and batches of any size equal to one event at a time.
import t from 'tap';
import { inTransaction, migrate } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { agentFiguresProjector } from '../../projections/agent-figures/projector.ts';
import { performanceOf, tradingStatsOf } from '../../projections/agent-figures/queries.ts';
import { checkpointMigrations } from '../../projections/checkpoints.ts';
import { freshDatabase } from '../support/db.ts';
import { settings, terms } from '../domain/pool/fixtures.ts';

const [A, B] = ['aaaaaaaa-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002'];
const [u1, u2] = ['11111111-0000-5000-8000-000000000001', '22222222-0000-5000-8000-000000000002'];
const at = '2025-03-01T10:00:00.000Z';
const M = 1_000_000;

let n = 0;
const event = (streamName: string, type: string, data: Record<string, unknown>): RecordedEvent => {
  n += 1;
  return {
    id: `e-${n}`,
    streamName,
    revision: BigInt(n),
    position: { commit: BigInt(1000 + n), prepare: BigInt(n) },
    type,
    data,
    metadata: { correlationId: 'c', actor: 'test', occurredAt: at },
    createdAt: new Date(at),
  };
};
const followed = (user: string, agent: string, walletContext: 'virtual' | 'real', subscribedAt: string, successFeePercent = 20) =>
  event(`pool-${user}.${agent}.${walletContext}`, 'AgentFollowed', {
    ...settings,
    poolId: `${user}.${agent}.${walletContext}`,
    agentId: agent,
    userId: user,
    walletContext,
    walletMode: walletContext === 'real' ? 'REAL' : 'VIRTUAL',
    terms: { ...terms, successFeePercent },
    subscribedAt,
  });
const closed = (stream: string, tradeId: string, realizedPnlMicro: number, extra: Record<string, unknown> = {}) =>
  event(stream, 'TradeClosed', { tradeId, realizedPnlMicro, at, ...extra });
const fees = (stream: string, creatorMicro: number) =>
  event(stream, 'FeesSettled', {
    settlementId: `${stream}#fees-${n}`,
    feeMicro: creatorMicro + 1,
    platformMicro: 1,
    creatorMicro,
    realizedMicro: 0,
    unrealizedMicro: 0,
    feesChargedBeforeMicro: 0,
    successFeePercent: 20,
    at,
  });
/** A claim of the agent's fee account taking `parts` (pool id, micro-USD) of its pools' fees. */
const claimed = (agent: string, parts: Array<[string, number]>) => {
  const amountMicro = parts.reduce((sum, [, micro]) => sum + micro, 0);
  return event(`fees-${agent}`, 'FeesClaimed', {
    transfer: {
      transferId: `fees-${agent}#claim-${n}`,
      amountMicro,
      from: { kind: 'fees', agentId: agent, developerId: 'dev' },
      to: { kind: 'wallet', userId: 'dev', walletContext: 'real' },
    },
    parts: parts.map(([poolId, micro]) => ({ poolId, amountMicro: micro })),
    at,
  });
};
const settled = (stream: string, direction: 'in' | 'out', outcome: 'confirmed' | 'failed', amountMicro: number) =>
  event(stream, 'AllocationSettled', { transferId: `${stream}#${n}`, direction, outcome, amountMicro, at });

const p1 = `pool-${u1}.${A}.real`;
const p2 = `pool-${u2}.${A}.virtual`;
const p3 = `pool-${u1}.${B}.virtual`;
const events: RecordedEvent[] = [
  event(`user-${u1}`, 'UserRegistered', { userId: u1 }),
  followed(u1, A, 'real', '2025-03-01T10:00:00.000Z'),
  event(p1, 'AllocationPending', { transferId: 'p1-add-1', amountMicro: 300 * M, at }),
  settled(p1, 'in', 'confirmed', 300 * M),
  event(p1, 'TradeOpened', { tradeId: 't1', marginMicro: 100 * M, at }),
  closed(p1, 't1', 50 * M),
  fees(p1, 8 * M),
  claimed(A, [[`${u1}.${A}.real`, 5 * M]]),
  event(p1, 'PoolClosed', { at }),
  followed(u2, A, 'virtual', '2025-03-02T10:00:00.000Z'),
  event(p2, 'AllocationAdded', { transferId: 'p2-add-1', amountMicro: 200 * M, confirmed: true, at }),
  followed(u1, A, 'real', '2025-03-03T10:00:00.000Z', 25),
  settled(p1, 'in', 'failed', 0),
  settled(p1, 'out', 'confirmed', 50 * M),
  closed(p1, 't2', -1 * M, { released: true }),
  closed(p1, 't3', -10 * M),
  closed(p2, 't4', 5 * M),
  closed(p2, 't5', 0),
  fees(p1, 4 * M),
  claimed(A, [[`${u1}.${A}.real`, 6 * M]]),
  event(p2, 'PoolClosed', { at }),
  followed(u1, B, 'virtual', '2025-03-04T10:00:00.000Z', 0),
  event(p3, 'AllocationAdded', { transferId: 'p3-add-1', amountMicro: 100 * M, confirmed: true, at }),
];

t.test('agent figures: per pool and per agent, whatever the batches', async (t) => {
  const db = await freshDatabase('figures');
  t.teardown(() => db.drop());
  await migrate(db.pool, [...checkpointMigrations, ...agentFiguresProjector.migrations]);
  const snapshot = async () => ({
    subscribers: (await db.pool.query('SELECT * FROM agent_subscribers ORDER BY pool_id')).rows,
    performance: (await db.pool.query('SELECT * FROM agent_performance ORDER BY agent_id')).rows,
  });
  const clear = () => Promise.all(agentFiguresProjector.tables.map((table) => db.pool.query(`DELETE FROM ${table}`)));

  await inTransaction(db.pool, async (c) => {
    for (const e of events) await agentFiguresProjector.apply(c, e);
  });
  const oneByOne = await snapshot();
  const byPool = Object.fromEntries(oneByOne.subscribers.map((r) => [r.pool_id, r]));
  t.match(
    byPool[`${u1}.${A}.real`],
    {
      agent_id: A,
      user_id: u1,
      wallet_context: 'real',
      followed: true,
      success_fee_percent: 25,
      creator_fees_micro: String(12 * M),
      creator_claimed_micro: String(11 * M),
    },
    'a reopened pool: its latest opening, the fees of every opening, every claim of them',
  );
  t.equal(byPool[`${u1}.${A}.real`].subscribed_at.toISOString(), '2025-03-03T10:00:00.000Z');
  t.match(byPool[`${u2}.${A}.virtual`], { followed: false, creator_fees_micro: '0', creator_claimed_micro: '0' }, 'a stopped pool stays, stopped');
  t.match(byPool[`${u1}.${B}.virtual`], { agent_id: B, followed: true, success_fee_percent: 0 });
  t.equal(oneByOne.subscribers.length, 3);

  t.same(
    oneByOne.performance.map((r) => ({ agent: r.agent_id, ...tradingStatsOf(performanceOf(r)), contributed: Number(r.contributed_micro) })),
    [
      // 4 trades (the released margin is none), 2 above 0; its −1 USD is realized all the same;
      // capital: 300 confirmed in + 200 added (a failed add and a withdrawal are not capital put in)
      { agent: A, trades: 4, winRate: 0.5, realizedPnlUsd: 44, returnPercent: 8.8, contributed: 500 * M },
      { agent: B, trades: 0, winRate: 0, realizedPnlUsd: 0, returnPercent: 0, contributed: 100 * M },
    ],
  );

  for (const size of [events.length, 5, 2]) {
    await clear();
    await inTransaction(db.pool, async (c) => {
      for (let i = 0; i < events.length; i += size) await agentFiguresProjector.applyBatch!(c, events.slice(i, i + size));
    });
    t.same(await snapshot(), oneByOne, `batches of ${size} give the same rows`);
  }
});

t.test('trading figures round: win rate to 0.01 %, return to 0.01 percent point', async (t) => {
  t.same(tradingStatsOf({ trades: 3, winningTrades: 2, realizedMicro: 1 * M, contributedMicro: 3 * M }), {
    trades: 3,
    winRate: 0.6667,
    realizedPnlUsd: 1,
    returnPercent: 33.33,
  });
  t.same(tradingStatsOf({ trades: 1, winningTrades: 0, realizedMicro: -2_500_000, contributedMicro: 7 * M }), {
    trades: 1,
    winRate: 0,
    realizedPnlUsd: -2.5,
    returnPercent: -35.71,
  });
  t.same(tradingStatsOf({ trades: 0, winningTrades: 0, realizedMicro: 0, contributedMicro: 0 }), {
    trades: 0,
    winRate: 0,
    realizedPnlUsd: 0,
    returnPercent: 0,
  });
});
