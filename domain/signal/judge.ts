// What each block read means — an open, follow-ups, or nothing and why — and the interpretation of
// the whole message: every trade it holds or none of them.
import { directionOf, type Entry, type Intent, type Interpretation, type LevelProblem, type OpenIntent, type Side, type UnmatchedReason } from './intent.ts';
import { maxPrice, minPrice, priceText, type Price } from '../shared/price.ts';
import { levelProblems } from './levels.ts';
import type { Action, BlockReading, Target } from './reader.ts';

const lowest = (prices: readonly Price[]): Price => prices.reduce(minPrice);
const highest = (prices: readonly Price[]): Price => prices.reduce(maxPrice);
const targetsOf = (targets: readonly Target[]) =>
  targets.map((t) => (t.closePercent === undefined ? { price: priceText(t.price) } : { price: priceText(t.price), closePercent: t.closePercent }));

export type BlockResult =
  | { kind: 'open'; intent: OpenIntent; badPrices: number }
  | { kind: 'followUps'; intents: Intent[] }
  | { kind: 'none'; reason: UnmatchedReason };

function entryOf(r: BlockReading, side: Side): Entry {
  if (r.breakout) {
    const direction = r.breakout.direction ?? (directionOf(side) === 'long' ? 'above' : 'below');
    return { type: 'breakout', direction, price: priceText(r.breakout.price) };
  }
  if (r.market) {
    const price = r.marketPrice ?? r.entryPrices[0];
    return price === undefined ? { type: 'market' } : { type: 'market', price: priceText(price) };
  }
  if (r.entryPrices.length === 0) return { type: 'market' };
  return { type: 'zone', low: priceText(lowest(r.entryPrices)), high: priceText(highest(r.entryPrices)) };
}

/**
 * The side a message's levels imply when it names none: every target above the entry means a long,
 * every target below it a short. Without an entry price the stop is the reference. Targets on both
 * sides, or nothing to compare them with, imply nothing.
 */
function sideFromLevels(r: BlockReading): Side | undefined {
  const targets = r.takeProfits.map((t) => t.price);
  const entries =
    r.entryPrices.length > 0 ? r.entryPrices : [r.breakout?.price ?? r.marketPrice ?? r.tokenPrices[0] ?? r.stopLoss].filter((p) => p !== undefined);
  if (targets.length === 0 || entries.length === 0) return undefined;
  if (targets.every((p) => p > highest(entries))) return 'long';
  if (targets.every((p) => p < lowest(entries))) return 'short';
  return undefined;
}

function openIntent(r: BlockReading, token: string, side: OpenIntent['side'], leverageMax: number | undefined): OpenIntent {
  const leverage = r.leverage === undefined ? undefined : Math.min(r.leverage, leverageMax ?? r.leverage);
  return {
    action: 'open',
    token,
    side,
    entry: entryOf(r, side),
    ...(r.stopLoss !== undefined ? { stopLoss: priceText(r.stopLoss) } : {}),
    takeProfits: targetsOf(r.takeProfits),
    ...(leverage !== undefined ? { leverage } : {}),
  };
}

function followUp(action: Action, named: { token?: string; side?: OpenIntent['side'] }): Intent[] {
  if (action.type === 'close' && action.needsAmount && action.percent === undefined) return [];
  if (action.type === 'close') return [{ action: 'close', ...named, closePercent: action.percent ?? (action.partial ? 50 : 100) }];
  if (action.type === 'cancel') return [{ action: 'cancel', ...named }];
  const { stopLoss, breakeven, stopLossAtTarget, takeProfits } = action;
  if (stopLoss === undefined && breakeven === undefined && stopLossAtTarget === undefined && takeProfits.length === 0) return [];
  return [
    {
      action: 'update',
      ...named,
      ...(stopLoss !== undefined ? { stopLoss: priceText(stopLoss) } : {}),
      ...(breakeven ? { breakeven } : {}),
      ...(stopLossAtTarget !== undefined ? { stopLossAtTarget } : {}),
      ...(takeProfits.length > 0 ? { takeProfits: targetsOf(takeProfits) } : {}),
    },
  ];
}

/**
 * An open needs a side (named, implied by "buy zone", or by where the targets lie), a token, no level reported as reached, and
 * something to trade on: an entry, a stop, a target, "now" — or nothing at all besides the side and
 * the token ("BUY $SOL"), which is a market order. Otherwise its actions are follow-ups.
 */
export function judge(reading: BlockReading, leverageMax: number | undefined): BlockResult {
  const inferred = reading.side === undefined && reading.impliedSide === undefined && !reading.reported ? sideFromLevels(reading) : undefined;
  // "ETH 3500 TP 3300 SL 3600": the price after the token is the entry once the levels say the side
  // (a reading of its own: the caller's is left as it was read)
  const r =
    inferred && reading.entryPrices.length === 0 && !reading.breakout && !reading.market ? { ...reading, entryPrices: [...reading.tokenPrices] } : reading;
  const side = r.side ?? r.impliedSide ?? inferred;
  const levels = r.entryPrices.length > 0 || r.breakout !== undefined || r.stopLoss !== undefined || r.takeProfits.length > 0 || r.badPrices > 0;
  // "Exit ETH short now": with an instruction about a trade, only prices make the message an open
  const marketOnly = (r.market || (r.words === 0 && r.numbers === 0)) && r.actions.length === 0;
  if (side && r.token && !r.reported && (levels || marketOnly)) {
    return { kind: 'open', intent: openIntent(r, r.token, side, leverageMax), badPrices: r.badPrices };
  }
  const named = { ...(r.token ? { token: r.token } : {}), ...(side ? { side } : {}) };
  // "Sold the remaining $WIF bag, we're out": two ways of saying one full close
  const intents = r.actions
    .flatMap((action) => followUp(action, named))
    .filter(
      (intent, i, all) =>
        !(intent.action === 'close' && intent.closePercent === 100 && all.findIndex((x) => x.action === 'close' && x.closePercent === 100) < i),
    );
  if (intents.length > 0) return { kind: 'followUps', intents };
  if (r.reported || (r.reportWords && !levels)) return { kind: 'none', reason: 'RESULT_REPORT' };
  if (levels && !r.token) return { kind: 'none', reason: 'MISSING_TOKEN' };
  if (levels && !side) return { kind: 'none', reason: 'MISSING_SIDE' };
  return { kind: 'none', reason: side && r.token ? 'MISSING_LEVELS' : 'NO_SIGNAL' };
}

/** Most telling first: a trade missing a part says more than a report, a report more than chatter. */
const REASON_ORDER: readonly UnmatchedReason[] = ['MISSING_TOKEN', 'MISSING_SIDE', 'MISSING_LEVELS', 'RESULT_REPORT', 'NO_SIGNAL'];
/** A block with levels but no token or side is a trade the message holds but cannot be read whole. */
const INCOMPLETE = new Set<UnmatchedReason>(['MISSING_TOKEN', 'MISSING_SIDE']);

/** The message's interpretation: all its intents, or none when one of its trades is incomplete or contradicts itself. */
export function interpret(results: readonly BlockResult[], ruleVersion: string): Interpretation {
  const reasons = results.flatMap((r) => (r.kind === 'none' ? [r.reason] : []));
  const intents = results.flatMap((r) => (r.kind === 'open' ? [r.intent] : r.kind === 'followUps' ? r.intents : []));
  if (intents.length === 0 || reasons.some((reason) => INCOMPLETE.has(reason))) {
    return { kind: 'unmatched', ruleVersion, reason: REASON_ORDER.find((reason) => reasons.includes(reason)) ?? 'NO_SIGNAL' };
  }
  const problems: LevelProblem[] = [];
  for (const result of results) {
    if (result.kind !== 'open') continue;
    const index = intents.indexOf(result.intent);
    if (result.badPrices > 0)
      problems.push({ code: 'PRICE_OUT_OF_RANGE', intent: index, message: 'a price rounds to 0 (below 10^-18 USD) or is above 1,000,000,000 USD' });
    problems.push(...levelProblems(result.intent, index));
  }
  return problems.length > 0 ? { kind: 'skipped', ruleVersion, skipReason: 'INVALID_LEVELS', problems, intents } : { kind: 'signal', ruleVersion, intents };
}
