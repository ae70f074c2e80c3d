// Manual BUY lots: what a user bought by hand (POST /api/v1/wallet/buy), held per wallet context
// and mint, reduced oldest first by sells. Token amounts are integer units of 10^-6 of a whole
// token; money is micro-USD; a price per whole token is exact (attodollars, domain/shared/price.ts).
// One rounding rule, against the user: tokens bought and proceeds round down. A lot's cost is what was paid for it; a partial sell takes its share of the cost (rounded
// down, the rest stays with the lot), so cash + lots at cost changes only by realized PnL.
import { z } from 'zod';
import { marketSymbolSchema } from '../market/events.ts';
import { refuse } from '../shared/errors.ts';
import type { MicroUsd } from '../shared/money.ts';
import { ATTO_PER_MICRO, MAX_PRICE, PRICE_SCALE, priceFromMicro, priceText, priceTextSchema, storedPrice, type Price } from '../shared/price.ts';
import { walletContextSchema, type WalletContext } from './context.ts';

/** Token amounts carry 6 decimals: 1 unit = 10^-6 of a whole token. */
export const TOKEN_DECIMALS = 6;
const UNITS_PER_TOKEN = 10n ** BigInt(TOKEN_DECIMALS);
const BPS = 10_000n;
/** micro-USD × ATTO_UNITS / units = attodollars per whole token */
const ATTO_UNITS = ATTO_PER_MICRO * UNITS_PER_TOKEN;

/** A mint, or a symbol the simulated market prices: as the market names it. */
export const mintSchema = marketSymbolSchema;

/**
 * A level stored before prices were finer than a micro-USD held `{ priceMicro }`: read, it is
 * `{ price }`, the same price as decimal USD text (never rewritten).
 */
export function upcastLevel(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || !('priceMicro' in raw)) return raw;
  const { priceMicro, ...rest } = raw as { priceMicro: unknown };
  return {
    ...rest,
    price: typeof priceMicro === 'number' && Number.isSafeInteger(priceMicro) && priceMicro > 0 ? priceText(priceFromMicro(priceMicro)) : priceMicro,
  };
}

/** A stop-loss or take-profit as the trader gave it: a price per whole token (decimal USD text), or a percent from the lot's average price. */
export const levelSchema = z.preprocess(
  upcastLevel,
  z.union([z.object({ price: priceTextSchema }).strict(), z.object({ percentBps: z.number().int().positive().max(1_000_000) }).strict()]),
);
export type Level = z.infer<typeof levelSchema>;

export const lotLevelsSchema = z.object({ stopLoss: levelSchema.optional(), takeProfit: levelSchema.optional() });
export type LotLevels = z.infer<typeof lotLevelsSchema>;

/** A level's price, when it is one (an old `{ priceMicro }` read as it meant). */
export function levelPriceOf(level: Level | undefined): Price | undefined {
  if (!level) return undefined;
  const up = upcastLevel(level) as Level;
  return 'price' in up ? storedPrice(up.price) : undefined;
}

/**
 * A lot's stop-loss or take-profit as an event or the read model stores it: decimal USD text. Not
 * `priceTextSchema`: a take-profit from a percent recorded before prices were finer may be above
 * 1e9 USD (up to 2^53 − 1 micro-USD, about 9.007e9 USD); it can never trigger, yet it stays as it
 * was recorded. Those recorded since are at most 1e9 USD (`levelPrices`).
 */
const LEVEL_TEXT = /^(0|[1-9]\d{0,9})(?:\.(\d{1,18}))?$/;

/** A lot's level text ("0.00001035", "120.000000000000000000") as its price; throws on a malformed one (a corrupt row or event). */
export function levelFromText(text: string): Price {
  const m = LEVEL_TEXT.exec(text);
  if (!m) throw new RangeError(`not a stored level: ${JSON.stringify(text)}`);
  return BigInt(m[1]!) * PRICE_SCALE + BigInt((m[2] ?? '').padEnd(18, '0'));
}

export const lotLevelTextSchema = z
  .string()
  .regex(LEVEL_TEXT, 'a level is decimal USD text')
  .refine((text) => levelFromText(text) > 0n, 'a level is above 0');

/** Levels as prices per whole token: what the price watcher compares the mark with. */
export interface LevelPrices {
  stopLoss?: Price;
  takeProfit?: Price;
}

export const lotSchema = z.object({
  /** the buy's transfer id */
  lotId: z.string().min(1),
  walletContext: walletContextSchema,
  mint: mintSchema,
  units: z.number().int().positive(),
  costMicro: z.number().int().min(0),
  openedAt: z.string(),
  stopLoss: z.bigint().positive().optional(),
  takeProfit: z.bigint().positive().optional(),
});
export type Lot = z.infer<typeof lotSchema>;

/** What a sell takes of one lot. */
export const reductionSchema = z.object({ lotId: z.string().min(1), units: z.number().int().positive(), costMicro: z.number().int().min(0) });
export type Reduction = z.infer<typeof reductionSchema>;

function safe(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse('VALIDATION_FAILED', `${what} is out of range`);
  return Number(value);
}

/** Units bought with `usdMicro` at `price` per whole token, rounded down (against the buyer). */
export const unitsFor = (usdMicro: MicroUsd, price: Price): number => safe((BigInt(usdMicro) * ATTO_UNITS) / price, 'the amount of tokens');

/** micro-USD paid for `units` at `price` per whole token, rounded down (against the seller). */
export const proceedsFor = (units: number, price: Price): MicroUsd => safe((BigInt(units) * price) / ATTO_UNITS, 'the proceeds');

/** Whole tokens as a JSON number (6 decimals). */
export const unitsToTokens = (units: number): number => units / Number(UNITS_PER_TOKEN);

/** Average price per whole token of what a lot (or a set of lots) cost, rounded down to 10^-18 USD. */
export const averagePrice = (units: number, costMicro: MicroUsd): Price => (units === 0 ? 0n : (BigInt(costMicro) * ATTO_UNITS) / BigInt(units));

export const openLotsOf = (lots: readonly Lot[], walletContext: WalletContext, mint: string): Lot[] =>
  lots.filter((l) => l.walletContext === walletContext && l.mint === mint);

export const unitsHeld = (lots: readonly Lot[]): number => lots.reduce((sum, l) => sum + l.units, 0);

/**
 * The levels as prices, from the lot's average price: a stop `percent` below it (rounded down), a
 * target `percent` above it (rounded up), both at 10^-18 USD. A stop at or below 0 cannot trigger,
 * and a level above 1e9 USD (MAX_PRICE) cannot be stored: refused.
 *
 * `swapped`: the swap is final (OpenLot, SettleSell), so nothing may be refused any more (a refusal
 * would strand the transfer: its money, its tokens and the wallet's lock); the levels are those
 * asked at the price paid, a stop at or below 0 (it could never trigger) or a target above
 * MAX_PRICE left off, and a stop at or above the target kept as asked. A sell checks its levels
 * when requested, before any swap; a buy's average is known only once it swapped.
 */
export function levelPrices(levels: LotLevels | undefined, average: Price, { swapped = false } = {}): LevelPrices {
  const out: LevelPrices = {};
  if (levels?.stopLoss) {
    const sl = upcastLevel(levels.stopLoss) as Level;
    const price = 'price' in sl ? storedPrice(sl.price) : (average * (BPS - BigInt(sl.percentBps))) / BPS;
    if (price <= 0n && !swapped) throw refuse('INVALID_LEVELS', 'the stop-loss would be at or below 0');
    if (price > 0n) out.stopLoss = price;
  }
  if (levels?.takeProfit) {
    const tp = upcastLevel(levels.takeProfit) as Level;
    const price = 'price' in tp ? storedPrice(tp.price) : (average * (BPS + BigInt(tp.percentBps)) + BPS - 1n) / BPS;
    if (price > MAX_PRICE && !swapped) throw refuse('INVALID_LEVELS', 'the take-profit would be above 1000000000 USD');
    if (price <= MAX_PRICE) out.takeProfit = price;
  }
  if (!swapped && out.stopLoss !== undefined && out.takeProfit !== undefined && out.stopLoss >= out.takeProfit) {
    throw refuse('INVALID_LEVELS', 'the stop-loss must be below the take-profit');
  }
  return out;
}

/**
 * Refuses levels that would trigger at once: a stop-loss at or above the mark, a take-profit at or
 * below it (INVALID_LEVELS), before anything moves.
 */
export function ensureLevelsAgainstMark(levels: LotLevels | undefined, mark: Price): void {
  const sl = levelPriceOf(levels?.stopLoss);
  const tp = levelPriceOf(levels?.takeProfit);
  if (sl !== undefined && sl >= mark) throw refuse('INVALID_LEVELS', 'the stop-loss must be below the current price');
  if (tp !== undefined && tp <= mark) throw refuse('INVALID_LEVELS', 'the take-profit must be above the current price');
  if (sl !== undefined && tp !== undefined && sl >= tp) throw refuse('INVALID_LEVELS', 'the stop-loss must be below the take-profit');
}

/** What selling `units` takes of the open lots of one mint, oldest first; the caller checked they hold enough. */
export function reduceOldestFirst(lots: readonly Lot[], units: number): Reduction[] {
  const reductions: Reduction[] = [];
  let left = units;
  for (const lot of lots) {
    if (left === 0) break;
    const take = Math.min(lot.units, left);
    const costMicro = take === lot.units ? lot.costMicro : Number((BigInt(lot.costMicro) * BigInt(take)) / BigInt(lot.units));
    reductions.push({ lotId: lot.lotId, units: take, costMicro });
    left -= take;
  }
  if (left !== 0) throw new Error(`reduceOldestFirst: ${left} units beyond the lots`);
  return reductions;
}

/** The lots after a sell's reductions: emptied lots leave; `levels` (a sell's new stop/target) go on the lot left. */
export function applyReductions(lots: readonly Lot[], reductions: readonly Reduction[], levels?: LevelPrices): Lot[] {
  const byId = new Map(reductions.map((r) => [r.lotId, r]));
  const out: Lot[] = [];
  for (const lot of lots) {
    const r = byId.get(lot.lotId);
    const left = r ? { ...lot, units: lot.units - r.units, costMicro: lot.costMicro - r.costMicro } : lot;
    if (left.units === 0) continue;
    out.push(r && levels && (levels.stopLoss !== undefined || levels.takeProfit !== undefined) ? withLevels(left, levels) : left);
  }
  return out;
}

export function withLevels(lot: Lot, levels: LevelPrices): Lot {
  const { stopLoss: _sl, takeProfit: _tp, ...rest } = lot;
  const stopLoss = levels.stopLoss ?? lot.stopLoss;
  const takeProfit = levels.takeProfit ?? lot.takeProfit;
  return { ...rest, ...(stopLoss !== undefined ? { stopLoss } : {}), ...(takeProfit !== undefined ? { takeProfit } : {}) };
}
