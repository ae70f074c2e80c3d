// The open manual BUY lots of every wallet, one row per lot, as the wallet's events leave them:
// GET /api/v1/wallet lists them, the price watcher reads those with a stop-loss or take-profit.
import type { WalletEvent } from '../../domain/wallet/events.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';

export const lotMigrations: Migration[] = [
  {
    id: 'wallets/003-lots',
    sql: `CREATE TABLE wallet_lots (
      user_id text NOT NULL,
      lot_id text NOT NULL,
      wallet_context text NOT NULL,
      mint text NOT NULL,
      units bigint NOT NULL,
      cost_micro bigint NOT NULL,
      opened_at timestamptz NOT NULL,
      stop_loss_micro bigint,
      take_profit_micro bigint,
      PRIMARY KEY (user_id, lot_id)
    );
    CREATE INDEX wallet_lots_levels ON wallet_lots (mint) WHERE stop_loss_micro IS NOT NULL OR take_profit_micro IS NOT NULL;`,
  },
  // Prices finer than a micro-USD: the levels are USD per whole token, exact to 10^-18; the rows
  // stored convert exactly (the events say the same prices: a rebuild gives the same table).
  {
    id: 'wallets/004-exact-levels',
    sql: `DROP INDEX wallet_lots_levels;
    ALTER TABLE wallet_lots ALTER COLUMN stop_loss_micro TYPE numeric(28, 18) USING stop_loss_micro / 1000000.0,
      ALTER COLUMN take_profit_micro TYPE numeric(28, 18) USING take_profit_micro / 1000000.0;
    ALTER TABLE wallet_lots RENAME COLUMN stop_loss_micro TO stop_loss;
    ALTER TABLE wallet_lots RENAME COLUMN take_profit_micro TO take_profit;
    CREATE INDEX wallet_lots_levels ON wallet_lots (mint) WHERE stop_loss IS NOT NULL OR take_profit IS NOT NULL;`,
  },
];

/** Applies a lot's event (opened, sold); other events change no lot. */
export async function applyLotEvent(client: PoolClient, userId: string, event: WalletEvent): Promise<void> {
  if (event.type === 'LotOpened') {
    const d = event.data;
    await client.query(
      `INSERT INTO wallet_lots (user_id, lot_id, wallet_context, mint, units, cost_micro, opened_at, stop_loss, take_profit)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [userId, d.transferId, d.walletContext, d.mint, d.units, d.costMicro, d.openedAt, d.stopLoss ?? null, d.takeProfit ?? null],
    );
    return;
  }
  if (event.type !== 'LotsSold') return;
  const { reductions, stopLoss, takeProfit } = event.data;
  await client.query(
    `UPDATE wallet_lots l SET units = l.units - r.units, cost_micro = l.cost_micro - r.cost
     FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS r(lot_id, units, cost) WHERE l.user_id = $1 AND l.lot_id = r.lot_id`,
    [userId, reductions.map((r) => r.lotId), reductions.map((r) => r.units), reductions.map((r) => r.costMicro)],
  );
  await client.query('DELETE FROM wallet_lots WHERE user_id = $1 AND lot_id = ANY($2::text[]) AND units = 0', [userId, reductions.map((r) => r.lotId)]);
  if (stopLoss !== undefined || takeProfit !== undefined) {
    await client.query(
      `UPDATE wallet_lots SET stop_loss = COALESCE($3::numeric, stop_loss), take_profit = COALESCE($4::numeric, take_profit)
       WHERE user_id = $1 AND lot_id = $2`,
      [userId, reductions.at(-1)!.lotId, stopLoss ?? null, takeProfit ?? null],
    );
  }
}
