// Manual buys and sells as a conventional service writes them: one transaction per trade that locks
// the wallet row (the trade lock: a second trade of the wallet waits for it), checks the lots, calls
// the venue, changes the lot rows in place and the balance, records the trade and commits. The venue
// is our simulated one (infra/venues/swaps.ts, the same code and table) on a pool of its own, as an
// external venue would be: its swap commits by itself, as ours does, not in the trade's transaction.
// Same amounts as ours (domain/wallet/lots.ts), same refusals on the measured path
// (SELL_EXCEEDS_MANUAL_POSITION, INSUFFICIENT_FUNDS, SWAP_FAILED); a frozen wallet and stop-loss /
// take-profit levels are not modelled (the bench's trades carry none).
import { randomUUID } from 'node:crypto';
import { refuse } from '../../domain/shared/errors.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import { ensureFunds } from '../../domain/wallet/guards.ts';
import type { WalletContext } from '../../domain/wallet/context.ts';
import { reduceOldestFirst, unitsToTokens, type Lot } from '../../domain/wallet/lots.ts';
import { inTransaction, type Pool, type PoolClient } from '../../infra/db.ts';
import type { Swap, SwapRequest, Swaps } from '../../infra/venues/port.ts';
import { lockWallet, type Caller } from './follow.ts';

export interface TradeDeps {
  db: Pool;
  swaps: Swaps;
  virtualStartMicro: MicroUsd;
}

/** What a trade did, for the answer (the same fields ours answers from the wallet's record). */
export interface Traded {
  side: 'buy' | 'sell';
  transferId: string;
  walletContext: WalletContext;
  mint: string;
  /** `price`: attodollars per whole token, as the venue swapped */
  swap: { txId: string; price: bigint; units: number; usdMicro: MicroUsd };
  realizedPnlMicro?: MicroUsd;
  at: string;
}

interface Request {
  userId: string;
  walletContext: WalletContext;
  mint: string;
  now: Date;
  transferId: string;
}

const contextOf = (caller: Caller, walletContext?: WalletContext): WalletContext => walletContext ?? (caller.virtualWalletMode ? 'virtual' : 'real');

/** The venue's final swap; FAILED is a refusal (the transaction rolls back: nothing moved). */
async function finalSwap(swaps: Swaps, request: SwapRequest): Promise<Swap & { txId: string; price: bigint }> {
  const swap = await swaps.swap(request);
  if (swap.status !== 'CONFIRMED') {
    const reason = swap.reason ?? 'SWAP_FAILED';
    throw refuse('SWAP_FAILED', `the venue failed the ${request.side}: ${reason}; nothing moved`, { swapReason: reason });
  }
  return swap as Swap & { txId: string; price: bigint };
}

/** The trade's row; its `price_micro` is the swap's price in whole micro-USD (the bench's prices are whole micro-USD). */
async function record(client: PoolClient, req: Request, t: Traded, balanceAfter: MicroUsd): Promise<void> {
  await client.query({
    name: 'conv-trade-record',
    text: `INSERT INTO manual_trades (transfer_id, user_id, wallet_context, side, mint, units, usd_micro, price_micro, tx_id, realized_pnl_micro, balance_after_micro, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    values: [
      t.transferId,
      req.userId,
      t.walletContext,
      t.side,
      t.mint,
      t.swap.units,
      t.swap.usdMicro,
      (t.swap.price / 10n ** 12n).toString(),
      t.swap.txId,
      t.realizedPnlMicro ?? null,
      balanceAfter,
      req.now,
    ],
  });
}

const tradeOf = (side: 'buy' | 'sell', req: Request, swap: Swap & { txId: string; price: bigint }): Traded => ({
  side,
  transferId: req.transferId,
  walletContext: req.walletContext,
  mint: req.mint,
  swap: { txId: swap.txId, price: swap.price, units: swap.units, usdMicro: swap.usdMicro },
  at: req.now.toISOString(),
});

/** POST /api/v1/wallet/buy: the wallet row pays, the venue swaps, a lot row opens. */
export function buy(deps: TradeDeps, caller: Caller, input: { mint: string; amountMicro: MicroUsd; walletContext?: WalletContext }): Promise<Traded> {
  const req: Request = {
    userId: caller.userId,
    walletContext: contextOf(caller, input.walletContext),
    mint: input.mint,
    now: new Date(),
    transferId: `manual-${randomUUID()}`,
  };
  return inTransaction(deps.db, async (client) => {
    const { userId, walletContext, mint, now, transferId } = req;
    // A mint the venue has no price for is refused before anything moves, as ours does.
    const priced = await client.query({ name: 'conv-mint-priced', text: 'SELECT 1 FROM market_prices WHERE symbol = $1', values: [mint] });
    if (priced.rowCount === 0) throw refuse('NO_MARK_PRICE', `the venue has no price for ${mint}: it cannot be bought until one is set`);
    const balance = await lockWallet(client, userId, walletContext, walletContext === 'virtual' ? deps.virtualStartMicro : 0, now);
    ensureFunds({ opened: true, balances: { virtual: 0, real: 0, [walletContext]: balance } }, walletContext, input.amountMicro, deps.virtualStartMicro);
    const swap = await finalSwap(deps.swaps, { swapId: transferId, userId, walletContext, side: 'buy', mint, amount: input.amountMicro });
    await client.query({
      name: 'conv-lot-open',
      text: 'INSERT INTO wallet_lots (user_id, lot_id, wallet_context, mint, units, cost_micro, opened_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      values: [userId, transferId, walletContext, mint, swap.units, input.amountMicro, now],
    });
    const { rows } = await client.query<{ balance_micro: string }>({
      name: 'conv-trade-debit',
      text: 'UPDATE wallets SET balance_micro = balance_micro - $3, updated_at = $4 WHERE user_id = $1 AND wallet_context = $2 RETURNING balance_micro',
      values: [userId, walletContext, input.amountMicro, now],
    });
    const traded = tradeOf('buy', req, swap);
    await record(client, req, traded, Number(rows[0]!.balance_micro));
    return traded;
  });
}

interface LotRow {
  lot_id: string;
  units: string;
  cost_micro: string;
}

/** POST /api/v1/wallet/sell: refused before any swap when the lots hold less; the lot rows shrink oldest first. */
export function sell(deps: TradeDeps, caller: Caller, input: { mint: string; units: number; walletContext?: WalletContext }): Promise<Traded> {
  const req: Request = {
    userId: caller.userId,
    walletContext: contextOf(caller, input.walletContext),
    mint: input.mint,
    now: new Date(),
    transferId: `manual-${randomUUID()}`,
  };
  return inTransaction(deps.db, async (client) => {
    const { userId, walletContext, mint, now, transferId } = req;
    // The trade lock: every buy and sell of this wallet context takes the wallet row first.
    const locked = await client.query({
      name: 'conv-trade-lock',
      text: 'SELECT balance_micro FROM wallets WHERE user_id = $1 AND wallet_context = $2 FOR UPDATE',
      values: [userId, walletContext],
    });
    const { rows } = locked.rowCount
      ? await client.query<LotRow>({
          name: 'conv-lots',
          text: 'SELECT lot_id, units, cost_micro FROM wallet_lots WHERE user_id = $1 AND wallet_context = $2 AND mint = $3 ORDER BY opened_at, lot_id',
          values: [userId, walletContext, mint],
        })
      : { rows: [] as LotRow[] };
    const lots = rows.map((r) => ({ lotId: r.lot_id, units: Number(r.units), costMicro: Number(r.cost_micro) }) as Lot);
    const held = lots.reduce((sum, l) => sum + l.units, 0);
    if (input.units > held) {
      throw refuse(
        'SELL_EXCEEDS_MANUAL_POSITION',
        `the sell (${unitsToTokens(input.units)}) exceeds the open manual BUY lots of ${mint} (${unitsToTokens(held)})`,
        {
          requestedAmount: unitsToTokens(input.units),
          manualPositionAmount: unitsToTokens(held),
        },
      );
    }
    const swap = await finalSwap(deps.swaps, { swapId: transferId, userId, walletContext, side: 'sell', mint, amount: input.units });
    const reductions = reduceOldestFirst(lots, input.units);
    const byId = new Map(lots.map((l) => [l.lotId, l]));
    const emptied = reductions.filter((r) => r.units === byId.get(r.lotId)!.units).map((r) => r.lotId);
    const partial = reductions.find((r) => r.units < byId.get(r.lotId)!.units);
    if (emptied.length > 0) {
      await client.query({
        name: 'conv-lots-delete',
        text: 'DELETE FROM wallet_lots WHERE user_id = $1 AND lot_id = ANY($2::text[])',
        values: [userId, emptied],
      });
    }
    if (partial) {
      await client.query({
        name: 'conv-lot-reduce',
        text: 'UPDATE wallet_lots SET units = units - $3, cost_micro = cost_micro - $4 WHERE user_id = $1 AND lot_id = $2',
        values: [userId, partial.lotId, partial.units, partial.costMicro],
      });
    }
    const credited = await client.query<{ balance_micro: string }>({
      name: 'conv-trade-credit',
      text: 'UPDATE wallets SET balance_micro = balance_micro + $3, updated_at = $4 WHERE user_id = $1 AND wallet_context = $2 RETURNING balance_micro',
      values: [userId, walletContext, swap.usdMicro, now],
    });
    const costMicro = reductions.reduce((sum, r) => sum + r.costMicro, 0);
    const traded: Traded = { ...tradeOf('sell', req, swap), realizedPnlMicro: swap.usdMicro - costMicro };
    await record(client, req, traded, Number(credited.rows[0]!.balance_micro));
    return traded;
  });
}
