// Figures per agent drawn from its followers' pool streams, for the developer dashboard and the
// agent records: one row per follower pool (who follows, since when, on which terms, and the
// creator's share of the success fees the pool settled) and one row per agent (its closed trades
// and the capital its followers put in). A projector of its own, so the subscriptions projector's
// hot path is untouched; it reads only the few pool event types it needs, and the claims of the
// agent's fee account (what each claim took from each pool's fees).
import { feesClaimedSchema } from '../../domain/fees/events.ts';
import { agentFollowedSchema, allocationAddedSchema, allocationSettledSchema, feesSettledSchema, tradeClosedSchema } from '../../domain/pool/events.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { Position, RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';

const migrations: Migration[] = [
  {
    id: 'agent-figures/001-subscribers-and-performance',
    // `followed_*`: the global position of the pool's latest AgentFollowed, ordering pools that
    // opened in the same millisecond without ordering by (or leaking) the user id.
    sql: `CREATE TABLE agent_subscribers (
      pool_id text PRIMARY KEY,
      agent_id text NOT NULL,
      user_id text NOT NULL,
      wallet_context text NOT NULL,
      followed boolean NOT NULL,
      subscribed_at timestamptz NOT NULL,
      success_fee_percent double precision NOT NULL,
      creator_fees_micro bigint NOT NULL DEFAULT 0,
      followed_commit bigint NOT NULL,
      followed_prepare bigint NOT NULL);
    CREATE INDEX agent_subscribers_agent ON agent_subscribers (agent_id, subscribed_at DESC, followed_commit DESC, followed_prepare DESC);
    CREATE TABLE agent_performance (
      agent_id text PRIMARY KEY,
      trades integer NOT NULL DEFAULT 0,
      winning_trades integer NOT NULL DEFAULT 0,
      realized_micro bigint NOT NULL DEFAULT 0,
      contributed_micro bigint NOT NULL DEFAULT 0);`,
  },
  {
    // Fee claims (domain/fees): what the developer claimed of each pool's fees. No claim existed
    // before, so every row starts at 0 and nothing is replayed.
    id: 'agent-figures/002-claimed-fees',
    sql: `ALTER TABLE agent_subscribers ADD COLUMN creator_claimed_micro bigint NOT NULL DEFAULT 0;`,
  },
];

/** What a batch changes in one pool's row: its latest opening, whether it is followed at the end, the creator's fees. */
interface PoolChange {
  opening?: {
    agent_id: string;
    user_id: string;
    wallet_context: string;
    subscribed_at: string;
    success_fee_percent: number;
    followed_commit: string;
    followed_prepare: string;
  };
  followed?: boolean;
  creator_fees_micro: number;
  creator_claimed_micro: number;
}

/** What a batch adds to one agent's row. */
interface AgentChange {
  trades: number;
  winning_trades: number;
  realized_micro: number;
  contributed_micro: number;
}

const POOL_PREFIX = 'pool-';
const FEES_PREFIX = 'fees-';
const TYPES = new Set(['AgentFollowed', 'PoolClosed', 'FeesSettled', 'TradeClosed', 'AllocationAdded', 'AllocationSettled']);

/** `{userId}.{agentId}.{walletContext}`: user ids hold no dot, contexts neither. */
const agentOfPool = (poolId: string): string => poolId.slice(poolId.indexOf('.') + 1, poolId.lastIndexOf('.'));

/**
 * A trade closed with `released: true` gave back the margin of an entry that never filled: no
 * trade took place. Read from the raw data, so this holds whether or not the event schema names it.
 */
const isReleased = (data: unknown): boolean => (data as { released?: boolean }).released === true;

function collect(events: RecordedEvent[]): { pools: Map<string, PoolChange>; agents: Map<string, AgentChange> } {
  const pools = new Map<string, PoolChange>();
  const agents = new Map<string, AgentChange>();
  const pool = (id: string): PoolChange => {
    let change = pools.get(id);
    if (!change) pools.set(id, (change = { creator_fees_micro: 0, creator_claimed_micro: 0 }));
    return change;
  };
  const agent = (poolId: string): AgentChange => {
    const id = agentOfPool(poolId);
    let change = agents.get(id);
    if (!change) agents.set(id, (change = { trades: 0, winning_trades: 0, realized_micro: 0, contributed_micro: 0 }));
    return change;
  };
  for (const event of events) {
    if (event.type === 'FeesClaimed' && event.streamName.startsWith(FEES_PREFIX)) {
      for (const part of feesClaimedSchema.parse(event.data).parts) pool(part.poolId).creator_claimed_micro += part.amountMicro;
      continue;
    }
    if (!event.streamName.startsWith(POOL_PREFIX) || !TYPES.has(event.type)) continue;
    const id = event.streamName.slice(POOL_PREFIX.length);
    switch (event.type) {
      case 'AgentFollowed': {
        const d = agentFollowedSchema.parse(event.data);
        const change = pool(id);
        change.opening = opening(d.agentId, d.userId, d.walletContext, d.subscribedAt, d.terms.successFeePercent, event.position);
        change.followed = true;
        break;
      }
      case 'PoolClosed':
        pool(id).followed = false;
        break;
      case 'FeesSettled':
        pool(id).creator_fees_micro += feesSettledSchema.parse(event.data).creatorMicro;
        break;
      case 'TradeClosed': {
        const { realizedPnlMicro } = tradeClosedSchema.parse(event.data);
        const change = agent(id);
        change.realized_micro += realizedPnlMicro;
        if (isReleased(event.data)) break;
        change.trades += 1;
        if (realizedPnlMicro > 0) change.winning_trades += 1;
        break;
      }
      case 'AllocationAdded':
        agent(id).contributed_micro += allocationAddedSchema.parse(event.data).amountMicro;
        break;
      case 'AllocationSettled': {
        const d = allocationSettledSchema.parse(event.data);
        if (d.direction === 'in' && d.outcome === 'confirmed') agent(id).contributed_micro += d.amountMicro;
        break;
      }
    }
  }
  return { pools, agents };
}

function opening(
  agentId: string,
  userId: string,
  walletContext: string,
  subscribedAt: string,
  successFeePercent: number,
  position: Position,
): PoolChange['opening'] {
  return {
    agent_id: agentId,
    user_id: userId,
    wallet_context: walletContext,
    subscribed_at: subscribedAt,
    success_fee_percent: successFeePercent,
    followed_commit: position.commit.toString(),
    followed_prepare: position.prepare.toString(),
  };
}

/**
 * A batch in at most three statements: pools that (re)opened in it, other pools' changes, agents'
 * sums. Sums add up and the rest is the batch's last word, so a batch equals its events one by one.
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  const { pools, agents } = collect(events);
  const sums = (c: PoolChange) => ({ creator_fees_micro: c.creator_fees_micro, creator_claimed_micro: c.creator_claimed_micro });
  const opened = [...pools].filter(([, c]) => c.opening).map(([id, c]) => ({ pool_id: id, ...c.opening, followed: c.followed, ...sums(c) }));
  const changed = [...pools].filter(([, c]) => !c.opening).map(([id, c]) => ({ pool_id: id, followed: c.followed ?? null, ...sums(c) }));
  if (opened.length) {
    await client.query({
      name: 'agent-subscribers-open',
      text: `INSERT INTO agent_subscribers (pool_id, agent_id, user_id, wallet_context, followed, subscribed_at, success_fee_percent, creator_fees_micro,
          creator_claimed_micro, followed_commit, followed_prepare)
        SELECT pool_id, agent_id, user_id, wallet_context, followed, subscribed_at, success_fee_percent, creator_fees_micro, creator_claimed_micro,
          followed_commit, followed_prepare
        FROM jsonb_to_recordset($1::jsonb) AS v(pool_id text, agent_id text, user_id text, wallet_context text, followed boolean, subscribed_at timestamptz,
          success_fee_percent double precision, creator_fees_micro bigint, creator_claimed_micro bigint, followed_commit bigint, followed_prepare bigint)
        ON CONFLICT (pool_id) DO UPDATE SET agent_id = EXCLUDED.agent_id, user_id = EXCLUDED.user_id, wallet_context = EXCLUDED.wallet_context,
          followed = EXCLUDED.followed, subscribed_at = EXCLUDED.subscribed_at, success_fee_percent = EXCLUDED.success_fee_percent,
          creator_fees_micro = agent_subscribers.creator_fees_micro + EXCLUDED.creator_fees_micro,
          creator_claimed_micro = agent_subscribers.creator_claimed_micro + EXCLUDED.creator_claimed_micro,
          followed_commit = EXCLUDED.followed_commit, followed_prepare = EXCLUDED.followed_prepare`,
      values: [JSON.stringify(opened)],
    });
  }
  if (changed.length) {
    await client.query({
      name: 'agent-subscribers-change',
      text: `UPDATE agent_subscribers s SET followed = COALESCE(v.followed, s.followed), creator_fees_micro = s.creator_fees_micro + v.creator_fees_micro,
          creator_claimed_micro = s.creator_claimed_micro + v.creator_claimed_micro
        FROM jsonb_to_recordset($1::jsonb) AS v(pool_id text, followed boolean, creator_fees_micro bigint, creator_claimed_micro bigint) WHERE s.pool_id = v.pool_id`,
      values: [JSON.stringify(changed)],
    });
  }
  if (agents.size) {
    await client.query({
      name: 'agent-performance-add',
      text: `INSERT INTO agent_performance (agent_id, trades, winning_trades, realized_micro, contributed_micro)
        SELECT agent_id, trades, winning_trades, realized_micro, contributed_micro
        FROM jsonb_to_recordset($1::jsonb) AS v(agent_id text, trades integer, winning_trades integer, realized_micro bigint, contributed_micro bigint)
        ON CONFLICT (agent_id) DO UPDATE SET trades = agent_performance.trades + EXCLUDED.trades,
          winning_trades = agent_performance.winning_trades + EXCLUDED.winning_trades,
          realized_micro = agent_performance.realized_micro + EXCLUDED.realized_micro,
          contributed_micro = agent_performance.contributed_micro + EXCLUDED.contributed_micro`,
      values: [JSON.stringify([...agents].map(([id, c]) => ({ agent_id: id, ...c })))],
    });
  }
}

export const agentFiguresProjector: Projector = {
  name: 'agent-figures',
  migrations,
  tables: ['agent_subscribers', 'agent_performance'],
  applyBatch,
  apply: (client, recorded) => applyBatch(client, [recorded]),
};
