// The wallet routes' bodies and answers, in one place.
import { z } from 'zod';
import { hasAtMostDecimals, toUnits, usdAmountSchema } from '../../../domain/shared/money.ts';
import { priceFromNumber, priceNumberSchema, priceText } from '../../../domain/shared/price.ts';
import { walletContextSchema } from '../../../domain/wallet/context.ts';
import { mintSchema, TOKEN_DECIMALS, type Level, type LotLevels } from '../../../domain/wallet/lots.ts';

/**
 * A stop-loss or take-profit as a trader writes it: `price` (USD per whole token, up to 18 decimals) or `percent`
 * (from the lot's average price: a stop below it, a target above it), exactly one of the two.
 */
const levelBody = (what: string, maxPercent: number) =>
  z
    .object({
      price: priceNumberSchema(`${what}.price`).optional(),
      percent: z
        .number()
        .gt(0, `${what}.percent must be positive`)
        .max(maxPercent, `${what}.percent must be at most ${maxPercent}`)
        .refine((p) => hasAtMostDecimals(p, 2), `${what}.percent has more than 2 decimals`)
        .optional(),
    })
    .strict()
    .refine((l) => (l.price === undefined) !== (l.percent === undefined), `${what} takes exactly one of price and percent`);

const levelFields = {
  stopLoss: levelBody('stopLoss', 99.99).optional(),
  takeProfit: levelBody('takeProfit', 10_000).optional(),
};

type LevelBody = { price?: number | undefined; percent?: number | undefined };

const levelOf = (l: LevelBody): Level =>
  l.price !== undefined ? { price: priceText(priceFromNumber(l.price)!) } : { percentBps: Number(toUnits(l.percent!, 2)) };

/** The body's levels as the domain takes them; undefined without any. */
export function levelsOf(body: { stopLoss?: LevelBody | undefined; takeProfit?: LevelBody | undefined }): LotLevels | undefined {
  if (!body.stopLoss && !body.takeProfit) return undefined;
  return { ...(body.stopLoss ? { stopLoss: levelOf(body.stopLoss) } : {}), ...(body.takeProfit ? { takeProfit: levelOf(body.takeProfit) } : {}) };
}

export const buyBody = z
  .object({
    mint: mintSchema,
    amountUsd: usdAmountSchema('amountUsd'),
    walletContext: walletContextSchema.optional(),
    ...levelFields,
  })
  .strict();

const tokenAmount = z
  .number({ message: 'amount must be a number' })
  .gt(0, 'amount must be positive')
  .max(1_000_000_000, 'amount must be at most 1000000000')
  .refine((a) => hasAtMostDecimals(a, TOKEN_DECIMALS), `amount has more than ${TOKEN_DECIMALS} decimals`);

export const sellBody = z
  .object({
    amount: tokenAmount,
    /** the token to sell; defaults to the primary spend stablecoin (a withdrawal to `destination`) */
    mint: mintSchema.optional(),
    /** where a withdrawal of the spend stablecoin goes (used for withdraw only) */
    destination: z.string().min(1).max(128).optional(),
    walletContext: walletContextSchema.optional(),
    ...levelFields,
  })
  .strict();

/** The spec's sell result; a buy answers the same shape. Extra fields say the price and the USD moved. */
export const tradeResult = z.object({
  success: z.boolean(),
  transactionId: z.string(),
  amount: z.number(),
  tokenSymbol: z.string(),
  message: z.string(),
  timestamp: z.string(),
  tradeId: z.string(),
  openTradeUpdatePending: z.boolean(),
  /** a sell of the spend stablecoin is a withdrawal to `destination` */
  side: z.enum(['buy', 'sell', 'withdraw']),
  destination: z.string().optional(),
  walletContext: walletContextSchema,
  mint: z.string(),
  priceUsd: z.number(),
  amountUsd: z.number(),
  realizedPnlUsd: z.number().optional(),
});
export type TradeResultJson = z.infer<typeof tradeResult>;
