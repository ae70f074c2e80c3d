import { z } from 'zod';
import { microToUsd, type MicroUsd } from '../../domain/shared/money.ts';
import { walletContexts, walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';
import { currentWalletContextOf } from '../../domain/wallet/context.ts';
import { priceToNumber, type Price } from '../../domain/shared/price.ts';
import { averagePrice, levelFromText, unitsToTokens } from '../../domain/wallet/lots.ts';
import type { Pool } from '../../infra/db.ts';

/**
 * The wallet of GET /api/v1/wallet (and of an administrator's deposit): one entry per wallet
 * context, so each can grow its own fields (manual lots, locks) without a new shape.
 */
export const walletDocument = z.object({
  userId: z.string(),
  /** the context a request without `walletContext` uses: the user's `virtualWalletMode` */
  currentWalletContext: walletContextSchema,
  /** an administrator froze the wallet: nothing can be paid out of it (buys, follows, allocation adds) */
  frozen: z.boolean(),
  wallets: z.array(z.object({ walletContext: walletContextSchema, balanceUsd: z.number() })),
  /** the open manual BUY lots, per wallet context and mint: what a sell may take, oldest lot first */
  positions: z.array(
    z.object({
      walletContext: walletContextSchema,
      mint: z.string(),
      /** whole tokens held in these lots */
      amount: z.number(),
      averagePriceUsd: z.number(),
      costUsd: z.number(),
      lots: z.array(
        z.object({
          lotId: z.string(),
          amount: z.number(),
          averagePriceUsd: z.number(),
          costUsd: z.number(),
          openedAt: z.string(),
          stopLossUsd: z.number().optional(),
          takeProfitUsd: z.number().optional(),
        }),
      ),
    }),
  ),
});
export type WalletDocument = z.infer<typeof walletDocument>;

interface LotRow {
  lot_id: string;
  wallet_context: WalletContext;
  mint: string;
  units: string;
  cost_micro: string;
  opened_at: string;
  /** numeric(28, 18) as text (selected so: a JSON number would be read as a double) */
  stop_loss: string | null;
  take_profit: string | null;
}

/** A numeric(28, 18) level's text ("0.000010350000000000") as the price it stores, exactly. */
const levelOf = (text: string | null): Price | null => (text === null ? null : levelFromText(text));

interface Row {
  virtual_wallet_mode: boolean;
  virtual_micro: string | null;
  real_micro: string | null;
  frozen: boolean | null;
  lots: LotRow[] | null;
}

/** Lots (oldest first within a mint) grouped per context and mint, with their totals. */
function positionsOf(rows: LotRow[]): WalletDocument['positions'] {
  const groups = new Map<string, LotRow[]>();
  for (const row of rows) {
    const key = `${row.wallet_context}\u0000${row.mint}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return [...groups.values()].map((lots) => {
    const units = lots.reduce((sum, l) => sum + Number(l.units), 0);
    const cost = lots.reduce((sum, l) => sum + Number(l.cost_micro), 0);
    return {
      walletContext: lots[0]!.wallet_context,
      mint: lots[0]!.mint,
      amount: unitsToTokens(units),
      averagePriceUsd: priceToNumber(averagePrice(units, cost)),
      costUsd: microToUsd(cost),
      lots: lots.map((l) => ({
        lotId: l.lot_id,
        amount: unitsToTokens(Number(l.units)),
        averagePriceUsd: priceToNumber(averagePrice(Number(l.units), Number(l.cost_micro))),
        costUsd: microToUsd(Number(l.cost_micro)),
        openedAt: new Date(l.opened_at).toISOString(),
        ...(l.stop_loss !== null ? { stopLossUsd: priceToNumber(levelOf(l.stop_loss)!) } : {}),
        ...(l.take_profit !== null ? { takeProfitUsd: priceToNumber(levelOf(l.take_profit)!) } : {}),
      })),
    };
  });
}

/**
 * The user's wallet; null for an unknown user. A wallet never used shows what it would open with:
 * `virtualStartMicro` and 0, as the domain's `balanceOf` says.
 */
export async function getWallet(db: Pool, userId: string, virtualStartMicro: MicroUsd): Promise<WalletDocument | null> {
  const { rows } = await db.query<Row>({
    name: 'get-wallet',
    text: `SELECT u.virtual_wallet_mode, w.virtual_micro, w.real_micro, w.frozen,
         (SELECT json_agg(l ORDER BY l.wallet_context, l.mint, l.opened_at, l.lot_id)
          FROM (SELECT lot_id, wallet_context, mint, units, cost_micro, opened_at, stop_loss::text AS stop_loss, take_profit::text AS take_profit
                FROM wallet_lots WHERE user_id = u.id::text) l) AS lots
       FROM users u LEFT JOIN wallets w ON w.user_id = u.id::text WHERE u.id = $1::uuid`,
    values: [userId],
  });
  const row = rows[0];
  if (!row) return null;
  const balances: Record<WalletContext, bigint> = {
    virtual: row.virtual_micro === null ? BigInt(virtualStartMicro) : BigInt(row.virtual_micro),
    real: row.real_micro === null ? 0n : BigInt(row.real_micro),
  };
  return {
    userId,
    currentWalletContext: currentWalletContextOf({ virtualWalletMode: row.virtual_wallet_mode }),
    frozen: row.frozen === true,
    wallets: walletContexts.map((walletContext) => ({ walletContext, balanceUsd: microToUsd(balances[walletContext]) })),
    positions: positionsOf(row.lots ?? []),
  };
}

/** A lot with a stop-loss or take-profit: what the price watcher compares with the mark. */
export interface LeveledLot {
  userId: string;
  lotId: string;
  mint: string;
  stopLoss: Price | null;
  takeProfit: Price | null;
}

/** Lots with levels, a page at a time in (user, lot) order. */
export async function leveledLots(db: Pool, after: { userId: string; lotId: string } | null, limit: number): Promise<LeveledLot[]> {
  const { rows } = await db.query<{ user_id: string; lot_id: string; mint: string; stop_loss: string | null; take_profit: string | null }>({
    name: 'leveled-lots',
    text: `SELECT user_id, lot_id, mint, stop_loss::text AS stop_loss, take_profit::text AS take_profit FROM wallet_lots
       WHERE (stop_loss IS NOT NULL OR take_profit IS NOT NULL) AND (user_id, lot_id) > ($1, $2)
       ORDER BY user_id, lot_id LIMIT $3`,
    values: [after?.userId ?? '', after?.lotId ?? '', limit],
  });
  return rows.map((r) => ({
    userId: r.user_id,
    lotId: r.lot_id,
    mint: r.mint,
    stopLoss: levelOf(r.stop_loss),
    takeProfit: levelOf(r.take_profit),
  }));
}
