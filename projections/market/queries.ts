import { z } from 'zod';
import { microToUsd, type MicroUsd } from '../../domain/shared/money.ts';
import type { Pool } from '../../infra/db.ts';

export const marketPriceItem = z.object({ symbol: z.string(), priceUsd: z.number(), updatedAt: z.string() });
export type MarketPriceItem = z.infer<typeof marketPriceItem>;

/** Every mark price, by symbol (bytewise order). */
export async function listPrices(db: Pool): Promise<MarketPriceItem[]> {
  const { rows } = await db.query<{ symbol: string; price_micro: string; updated_at: Date }>(
    'SELECT symbol, price_micro, updated_at FROM market_prices ORDER BY symbol COLLATE "C"',
  );
  return rows.map((r) => ({ symbol: r.symbol, priceUsd: microToUsd(BigInt(r.price_micro)), updatedAt: r.updated_at.toISOString() }));
}

/** The mark price of a symbol or mint in micro-USD per whole token; null when none was set. */
export async function priceOf(db: Pool, symbolOrMint: string): Promise<MicroUsd | null> {
  const { rows } = await db.query<{ price_micro: string }>({
    name: 'market-price-of',
    text: 'SELECT price_micro FROM market_prices WHERE symbol = $1',
    values: [symbolOrMint],
  });
  return rows[0] ? Number(rows[0].price_micro) : null;
}

/**
 * The read model as the simulated venue's price source (the venue's `PriceSource` port, matched
 * by shape: projections do not import infra's venues).
 */
export function createReadModelPriceSource(db: Pool): { priceOf(symbolOrMint: string): Promise<MicroUsd | null> } {
  return { priceOf: (symbolOrMint) => priceOf(db, symbolOrMint) };
}

/** The mark prices, micro-USD by symbol or mint. */
export async function markPrices(db: Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ symbol: string; price_micro: string }>({ name: 'mark-prices', text: 'SELECT symbol, price_micro FROM market_prices' });
  return new Map(rows.map((r) => [r.symbol, Number(r.price_micro)]));
}
