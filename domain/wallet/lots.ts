// Manual BUY lots: what a user bought by hand (POST /api/v1/wallet/buy), held per wallet context
// and mint, reduced oldest first by sells. Token amounts are integer units of 10^-6 of a whole
// token; money is micro-USD. One rounding rule, against the user: tokens bought and proceeds round
// down. A lot's cost is what was paid for it; a partial sell takes its share of the cost (rounded
// down, the rest stays with the lot), so cash + lots at cost changes only by realized PnL.
import { z } from 'zod';
import { marketSymbolSchema } from '../market/events.ts';
import { refuse } from '../shared/errors.ts';
import type { MicroUsd } from '../shared/money.ts';
import { walletContextSchema, type WalletContext } from './context.ts';

/** Token amounts carry 6 decimals: 1 unit = 10^-6 of a whole token. */
export const TOKEN_DECIMALS = 6;
const UNITS_PER_TOKEN = 10n ** BigInt(TOKEN_DECIMALS);
const BPS = 10_000n;

/** A mint, or a symbol the simulated market prices: as the market names it. */
export const mintSchema = marketSymbolSchema;

/** A stop-loss or take-profit as the trader gave it: a price per whole token, or a percent from the lot's average price. */
export const levelSchema = z.union([
  z.object({ priceMicro: z.number().int().positive() }).strict(),
  z.object({ percentBps: z.number().int().positive().max(1_000_000) }).strict(),
]);
export type Level = z.infer<typeof levelSchema>;

export const lotLevelsSchema = z.object({ stopLoss: levelSchema.optional(), takeProfit: levelSchema.optional() });
export type LotLevels = z.infer<typeof lotLevelsSchema>;

/** Levels as prices per whole token, in micro-USD: what the price watcher compares the mark with. */
export interface LevelPrices {
  stopLossMicro?: MicroUsd;
  takeProfitMicro?: MicroUsd;
}

export const lotSchema = z.object({
  /** the buy's transfer id */
  lotId: z.string().min(1),
  walletContext: walletContextSchema,
  mint: mintSchema,
  units: z.number().int().positive(),
  costMicro: z.number().int().min(0),
  openedAt: z.string(),
  stopLossMicro: z.number().int().positive().optional(),
  takeProfitMicro: z.number().int().positive().optional(),
});
export type Lot = z.infer<typeof lotSchema>;

/** What a sell takes of one lot. */
export const reductionSchema = z.object({ lotId: z.string().min(1), units: z.number().int().positive(), costMicro: z.number().int().min(0) });
export type Reduction = z.infer<typeof reductionSchema>;

function safe(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse('VALIDATION_FAILED', `${what} is out of range`);
  return Number(value);
}

/** Units bought with `usdMicro` at `priceMicro` per whole token, rounded down. */
export const unitsFor = (usdMicro: MicroUsd, priceMicro: MicroUsd): number =>
  safe((BigInt(usdMicro) * UNITS_PER_TOKEN) / BigInt(priceMicro), 'the amount of tokens');

/** micro-USD paid for `units` at `priceMicro` per whole token, rounded down. */
export const proceedsFor = (units: number, priceMicro: MicroUsd): MicroUsd => safe((BigInt(units) * BigInt(priceMicro)) / UNITS_PER_TOKEN, 'the proceeds');

/** Whole tokens as a JSON number (6 decimals). */
export const unitsToTokens = (units: number): number => units / Number(UNITS_PER_TOKEN);

/** Average price per whole token of what a lot (or a set of lots) cost, rounded down. */
export const averagePriceMicro = (units: number, costMicro: MicroUsd): MicroUsd =>
  units === 0 ? 0 : Number((BigInt(costMicro) * UNITS_PER_TOKEN) / BigInt(units));

export const openLotsOf = (lots: readonly Lot[], walletContext: WalletContext, mint: string): Lot[] =>
  lots.filter((l) => l.walletContext === walletContext && l.mint === mint);

export const unitsHeld = (lots: readonly Lot[]): number => lots.reduce((sum, l) => sum + l.units, 0);

/**
 * The levels as prices, from the lot's average price: a stop `percent` below it (rounded down), a
 * target `percent` above it (rounded up). A stop at or below 0 cannot trigger: refused.
 *
 * `swapped`: the swap is final (OpenLot, SettleSell), so nothing may be refused any more (a refusal
 * would strand the transfer: its money, its tokens and the wallet's lock); the levels are those
 * asked at the price paid, a stop at or below 0 (it could never trigger) or a target beyond
 * 2^53 − 1 micro-USD left off, and a stop at or above the target kept as asked. A sell checks its
 * levels when requested, before any swap; a buy's average is known only once it swapped.
 */
export function levelPrices(levels: LotLevels | undefined, averageMicro: MicroUsd, { swapped = false } = {}): LevelPrices {
  const out: LevelPrices = {};
  if (levels?.stopLoss) {
    const sl = levels.stopLoss;
    const price = 'priceMicro' in sl ? BigInt(sl.priceMicro) : (BigInt(averageMicro) * (BPS - BigInt(sl.percentBps))) / BPS;
    if (price <= 0n && !swapped) throw refuse('INVALID_LEVELS', 'the stop-loss would be at or below 0');
    if (price > 0n) out.stopLossMicro = safe(price, 'the stop-loss');
  }
  if (levels?.takeProfit) {
    const tp = levels.takeProfit;
    const scaled = BigInt(averageMicro) * (BPS + ('percentBps' in tp ? BigInt(tp.percentBps) : 0n));
    const price = 'priceMicro' in tp ? BigInt(tp.priceMicro) : (scaled + BPS - 1n) / BPS;
    if (!swapped || price <= BigInt(Number.MAX_SAFE_INTEGER)) out.takeProfitMicro = safe(price, 'the take-profit');
  }
  if (!swapped && out.stopLossMicro !== undefined && out.takeProfitMicro !== undefined && out.stopLossMicro >= out.takeProfitMicro) {
    throw refuse('INVALID_LEVELS', 'the stop-loss must be below the take-profit');
  }
  return out;
}

/**
 * Refuses levels that would trigger at once: a stop-loss at or above the mark, a take-profit at or
 * below it (INVALID_LEVELS, 400), before anything moves.
 */
export function ensureLevelsAgainstMark(levels: LotLevels | undefined, markMicro: MicroUsd): void {
  const sl = levels?.stopLoss;
  const tp = levels?.takeProfit;
  if (sl && 'priceMicro' in sl && sl.priceMicro >= markMicro) throw refuse('INVALID_LEVELS', 'the stop-loss must be below the current price');
  if (tp && 'priceMicro' in tp && tp.priceMicro <= markMicro) throw refuse('INVALID_LEVELS', 'the take-profit must be above the current price');
  if (sl && tp && 'priceMicro' in sl && 'priceMicro' in tp && sl.priceMicro >= tp.priceMicro) {
    throw refuse('INVALID_LEVELS', 'the stop-loss must be below the take-profit');
  }
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
    out.push(r && levels && (levels.stopLossMicro !== undefined || levels.takeProfitMicro !== undefined) ? withLevels(left, levels) : left);
  }
  return out;
}

export function withLevels(lot: Lot, levels: LevelPrices): Lot {
  const { stopLossMicro: _sl, takeProfitMicro: _tp, ...rest } = lot;
  return {
    ...rest,
    ...(levels.stopLossMicro !== undefined ? { stopLossMicro: levels.stopLossMicro } : lot.stopLossMicro !== undefined ? { stopLossMicro: lot.stopLossMicro } : {}),
    ...(levels.takeProfitMicro !== undefined ? { takeProfitMicro: levels.takeProfitMicro } : lot.takeProfitMicro !== undefined ? { takeProfitMicro: lot.takeProfitMicro } : {}),
  };
}
