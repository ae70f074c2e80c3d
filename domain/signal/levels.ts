// Levels that contradict the side: a long whose stop is not below its entry, a short whose targets
// are not below it. Both paths check the same way: a structured signal is refused, a text
// signal skipped (`INVALID_LEVELS`); neither is executed on a guess.
import { directionOf, type LevelProblem, type OpenIntent } from './intent.ts';
import { priceText, type Price } from '../shared/price.ts';
import { intentPrice } from './price.ts';

/** The lowest and highest price the trade may enter at, when the signal says. */
function entryRange(intent: OpenIntent): [Price, Price] | undefined {
  const { entry } = intent;
  if (entry.type === 'zone') return [intentPrice(entry.low), intentPrice(entry.high)];
  if (entry.type === 'breakout') return [intentPrice(entry.price), intentPrice(entry.price)];
  return entry.price === undefined ? undefined : [intentPrice(entry.price), intentPrice(entry.price)];
}

/**
 * Every contradiction of an open's levels. A long's stop must be below the lowest entry and its
 * targets above the highest (a zone is entered anywhere inside it); a short mirrors that. Without an
 * entry price (market) the targets must still be on the far side of the stop.
 */
export function levelProblems(intent: OpenIntent, index: number): LevelProblem[] {
  const problems: LevelProblem[] = [];
  const add = (code: LevelProblem['code'], message: string) => problems.push({ code, intent: index, message });
  const long = directionOf(intent.side) === 'long';
  const range = entryRange(intent);
  const stopLoss = intent.stopLoss === undefined ? undefined : intentPrice(intent.stopLoss);
  const targets = intent.takeProfits.map((t) => intentPrice(t.price));
  if (range) {
    const [low, high] = range;
    if (stopLoss !== undefined && long && stopLoss >= low)
      add('STOP_LOSS_NOT_BELOW_ENTRY', `a ${intent.side}'s stop loss ${priceText(stopLoss)} must be below the entry ${priceText(low)}`);
    if (stopLoss !== undefined && !long && stopLoss <= high)
      add('STOP_LOSS_NOT_ABOVE_ENTRY', `a ${intent.side}'s stop loss ${priceText(stopLoss)} must be above the entry ${priceText(high)}`);
    for (const price of targets) {
      if (long && price <= high)
        add('TAKE_PROFIT_NOT_ABOVE_ENTRY', `a ${intent.side}'s take profit ${priceText(price)} must be above the entry ${priceText(high)}`);
      if (!long && price >= low)
        add('TAKE_PROFIT_NOT_BELOW_ENTRY', `a ${intent.side}'s take profit ${priceText(price)} must be below the entry ${priceText(low)}`);
    }
    return problems;
  }
  if (stopLoss === undefined) return problems;
  for (const price of targets) {
    if (long && price <= stopLoss)
      add('TAKE_PROFIT_NOT_ABOVE_STOP_LOSS', `a ${intent.side}'s take profit ${priceText(price)} must be above its stop loss ${priceText(stopLoss)}`);
    if (!long && price >= stopLoss)
      add('TAKE_PROFIT_NOT_BELOW_STOP_LOSS', `a ${intent.side}'s take profit ${priceText(price)} must be below its stop loss ${priceText(stopLoss)}`);
  }
  return problems;
}
