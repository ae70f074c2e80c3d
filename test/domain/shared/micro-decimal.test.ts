// microToDecimal: exact decimal text of micro-USD, the same from a number (its fast path) and from a
// bigint (the text path), for every safe integer; and the percent fractions it sits beside, cached.
import fc from 'fast-check';
import t from 'tap';
import { microToDecimal, microToUsd, percentFraction } from '../../../domain/shared/money.ts';

t.test('microToDecimal writes six places, exactly, by either path', async (t) => {
  t.equal(microToDecimal(12_345_678), '12.345678');
  t.equal(microToDecimal(0), '0.000000');
  t.equal(microToDecimal(-1), '-0.000001');
  t.equal(microToDecimal(100_000), '0.100000');
  t.equal(microToDecimal(-50_500_000), '-50.500000');
  t.equal(microToDecimal(Number.MAX_SAFE_INTEGER), '9007199254.740991');
  t.equal(microToDecimal(2n ** 70n), '1180591620717411.303424');
  fc.assert(
    fc.property(fc.maxSafeInteger(), (micro) => {
      const text = microToDecimal(micro);
      return text === microToDecimal(BigInt(micro)) && /^-?\d+\.\d{6}$/.test(text) && Number(text) === microToUsd(micro);
    }),
    { numRuns: 20_000 },
  );
});

t.test('percentFraction gives the same fraction from its cache', async (t) => {
  t.same(percentFraction(12.5), [12_500_000n, 100_000_000n]);
  t.equal(percentFraction(12.5), percentFraction(12.5));
  t.same(percentFraction(0.000001), [1n, 100_000_000n]);
});
