// The simulated venue's mark prices: one row per symbol or mint, its last price and when it was set.
// `price` is the exact decimal USD (numeric: 18 decimals); old events' micro-USD are upcast.
import { marketEventSchema, marketEventTypes, marketPriceOf } from '../../domain/market/events.ts';
import { priceText } from '../../domain/shared/price.ts';
import type { Migration } from '../../infra/db.ts';
import type { Projector } from '../projector.ts';

const migrations: Migration[] = [
  {
    id: 'market/001-market-prices',
    sql: `CREATE TABLE market_prices (
      symbol text PRIMARY KEY,
      price_micro bigint NOT NULL,
      updated_at timestamptz NOT NULL
    );`,
  },
  {
    // Prices finer than a micro-USD: the exact decimal, rebuilt from the events.
    id: 'market/002-exact-prices',
    sql: `DROP TABLE market_prices;
    CREATE TABLE market_prices (
      symbol text PRIMARY KEY,
      price numeric(28, 18) NOT NULL,
      updated_at timestamptz NOT NULL
    );
    DELETE FROM projection_checkpoints WHERE name = 'market-prices';`,
  },
];

export const marketPricesProjector: Projector = {
  name: 'market-prices',
  migrations,
  tables: ['market_prices'],
  async apply(client, recorded) {
    if (!recorded.streamName.startsWith('market-') || !marketEventTypes.has(recorded.type)) return;
    const { data } = marketEventSchema.parse({ type: recorded.type, data: recorded.data });
    const entries = Object.entries(data.prices);
    await client.query(
      `INSERT INTO market_prices (symbol, price, updated_at)
       SELECT symbol, price, $3 FROM unnest($1::text[], $2::numeric[]) AS v(symbol, price)
       ON CONFLICT (symbol) DO UPDATE SET price = excluded.price, updated_at = excluded.updated_at`,
      [entries.map(([symbol]) => symbol), entries.map(([, price]) => priceText(marketPriceOf(price))), data.at],
    );
  },
};
