// The follow as a conventional service writes it: one transaction that locks the wallet row,
// upserts the pool row and inserts an audit row. The business rules are ours (the pure helpers of
// domain/), so both sides accept, refuse and compute the same amounts; only the storage differs.
import { allocationOf, type SubscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import type { BetaStatus, Venue } from '../../domain/agent/record.ts';
import { resolveSettings, targetAllocationMicro, topUpMicro, type FollowChoices } from '../../domain/pool/allocation.ts';
import type { AgentTerms, FollowSettings } from '../../domain/pool/events.ts';
import { sameSettings } from '../../domain/pool/settings.ts';
import { initialState, poolId, type PoolState } from '../../domain/pool/state.ts';
import { PersistentMap } from '../../domain/shared/persistent-map.ts';
import { refuse } from '../../domain/shared/errors.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import { ensureFunds } from '../../domain/wallet/guards.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import { inTransaction, type Pool, type PoolClient } from '../../infra/db.ts';
import { ledgerOf, viewOfRow, type SubscriptionRow } from '../../projections/subscriptions/view.ts';

export interface FollowConfig {
  virtualStartMicro: MicroUsd;
  solPriceMicro: MicroUsd;
}

export interface Caller {
  userId: string;
  virtualWalletMode: boolean;
}

interface AgentRow {
  id: string;
  name: string;
  avatar_url: string | null;
  venue: Venue;
  max_leverage: number | null;
  success_fee_percent: number;
  min_allocation_micro: string;
  min_trade_micro: string;
  min_per_trade_percent: number;
  recommended_per_trade_percent: number;
  max_concurrent_positions: number;
  max_entries_per_trade: number;
  beta_status: BetaStatus;
  max_beta_users: number | null;
}

/** termsOf (domain/pool/allocation.ts) over the agent row. */
const termsOfAgent = (a: AgentRow): AgentTerms => ({
  agentName: a.name,
  agentImageUrl: a.avatar_url,
  venue: a.venue,
  maxLeverage: a.max_leverage ?? 1,
  successFeePercent: a.success_fee_percent,
  minAllocationUsd: Number(a.min_allocation_micro),
  minTradeUsd: Number(a.min_trade_micro),
  minPerTradePercent: a.min_per_trade_percent,
  recommendedPerTradePercent: a.recommended_per_trade_percent,
  maxConcurrentPositions: a.max_concurrent_positions,
  maxEntriesPerTrade: a.max_entries_per_trade,
});

/** The pool row as the domain helpers read a pool: its settings, the terms it kept, its ledger. */
function poolStateOf(r: SubscriptionRow): PoolState {
  // The same row-to-pool mapping the read model's queries use.
  const view = viewOfRow(r);
  return {
    followed: true,
    poolId: poolId(r.user_id, r.agent_id, r.wallet_context),
    agentId: r.agent_id,
    userId: r.user_id,
    walletContext: r.wallet_context,
    settings: view.settings,
    terms: view.terms,
    subscribedAt: r.subscribed_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    ledger: ledgerOf(r),
    openTrades: {},
    bridge: null,
    reconciliation: null,
    // The row lock replaces transfer ids here: a follow either commits whole or not at all.
    transfers: PersistentMap.empty(),
    pending: {},
    trades: PersistentMap.empty(),
    settlements: 0,
    payouts: PersistentMap.empty(),
  };
}

export interface Followed {
  created: boolean;
  row: SubscriptionRow;
}

/** POST /api/v1/users/me/subscriptions: 404/409 on the agent, 400 on the minimum or the funds. */
export async function follow(db: Pool, config: FollowConfig, caller: Caller, input: SubscribeInput, requestId: string): Promise<Followed> {
  const { rows } = await db.query<AgentRow>({ name: 'conv-agent', text: 'SELECT * FROM agents WHERE id = $1', values: [input.agentId] });
  const agent = rows[0];
  if (!agent) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  if (agent.beta_status !== 'beta' && agent.beta_status !== 'live')
    throw refuse('AGENT_NOT_FOLLOWABLE', `agent is ${agent.beta_status} and cannot be followed`);
  const context: WalletContext =
    input.walletContext ?? (input.walletMode ? (input.walletMode === 'REAL' ? 'real' : 'virtual') : caller.virtualWalletMode ? 'virtual' : 'real');
  const choices: FollowChoices = {
    tradeMode: input.tradeMode ?? input.subscriptionType,
    allocation: allocationOf(input),
    goLiveUponConfirmation: input.goLiveUponConfirmation,
    isPaused: input.isPaused,
  };
  const now = new Date();
  return inTransaction(db, (client) => followIn(client, config, { agent, userId: caller.userId, context, choices, now, requestId }));
}

interface Request {
  agent: AgentRow;
  userId: string;
  context: WalletContext;
  choices: FollowChoices;
  now: Date;
  requestId: string;
}

async function followIn(client: PoolClient, config: FollowConfig, req: Request): Promise<Followed> {
  const { agent, userId, context, now } = req;
  // The wallet row lock serialises every follow paid from this wallet, so the pool row read next
  // (its own statement, hence a fresh snapshot) cannot change until COMMIT.
  const balance = await lockWallet(client, userId, context, context === 'virtual' ? config.virtualStartMicro : 0, now);
  const current = (
    await client.query<SubscriptionRow>({
      name: 'conv-pool',
      text: 'SELECT * FROM subscriptions WHERE user_id = $1 AND agent_id = $2 AND wallet_context = $3',
      values: [userId, agent.id, context],
    })
  ).rows[0];
  const pool: PoolState = current ? poolStateOf(current) : initialState();
  const terms = pool.followed ? pool.terms : termsOfAgent(agent);
  const settings = resolveSettings(req.choices, pool.followed ? pool.settings : null, terms);
  const amount = topUpMicro(pool, targetAllocationMicro(settings, balance, config.solPriceMicro), terms.minAllocationUsd);
  ensureFunds({ opened: true, balances: { virtual: 0, real: 0, [context]: balance } }, context, amount, config.virtualStartMicro);
  if (!pool.followed && agent.beta_status === 'beta') await takeBetaSeat(client, agent, userId, now);

  let row = current;
  if (!pool.followed || amount > 0 || !sameSettings(pool.settings, settings)) {
    row = await upsertPool(client, req, terms, settings, amount);
  }
  if (amount > 0) {
    await client.query({
      name: 'conv-debit',
      text: 'UPDATE wallets SET balance_micro = balance_micro - $3, updated_at = $4 WHERE user_id = $1 AND wallet_context = $2',
      values: [userId, context, amount, now],
    });
  }
  await client.query({
    name: 'conv-audit',
    text: `INSERT INTO follow_audit (request_id, user_id, agent_id, wallet_context, amount_micro, balance_after_micro, settings, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    values: [req.requestId, userId, agent.id, context, amount, balance - amount, JSON.stringify(settings), now],
  });
  return { created: !pool.followed, row: row! };
}

/** The wallet's balance, its row locked; opened on first use (the virtual context at the start amount). */
export async function lockWallet(client: PoolClient, userId: string, context: WalletContext, openingMicro: MicroUsd, now: Date): Promise<MicroUsd> {
  const lock = {
    name: 'conv-lock-wallet',
    text: 'SELECT balance_micro FROM wallets WHERE user_id = $1 AND wallet_context = $2 FOR UPDATE',
    values: [userId, context],
  };
  let { rows } = await client.query<{ balance_micro: string }>(lock);
  if (!rows[0]) {
    // A concurrent first use may insert it first: then this waits for it and locks that row.
    await client.query({
      name: 'conv-open-wallet',
      text: 'INSERT INTO wallets (user_id, wallet_context, balance_micro, opened_at, updated_at) VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING',
      values: [userId, context, openingMicro, now],
    });
    ({ rows } = await client.query<{ balance_micro: string }>(lock));
  }
  return Number(rows[0]!.balance_micro);
}

/** A first follow of a beta agent takes a seat (once per user); the agent row lock keeps the count exact. */
async function takeBetaSeat(client: PoolClient, agent: AgentRow, userId: string, now: Date): Promise<void> {
  await client.query('SELECT 1 FROM agents WHERE id = $1 FOR UPDATE', [agent.id]);
  const { rows } = await client.query<{ taken: number; held: boolean }>(
    'SELECT count(*)::int AS taken, coalesce(bool_or(user_id = $2), false) AS held FROM beta_seats WHERE agent_id = $1',
    [agent.id, userId],
  );
  const { taken, held } = rows[0]!;
  if (held) return;
  if (agent.max_beta_users !== null && taken >= agent.max_beta_users)
    throw refuse('BETA_FULL', `all ${agent.max_beta_users} beta seats of this agent are taken`);
  await client.query('INSERT INTO beta_seats (agent_id, user_id, taken_at) VALUES ($1, $2, $3)', [agent.id, userId, now]);
}

/** Inserts the pool on a first follow; otherwise new settings and the top-up (the terms stay as first accepted). */
async function upsertPool(client: PoolClient, req: Request, t: AgentTerms, s: FollowSettings, amount: MicroUsd): Promise<SubscriptionRow> {
  const { rows } = await client.query<SubscriptionRow>({
    name: 'conv-upsert-pool',
    text: `INSERT INTO subscriptions (user_id, agent_id, wallet_context, pool_id, agent_name, agent_image_url, venue, max_leverage,
             success_fee_percent, min_allocation_micro, min_trade_micro, min_per_trade_percent, recommended_per_trade_percent,
             max_concurrent_positions, max_entries_per_trade, trade_mode, allocation_mode, allocation_percentage_min,
             allocation_percentage_max, allocation_amount_usd_micro, allocation_amount_sol_lamports, go_live_upon_confirmation,
             is_paused, confirmed_in_micro, subscribed_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $25, $25)
           ON CONFLICT (user_id, agent_id, wallet_context) DO UPDATE SET
             trade_mode = EXCLUDED.trade_mode, allocation_mode = EXCLUDED.allocation_mode,
             allocation_percentage_min = EXCLUDED.allocation_percentage_min, allocation_percentage_max = EXCLUDED.allocation_percentage_max,
             allocation_amount_usd_micro = EXCLUDED.allocation_amount_usd_micro, allocation_amount_sol_lamports = EXCLUDED.allocation_amount_sol_lamports,
             go_live_upon_confirmation = EXCLUDED.go_live_upon_confirmation, is_paused = EXCLUDED.is_paused,
             confirmed_in_micro = subscriptions.confirmed_in_micro + EXCLUDED.confirmed_in_micro, updated_at = EXCLUDED.updated_at
           RETURNING *`,
    values: [
      req.userId,
      req.agent.id,
      req.context,
      poolId(req.userId, req.agent.id, req.context),
      t.agentName,
      t.agentImageUrl,
      t.venue,
      t.maxLeverage,
      t.successFeePercent,
      t.minAllocationUsd,
      t.minTradeUsd,
      t.minPerTradePercent,
      t.recommendedPerTradePercent,
      t.maxConcurrentPositions,
      t.maxEntriesPerTrade,
      s.tradeMode,
      s.allocationMode,
      s.allocationPercentageMin,
      s.allocationPercentageMax,
      s.allocationAmountUsd,
      s.allocationAmountSol,
      s.goLiveUponConfirmation,
      s.isPaused,
      amount,
      req.now,
    ],
  });
  return rows[0]!;
}
