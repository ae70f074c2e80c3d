import { z } from 'zod';
import { parsePriceText, priceToNumber, type Price } from '../../domain/shared/price.ts';
import type { Pool } from '../../infra/db.ts';

/** `priceUsd`: a JSON number whose decimal text is the price's own (docs/decisions.md, "Prices finer than a micro-USD"). */
export const marketPriceItem = z.object({ symbol: z.string(), priceUsd: z.number(), updatedAt: z.string() });
export type MarketPriceItem = z.infer<typeof marketPriceItem>;

/** A numeric(28, 18) as PostgreSQL writes it ("0.000011500000000000") as a price. */
const priceOfColumn = (text: string): Price => parsePriceText(text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text)!;

/** Every mark price, by symbol (bytewise order). */
export async function listPrices(db: Pool): Promise<MarketPriceItem[]> {
  const { rows } = await db.query<{ symbol: string; price: string; updated_at: Date }>(
    'SELECT symbol, price, updated_at FROM market_prices ORDER BY symbol COLLATE "C"',
  );
  return rows.map((r) => ({ symbol: r.symbol, priceUsd: priceToNumber(priceOfColumn(r.price)), updatedAt: r.updated_at.toISOString() }));
}

/** The mark price of a symbol or mint per whole token; null when none was set. */
export async function priceOf(db: Pool, symbolOrMint: string): Promise<Price | null> {
  const { rows } = await db.query<{ price: string }>({
    name: 'market-price-of',
    text: 'SELECT price FROM market_prices WHERE symbol = $1',
    values: [symbolOrMint],
  });
  return rows[0] ? priceOfColumn(rows[0].price) : null;
}

/**
 * The read model as the simulated venue's price source (the venue's `PriceSource` port, matched
 * by shape: projections do not import infra's venues).
 */
export function createReadModelPriceSource(db: Pool): { priceOf(symbolOrMint: string): Promise<Price | null> } {
  return { priceOf: (symbolOrMint) => priceOf(db, symbolOrMint) };
}

/** The mark prices by symbol or mint. */
export async function markPrices(db: Pool): Promise<Map<string, Price>> {
  const { rows } = await db.query<{ symbol: string; price: string }>({ name: 'mark-prices', text: 'SELECT symbol, price FROM market_prices' });
  return new Map(rows.map((r) => [r.symbol, priceOfColumn(r.price)]));
}
