// The manual wallet's maths across the whole price range (10^-18 USD to 1e9 USD per token,
// attodollars in a bigint): the tokens a USD amount buys and a sale's proceeds never give the trader
// a micro-USD (nor a unit) more than the exact figure, levels from a percent round against the
// trader's protection being late (a stop down, a target up), and through the wallet decider money
// is conserved: cash + lots at cost = start + Σ realized PnL, a round trip at one price never gains.
import fc from 'fast-check';
import t from 'tap';
import { DomainError } from '../../../domain/shared/errors.ts';
import { MAX_PRICE, type Price } from '../../../domain/shared/price.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import type { WalletEvent } from '../../../domain/wallet/events.ts';
import { averagePrice, levelPrices, proceedsFor, unitsFor } from '../../../domain/wallet/lots.ts';
import type { WalletState } from '../../../domain/wallet/state.ts';
import { at } from '../../support/given-when-then.ts';

/** Any price a venue may quote: 10^-18 USD up to 1e9 USD, spread over every order of magnitude. */
const priceArb: fc.Arbitrary<Price> = fc.tuple(fc.integer({ min: 0, max: 27 }), fc.bigInt({ min: 1n, max: 999_999_999n })).map(([exp, digits]) => {
  const p = digits * 10n ** BigInt(exp);
  return p > MAX_PRICE ? MAX_PRICE : p;
});
const usdArb = fc.integer({ min: 1, max: 1_000_000_000_000 }); // up to 1e6 USD in micro-USD
const unitsArb = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
/** micro-USD × 10^18 = units × attodollars: token units carry 6 decimals, a micro-USD is 10^12 attodollars */
const SCALE = 10n ** 18n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The value, or null when it is beyond a safe integer (refused: the swap fails AMOUNT_TOO_LARGE). */
function orTooLarge<T>(work: () => T): T | null {
  try {
    return work();
  } catch (err) {
    if (err instanceof DomainError && err.reason === 'VALIDATION_FAILED') return null;
    throw err;
  }
}

t.test('the tokens a USD amount buys never cost more than it, and one more unit would', async (t) => {
  fc.assert(
    fc.property(usdArb, priceArb, (usd, price) => {
      const units = orTooLarge(() => unitsFor(usd, price));
      const exact = BigInt(usd) * SCALE;
      if (units === null) return exact / price > MAX_SAFE;
      return BigInt(units) * price <= exact && (BigInt(units) + 1n) * price > exact;
    }),
    { numRuns: 3_000 },
  );
  t.pass('rounded down, against the buyer');
});

t.test("a sale's proceeds are never more than the tokens' exact value, and less by under a micro-USD", async (t) => {
  fc.assert(
    fc.property(unitsArb, priceArb, (units, price) => {
      const proceeds = orTooLarge(() => proceedsFor(units, price));
      const exact = BigInt(units) * price;
      if (proceeds === null) return exact / SCALE > MAX_SAFE;
      return BigInt(proceeds) * SCALE <= exact && (BigInt(proceeds) + 1n) * SCALE > exact;
    }),
    { numRuns: 3_000 },
  );
  t.pass('rounded down, against the seller');
});

t.test('the average price never exceeds the cost per token; a stop from a percent is at or below the exact level, a target at or above', async (t) => {
  fc.assert(
    fc.property(usdArb, unitsArb, fc.integer({ min: 1, max: 9_999 }), fc.integer({ min: 1, max: 1_000_000 }), (cost, units, stopBps, targetBps) => {
      const average = averagePrice(units, cost);
      const avgOk = average * BigInt(units) <= BigInt(cost) * SCALE && (average + 1n) * BigInt(units) > BigInt(cost) * SCALE;
      const levels = levelPrices({ stopLoss: { percentBps: stopBps }, takeProfit: { percentBps: targetBps } }, average, { swapped: true });
      const stopOk =
        levels.stopLoss === undefined
          ? (average * BigInt(10_000 - stopBps)) / 10_000n === 0n
          : levels.stopLoss * 10_000n <= average * BigInt(10_000 - stopBps) && (levels.stopLoss + 1n) * 10_000n > average * BigInt(10_000 - stopBps);
      const targetOk =
        levels.takeProfit === undefined
          ? average * BigInt(10_000 + targetBps) > MAX_PRICE * 10_000n
          : levels.takeProfit * 10_000n >= average * BigInt(10_000 + targetBps) && (levels.takeProfit - 1n) * 10_000n < average * BigInt(10_000 + targetBps);
      return avgOk && stopOk && targetOk;
    }),
    { numRuns: 3_000 },
  );
  t.pass('levels exact to 10^-18, rounded as the decider promises');
});

// ---- through the decider: buys and sells at any price conserve money ----

const START = 1_000_000_000_000; // 1e6 USD
const metadata = at('2025-03-04T05:06:07.000Z');

function step(state: WalletState, events: WalletEvent[], command: WalletCommand): WalletState {
  const decided = walletDecider.decide(command, state);
  events.push(...decided);
  return decided.reduce(walletDecider.evolve, state);
}

/** A buy of `usd` at `price` (as the simulated venue swaps it), then sells of parts at other prices. */
function trade(
  state: WalletState,
  events: WalletEvent[],
  id: string,
  usd: number,
  price: Price,
  sells: ReadonlyArray<{ permille: number; price: Price }>,
): WalletState {
  const units = orTooLarge(() => unitsFor(usd, price));
  if (units === null || units === 0) return state; // the venue fails the swap: AMOUNT_TOO_LARGE / AMOUNT_TOO_SMALL
  const buy: TransferPlan = {
    transferId: id,
    amountMicro: usd,
    from: { kind: 'wallet', userId: 'u', walletContext: 'virtual' },
    to: { kind: 'lots', userId: 'u', walletContext: 'virtual', mint: 'PEPE' },
  };
  let s = step(state, events, { type: 'DebitWallet', data: { transfer: buy, virtualStartMicro: START }, metadata });
  s = step(s, events, { type: 'OpenLot', data: { transferId: id, swap: { txId: `tx-${id}`, price, units, usdMicro: usd } }, metadata });
  let held = units;
  sells.forEach((sell, i) => {
    const part = i === sells.length - 1 ? held : Math.floor((held * sell.permille) / 1_000);
    if (part === 0) return;
    const proceeds = orTooLarge(() => proceedsFor(part, sell.price));
    // Beyond 1e6 USD a sale is left out: balances are safe integers of micro-USD, and a few such
    // gains (a memecoin's units sold at 1e9 USD) would add up beyond 2^53.
    if (proceeds === null || proceeds > 1_000_000_000_000) return;
    const sid = `${id}.s${i}`;
    const plan: TransferPlan = {
      transferId: sid,
      amountMicro: 0,
      from: { kind: 'lots', userId: 'u', walletContext: 'virtual', mint: 'PEPE', units: part },
      to: { kind: 'wallet', userId: 'u', walletContext: 'virtual' },
    };
    s = step(s, events, { type: 'RequestSell', data: { transfer: plan }, metadata });
    s = step(s, events, {
      type: 'SettleSell',
      data: { transferId: sid, swap: { txId: `tx-${sid}`, price: sell.price, units: part, usdMicro: proceeds } },
      metadata,
    });
    held -= part;
  });
  return s;
}

t.test('buys and sells at prices from 10^-18 to 1e9 USD: cash + lots at cost = start + realized PnL; a round trip at one price never gains', async (t) => {
  const sellArb = fc.record({ permille: fc.integer({ min: 1, max: 1_000 }), price: priceArb });
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          usd: fc.integer({ min: 1, max: 10_000_000_000 }),
          price: priceArb,
          sells: fc.array(sellArb, { minLength: 1, maxLength: 4 }),
          sameBack: fc.boolean(),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      (trades) => {
        const events: WalletEvent[] = [{ type: 'WalletOpened', data: { virtualStartMicro: START, openedAt: metadata.now.toISOString() } }];
        let state = events.reduce(walletDecider.evolve, walletDecider.initialState());
        trades.forEach((tr, i) => {
          const sells = tr.sameBack ? tr.sells.map((s) => ({ ...s, price: tr.price })) : tr.sells;
          const before = state.balances.virtual;
          const realizedBefore = events.filter((e) => e.type === 'LotsSold').length;
          state = trade(state, events, `b${i}`, tr.usd, tr.price, sells);
          if (tr.sameBack && state.lots.length === 0 && events.filter((e) => e.type === 'LotsSold').length > realizedBefore) {
            if (state.balances.virtual > before) throw new Error(`a round trip at ${tr.price} gained ${state.balances.virtual - before} micro-USD`);
          }
        });
        const realized = events.reduce((sum, e) => sum + (e.type === 'LotsSold' ? e.data.realizedPnlMicro : 0), 0);
        const atCost = state.lots.reduce((sum, l) => sum + l.costMicro, 0);
        return state.balances.virtual + atCost === START + realized && state.lots.every((l) => l.units > 0 && l.costMicro >= 0);
      },
    ),
    { numRuns: 500 },
  );
  t.pass('money conserved in micro-USD at any price');
});
