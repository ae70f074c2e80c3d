import t from 'tap';
import { hasAtMostDecimals, microToUsd, microToUsdByText, usdAmountSchema, usdToMicro } from '../../../domain/shared/money.ts';

t.test('microToUsd: the division gives the very double the decimal text parses to', async (t) => {
  const edges = [
    0,
    1,
    -1,
    5,
    10,
    999_999,
    1_000_000,
    1_000_001,
    123_456_789,
    100_000_000_000_000,
    2 ** 53 - 1,
    -(2 ** 53 - 1),
    7_000_003,
    1_234_567_890_123_456,
  ];
  let seed = 0x2545f491;
  const random = () => {
    // xorshift32: a fixed, reproducible sequence
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const samples = [...edges];
  for (let i = 0; i < 200_000; i++) {
    const magnitude = 10 ** Math.floor(random() * 16);
    samples.push(Math.floor(random() * magnitude) * (random() < 0.1 ? -1 : 1));
  }
  let differing = 0;
  for (const micro of samples) if (!Object.is(microToUsd(micro) + 0, microToUsdByText(micro) + 0)) differing++;
  t.equal(differing, 0, `${samples.length} amounts, none differs`);
  t.equal(microToUsd(1_234_567), 1.234567);
  t.equal(microToUsd(10n ** 20n), 1e14, 'a bigint beyond the safe range goes through the text');
  t.equal(microToUsd(-1), -0.000001);
});

t.test('a USD amount in a request is a whole number of micro-USD above 0', async (t) => {
  const amount = usdAmountSchema('amountUsd');
  for (const ok of [0.000001, 1, 10.5, 0.1, 1234.567891, 1e9, 1e-6, 99.99]) {
    t.ok(amount.safeParse(ok).success, `${ok} is accepted`);
    t.equal(usdToMicro(ok) / 1e6, ok, `${ok} converts exactly`);
  }
  const refused: Array<[unknown, RegExp]> = [
    [0, /must be positive/],
    [-1, /must be positive/],
    [0.0000001, /more than 6 decimals/],
    [1e-7, /more than 6 decimals/],
    [0.1 + 0.2, /more than 6 decimals/],
    [1e300, /at most 1000000000/],
    ['10', /must be a number/],
    [Number.NaN, /must be a number/],
    [Number.POSITIVE_INFINITY, /./],
  ];
  for (const [value, message] of refused) {
    const parsed = amount.safeParse(value);
    t.notOk(parsed.success, `${String(value)} is refused`);
    t.match(parsed.error?.issues[0]?.message, message);
  }
  t.equal(hasAtMostDecimals(1.5e-5, 6), true);
  t.equal(hasAtMostDecimals(1.5e-6, 6), false);
});
