// The column type changes of "Manual wallet at exact prices" (docs/decisions.md): the simulated
// swaps' `price_micro bigint` and the lots' `stop_loss_micro` / `take_profit_micro bigint` become
// USD per whole token in numeric(28, 18). Rows stored before convert exactly and read back as the
// same prices through the code that reads them.
import t from 'tap';
import { migrate } from '../../../infra/db.ts';
import { createInMemoryPrices } from '../../../infra/venues/prices.ts';
import { createSimulatedSwaps, simulatedSwapMigrations } from '../../../infra/venues/swaps.ts';
import { leveledLots } from '../../../projections/wallets/queries.ts';
import { lotMigrations } from '../../../projections/wallets/lots.ts';
import { freshDatabase } from '../../support/db.ts';

t.test('micro-USD rows become exact numeric prices', async (t) => {
  const db = await freshDatabase('pricecols');
  t.teardown(() => db.drop());
  const [swapsBefore, swapsChange] = [simulatedSwapMigrations.slice(0, -1), simulatedSwapMigrations.at(-1)!];
  const [lotsBefore, lotsChange] = [lotMigrations.slice(0, -1), lotMigrations.at(-1)!];
  t.equal(swapsChange.id, 'venue/003-exact-prices');
  t.equal(lotsChange.id, 'wallets/004-exact-levels');
  await migrate(db.pool, [...swapsBefore, ...lotsBefore]);
  await db.pool.query(`INSERT INTO simulated_swaps (swap_id, user_id, wallet_context, side, mint, amount, status, tx_id, price_micro, units, usd_micro)
    VALUES ('old-1', 'u1', 'virtual', 'buy', 'SOL', 300000000, 'CONFIRMED', 'simtx-old', 150000007, 2000000, 300000000)`);
  await db.pool.query(`INSERT INTO wallet_lots (user_id, lot_id, wallet_context, mint, units, cost_micro, opened_at, stop_loss_micro, take_profit_micro)
    VALUES ('u1', 'old-1', 'virtual', 'SOL', 2000000, 300000000, now(), 12, 9007199254740991)`);
  await migrate(db.pool, [...swapsBefore, swapsChange, ...lotsBefore, lotsChange]);

  const swaps = createSimulatedSwaps({ pool: db.pool, prices: createInMemoryPrices({}) });
  t.match(
    await swaps.status('old-1'),
    { status: 'CONFIRMED', price: 150_000_007n * 10n ** 12n, units: 2_000_000, usdMicro: 300_000_000 },
    '150.000007 USD, exactly',
  );
  t.same(
    await leveledLots(db.pool, null, 10),
    [{ userId: 'u1', lotId: 'old-1', mint: 'SOL', stopLoss: 12n * 10n ** 12n, takeProfit: 9_007_199_254_740_991n * 10n ** 12n }],
    'a level of 12 micro-USD and one of 2^53 − 1 micro-USD, exactly',
  );
});
