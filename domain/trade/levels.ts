// Where a trade may fill and which stops and targets agree with its side.
import { InvariantViolation, refuse } from '../shared/errors.ts';
import { crossed, priceText, type Price } from '../shared/price.ts';
import type { PriceEntry, TakeProfit } from './commands.ts';
import type { Side } from './events.ts';
import { BPS, ceilDiv, floorDiv, percentToBps } from './maths.ts';
import type { PriceTarget } from './state.ts';

/** The lowest and highest price a fill may happen at. */
export type FillRange = readonly [Price, Price];

/**
 * A zone's prices widened by the slippage tolerance: docs/domain-rules.md opens a zone "at market within the
 * slippage tolerance", so a mark a little outside the zone still fills (at the mark).
 */
export function zoneWithSlippage(entry: Extract<PriceEntry, { kind: 'zone' }>, slippageBps: number): FillRange {
  const s = BigInt(slippageBps);
  return [floorDiv(entry.low * (BPS - s), BPS), ceilDiv(entry.high * (BPS + s), BPS)];
}

/** The price a pending entry fills at on a tick at `price`, or null while it waits. */
export function fillPriceAt(entry: PriceEntry, slippageBps: number, price: Price): Price | null {
  switch (entry.kind) {
    case 'market':
      return price;
    case 'zone': {
      const [low, high] = zoneWithSlippage(entry, slippageBps);
      return price >= low && price <= high ? price : null;
    }
    case 'breakout':
      // A breakout is a resting stop order: the simulated venue fills it at its trigger.
      return crossed(entry.direction, price, entry.price) ? entry.price : null;
  }
}

/** Every price the entry may still fill at (a pending entry). */
export function pendingRange(entry: PriceEntry, slippageBps: number): FillRange {
  if (entry.kind === 'zone') return zoneWithSlippage(entry, slippageBps);
  if (entry.kind === 'breakout') return [entry.price, entry.price];
  throw new InvariantViolation('a market entry is never pending');
}

const gainsUp = (side: Side): boolean => side !== 'short';

/** Stop below every fill price for a long (above for a short). */
const span = (range: FillRange): string => `[${priceText(range[0])}, ${priceText(range[1])}] USD`;

export function checkStop(side: Side, range: FillRange, stop: Price): void {
  const ok = gainsUp(side) ? stop < range[0] : stop > range[1];
  if (!ok) throw refuse('INVALID_LEVELS', `the stop ${priceText(stop)} USD contradicts a ${side} filling within ${span(range)}`);
}

/** Targets above every fill price for a long (below for a short), each further than the one before. */
export function checkTargets(side: Side, range: FillRange, prices: Price[]): void {
  const up = gainsUp(side);
  prices.forEach((p, i) => {
    const beyondFill = up ? p > range[1] : p < range[0];
    const previous = i === 0 ? null : prices[i - 1]!;
    const ordered = previous === null || (up ? p > previous : p < previous);
    if (!beyondFill) throw refuse('INVALID_LEVELS', `target ${priceText(p)} USD contradicts a ${side} filling within ${span(range)}`);
    if (!ordered) throw refuse('INVALID_LEVELS', `targets of a ${side} must each be further from the entry than the one before`);
  });
}

/**
 * Take-profit tiers of `shareBps` of the original size (all of it for a new trade, what remains
 * for an open one): given percents are kept; the share they leave is split evenly between the
 * targets without one, the last of those absorbing the rounding. When every target has a percent
 * and they leave part of the share, that part is a runner (closed by the stop or a close).
 */
export function resolveTargets(takeProfits: TakeProfit[], shareBps: number, firstTier: number): PriceTarget[] {
  const given = takeProfits.map((tp, i) => (tp.closePercent === undefined ? null : percentToBps(tp.closePercent, `takeProfits.${i}.closePercent`)));
  const givenSum = given.reduce<number>((sum, bps) => sum + (bps ?? 0), 0);
  if (givenSum > shareBps) {
    throw refuse('VALIDATION_FAILED', `take-profit percents add up to ${givenSum / 100}%, above the ${shareBps / 100}% they may close`);
  }
  const open = given.filter((bps) => bps === null).length;
  const each = open === 0 ? 0 : Math.floor((shareBps - givenSum) / open);
  const lastOpen = given.lastIndexOf(null);
  const bpsOf = (i: number): number => given[i] ?? (i === lastOpen ? shareBps - givenSum - each * (open - 1) : each);
  const noRunner = open > 0 || givenSum === shareBps;
  return takeProfits.map((tp, i) => ({
    tier: firstTier + i,
    price: tp.price,
    closeBps: bpsOf(i),
    closesRest: noRunner && i === takeProfits.length - 1,
  }));
}
