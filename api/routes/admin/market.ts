import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_PRICES_PER_SET, marketSymbolSchema } from '../../../domain/market/events.ts';
import { priceFromNumber, priceNumberSchema } from '../../../domain/shared/price.ts';
import { listPrices, marketPriceItem } from '../../../projections/market/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';

const pricesBody = z
  .object({
    prices: z
      .record(marketSymbolSchema, priceNumberSchema('price'), {
        error: (issue) => (issue.code === 'invalid_key' ? 'not a symbol or mint (1 to 64 letters, digits or / _ . : -)' : undefined),
      })
      .refine((prices) => {
        const n = Object.keys(prices).length;
        return n >= 1 && n <= MAX_PRICES_PER_SET;
      }, `give 1 to ${MAX_PRICES_PER_SET} prices`),
  })
  .strict();

/**
 * Simulated venue only: an administrator sets mark prices (USD per whole token, at most 18
 * decimals, read from the number's decimal text) by symbol or mint; symbols not named keep theirs. Answers every current price.
 */
export default async function adminMarketRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.put(
    '/api/admin/market/prices',
    {
      // 500 prices of 64-character symbols are ~40 KB, 501 members; twice the count, so a list too
      // long gets the schema's own message
      bodyLimit: 64 * 1024,
      config: { access: { scope: 'admin:write' }, jsonMembers: 2 * MAX_PRICES_PER_SET, dispatches: ['SetMarketPrices'] },
      schema: {
        tags: ['Admin'],
        summary: 'Simulated venue only: set mark prices by symbol or mint',
        body: pricesBody,
        response: { 200: envelopeOf(z.object({ prices: z.array(marketPriceItem) })) },
      },
    },
    async (request) => {
      const prices = Object.fromEntries(Object.entries(request.body.prices).map(([symbol, usd]) => [symbol, priceFromNumber(usd)!]));
      await request.dispatch('SetMarketPrices', { prices });
      return ok({ prices: await listPrices(app.deps.pool) });
    },
  );
}
