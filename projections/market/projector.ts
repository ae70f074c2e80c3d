// The simulated venue's mark prices: one row per symbol or mint, its last price and when it was set.
import { marketEventSchema, marketEventTypes } from '../../domain/market/events.ts';
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
      `INSERT INTO market_prices (symbol, price_micro, updated_at)
       SELECT symbol, price, $3 FROM unnest($1::text[], $2::bigint[]) AS v(symbol, price)
       ON CONFLICT (symbol) DO UPDATE SET price_micro = excluded.price_micro, updated_at = excluded.updated_at`,
      [entries.map(([symbol]) => symbol), entries.map(([, price]) => price), data.at],
    );
  },
};
