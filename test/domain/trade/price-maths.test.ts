// The trade maths across the whole price range (10^-18 USD to 1e9 USD per token, attodollars in a
// bigint): what a notional buys, the fees and the PnL never give the trader a micro-USD more than
// the exact figure, and money is conserved (what is paid in comes back as PnL, fees and rounding).
import fc from 'fast-check';
import t from 'tap';
import { MAX_PRICE, parsePriceText, priceFromNumber, priceText, priceToNumber, type Price } from '../../../domain/shared/price.ts';
import { breakevenPrice, feeOn, grossPnl, sizeFor, trailingStopFor, valueAt } from '../../../domain/trade/maths.ts';

/** Any price a venue may quote: 10^-18 USD up to 1e9 USD, spread over every order of magnitude. */
const priceArb: fc.Arbitrary<Price> = fc.tuple(fc.integer({ min: 0, max: 27 }), fc.bigInt({ min: 1n, max: 999_999_999n })).map(([exp, digits]) => {
  const p = digits * 10n ** BigInt(exp);
  return p > MAX_PRICE ? MAX_PRICE : p;
});
const decimalsArb = fc.constantFrom(0, 6, 8, 9, 18);
const notionalArb = fc.integer({ min: 1, max: 1_000_000_000_000 }); // up to 1e6 USD in micro-USD
const feeArb = fc.integer({ min: 0, max: 1_000 });
const sideArb = fc.constantFrom('long' as const, 'short' as const, 'buy' as const);
/** micro-USD × 10^(decimals + 12): a size times a price in attodollars, exactly. */
const scale = (decimals: number) => 10n ** BigInt(decimals + 12);

t.test('the size a notional buys never costs more than the notional, and one more base unit would', async (t) => {
  fc.assert(
    fc.property(notionalArb, priceArb, decimalsArb, (notional, price, decimals) => {
      const units = sizeFor(notional, price, decimals);
      const cost = units * price; // exact, in micro-USD × scale
      return cost <= BigInt(notional) * scale(decimals) && (units + 1n) * price > BigInt(notional) * scale(decimals);
    }),
    { numRuns: 2_000 },
  );
  t.pass('sizes round down');
});

t.test("fees round up and a sale's value rounds down: each within one micro-USD of the exact figure", async (t) => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), priceArb, decimalsArb, feeArb, (units, price, decimals, feeBps) => {
      const exactFee = units * price * BigInt(feeBps); // micro-USD × scale × 10^4
      const fee = feeOn(units, price, decimals, feeBps);
      const feeOk = fee * scale(decimals) * 10_000n >= exactFee && (fee - 1n) * scale(decimals) * 10_000n < exactFee;
      const value = valueAt(units, price, decimals);
      const valueOk = value * scale(decimals) <= units * price && (value + 1n) * scale(decimals) > units * price;
      return feeOk && valueOk;
    }),
    { numRuns: 2_000 },
  );
  t.pass('against the trader, by less than a micro-USD');
});

t.test('PnL rounds down (a smaller profit, a larger loss) and a round trip at one price is never a gain', async (t) => {
  fc.assert(
    fc.property(sideArb, fc.bigInt({ min: 1n, max: 10n ** 30n }), priceArb, priceArb, decimalsArb, (side, units, from, to, decimals) => {
      const sign = side === 'short' ? -1n : 1n;
      const exact = sign * units * (to - from); // micro-USD × scale
      const pnl = grossPnl(side, units, from, to, decimals);
      const flat = grossPnl(side, units, from, from, decimals);
      return pnl * scale(decimals) <= exact && (pnl + 1n) * scale(decimals) > exact && flat === 0n;
    }),
    { numRuns: 2_000 },
  );
  t.pass('PnL against the trader');
});

t.test(
  "money is conserved: a long bought with a notional and sold at a price returns PnL + the notional it spent, minus rounding in the venue's favour",
  async (t) => {
    fc.assert(
      fc.property(notionalArb, priceArb, priceArb, decimalsArb, (notional, entry, exit, decimals) => {
        const units = sizeFor(notional, entry, decimals);
        if (units === 0n) return true;
        const spent = units * entry; // exact, micro-USD × scale (at most the notional)
        const proceeds = valueAt(units, exit, decimals); // rounded down
        const pnl = grossPnl('long', units, entry, exit, decimals); // rounded down
        // What the trader holds after: proceeds. What the books say: the cost basis plus the PnL.
        // Both round against the trader, each by less than a micro-USD of the exact figure.
        const exactBack = units * exit;
        const basisPlusPnl = spent + pnl * scale(decimals);
        return proceeds * scale(decimals) <= exactBack && basisPlusPnl <= exactBack && exactBack - basisPlusPnl < scale(decimals);
      }),
      { numRuns: 2_000 },
    );
    t.pass('nothing is created');
  },
);

t.test("breakeven covers both fees, and a trailing stop stays on the trader's side of the price, at any price", async (t) => {
  fc.assert(
    fc.property(sideArb, priceArb, fc.integer({ min: 0, max: 999 }), fc.integer({ min: 1, max: 5_000 }), (side, fill, feeBps, callbackBps) => {
      const be = breakevenPrice(side, fill, feeBps);
      const f = BigInt(feeBps);
      // long: be·(1 − f) ≥ fill·(1 + f); short: be·(1 + f) ≤ fill·(1 − f)
      const covers = side === 'short' ? be * (10_000n + f) <= fill * (10_000n - f) : be * (10_000n - f) >= fill * (10_000n + f);
      const stop = trailingStopFor(side, fill, callbackBps);
      const trails = side === 'short' ? stop >= fill : stop <= fill;
      return covers && trails;
    }),
    { numRuns: 2_000 },
  );
  t.pass('breakeven and trailing hold across the range');
});

t.test('prices are exact at both ends: 0.00000001 and 100,000 USD, text and number round-trip', async (t) => {
  t.equal(parsePriceText('0.00000001'), 10_000_000_000n);
  t.equal(parsePriceText('100000'), 100_000n * 10n ** 18n);
  t.equal(priceText(1n), '0.000000000000000001');
  t.equal(parsePriceText('0.0000000000000000001'), null, 'finer than 10^-18 is refused');
  t.equal(parsePriceText('1000000000.000000000000000001'), null, 'above 1e9 USD is refused');
  t.equal(priceFromNumber(0.0000115), 11_500_000_000_000n);
  t.equal(priceFromNumber(1e-8), 10_000_000_000n);
  fc.assert(
    fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999_999n }), fc.integer({ min: 0, max: 27 }), (digits, exp) => {
      const price = digits * 10n ** BigInt(exp);
      if (price > MAX_PRICE) return true;
      // at most 15 significant digits: the JSON number's shortest text is the price's own
      return parsePriceText(priceText(price)) === price && priceFromNumber(priceToNumber(price)) === price;
    }),
    { numRuns: 2_000 },
  );
  t.pass('round-trips');
});

t.test('a trade at 0.00000001 and one at 100,000 USD: fills and PnL in whole micro-USD, against the trader', async (t) => {
  // 100 USD at 10^-8 USD per token, 9 decimals: 10^10 tokens, 10^19 base units; sold at 1.5·10^-8.
  const dust = 10_000_000_000n;
  const units = sizeFor(100_000_000, dust, 9);
  t.equal(units, 10n ** 19n);
  t.equal(feeOn(units, dust, 9, 10), 100_000n, '10 bps of 100 USD is 0.1 USD');
  t.equal(grossPnl('long', units, dust, 15_000_000_000n, 9), 50_000_000n, '+50 USD');
  t.equal(grossPnl('short', units, dust, 15_000_000_000n, 9), -50_000_000n, '−50 USD for a short');
  // 1000 USD at 100,000 USD per token, 9 decimals: 0.01 token = 10^7 base units; sold at 100,000.5.
  const big = 100_000n * 10n ** 18n;
  const units2 = sizeFor(1_000_000_000, big, 9);
  t.equal(units2, 10_000_000n);
  t.equal(grossPnl('long', units2, big, big + 5n * 10n ** 17n, 9), 5_000n, '0.01 token × 0.5 USD = 0.005 USD');
  t.equal(grossPnl('long', units2, big, big + 1n, 9), 0n, 'an attodollar move rounds down to nothing');
  t.equal(grossPnl('long', units2, big, big - 1n, 9), -1n, 'an attodollar loss rounds to a whole micro-USD lost');
});
