// The withdrawal as a conventional service writes it: one transaction that locks the pool row,
// computes what may leave with our pure ledger helpers (domain/pool/ledger.ts), moves the amount
// from the pool row to the wallet row and inserts an audit row. Same refusals as ours (404, 400
// EXCEEDS_WITHDRAWABLE, 409 ALLOCATION_FUNDS_IN_USE), same figures; only the storage differs.
import { poolFigures } from '../../domain/pool/ledger.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { microToUsd, type MicroUsd } from '../../domain/shared/money.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import { inTransaction, type Pool, type PoolClient } from '../../infra/db.ts';
import { ledgerOf, type SubscriptionRow } from '../../projections/subscriptions/view.ts';
import type { Caller } from './follow.ts';

export interface WithdrawRequest {
  agentId: string;
  amountMicro: MicroUsd;
  /** absent: the caller's current context */
  walletContext?: WalletContext;
}

export interface Withdrawn {
  row: SubscriptionRow;
  /** real context: the amount waits for the venue (pending out), the wallet is paid when it confirms */
  pending: boolean;
}

const notFollowed = () => refuse('SUBSCRIPTION_NOT_FOUND', 'you do not follow this agent in this wallet context');

/** POST …/subscriptions/{agentId}/allocation/withdraw: 404 without a pool, 400/409 above withdrawable. */
export async function withdraw(db: Pool, caller: Caller, req: WithdrawRequest, requestId: string): Promise<Withdrawn> {
  const context: WalletContext = req.walletContext ?? (caller.virtualWalletMode ? 'virtual' : 'real');
  const now = new Date();
  return inTransaction(db, (client) => withdrawIn(client, { ...req, userId: caller.userId, context, now, requestId }));
}

interface Request extends WithdrawRequest {
  userId: string;
  context: WalletContext;
  now: Date;
  requestId: string;
}

async function withdrawIn(client: PoolClient, req: Request): Promise<Withdrawn> {
  const { userId, agentId, context, amountMicro, now } = req;
  const pending = context === 'real';
  // Locks in the follow's order, wallet row then pool row, so a follow and a withdrawal of the
  // same user cannot deadlock. The credit goes first (that UPDATE is the wallet lock); a refusal
  // below rolls it back with the rest. A real withdrawal waits for the venue: no wallet credit yet.
  let balanceAfter: MicroUsd | null = null;
  if (!pending) {
    const { rows } = await client.query<{ balance_micro: string }>({
      name: 'conv-credit-wallet',
      text: 'UPDATE wallets SET balance_micro = balance_micro + $3, updated_at = $4 WHERE user_id = $1 AND wallet_context = $2 RETURNING balance_micro',
      values: [userId, context, amountMicro, now],
    });
    // Every follow opens its wallet row first: no wallet, no pool.
    if (!rows[0]) throw notFollowed();
    balanceAfter = Number(rows[0].balance_micro);
  }
  const pool = (
    await client.query<SubscriptionRow>({
      name: 'conv-lock-pool',
      text: 'SELECT * FROM subscriptions WHERE user_id = $1 AND agent_id = $2 AND wallet_context = $3 FOR UPDATE',
      values: [userId, agentId, context],
    })
  ).rows[0];
  if (!pool) throw notFollowed();
  // Open trades are not modelled in this baseline: withdrawable comes from the row's ledger columns.
  const { withdrawableUsd } = poolFigures(ledgerOf(pool), {
    walletContext: pool.wallet_context,
    venue: pool.venue,
    maxLeverage: pool.max_leverage,
    successFeePercent: pool.success_fee_percent,
    reconciliationStatus: pool.reconciliation_status,
  });
  if (amountMicro > withdrawableUsd) {
    const details = { withdrawableUsd: microToUsd(withdrawableUsd), requestedUsd: microToUsd(amountMicro) };
    // Margin is locked only by open trades, so a locked amount means open trades of this pool.
    if (Number(pool.locked_micro) > 0) {
      throw refuse(
        'ALLOCATION_FUNDS_IN_USE',
        `open trades of this agent lock part of the pool: ${microToUsd(withdrawableUsd)} USD can be withdrawn now`,
        details,
      );
    }
    throw refuse('EXCEEDS_WITHDRAWABLE', `at most ${microToUsd(withdrawableUsd)} USD can be withdrawn from this pool`, details);
  }
  const { rows } = await client.query<SubscriptionRow>({
    name: pending ? 'conv-pool-pending-out' : 'conv-pool-out',
    text: pending
      ? 'UPDATE subscriptions SET pending_out_micro = pending_out_micro + $4, updated_at = $5 WHERE user_id = $1 AND agent_id = $2 AND wallet_context = $3 RETURNING *'
      : 'UPDATE subscriptions SET confirmed_out_micro = confirmed_out_micro + $4, updated_at = $5 WHERE user_id = $1 AND agent_id = $2 AND wallet_context = $3 RETURNING *',
    values: [userId, agentId, context, amountMicro, now],
  });
  await client.query({
    name: 'conv-withdraw-audit',
    text: `INSERT INTO withdraw_audit (request_id, user_id, agent_id, wallet_context, amount_micro, pending, wallet_balance_after_micro, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    values: [req.requestId, userId, agentId, context, amountMicro, pending, balanceAfter, now],
  });
  return { row: rows[0]!, pending };
}
