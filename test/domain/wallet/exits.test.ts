// The price watcher's exit tries (domain/wallet/exits.ts): the first, a running one found again, and
// a failed one followed by another only after a wait that doubles per failure, at most an hour.
import t from 'tap';
import { PersistentMap } from '../../../domain/shared/persistent-map.ts';
import { crossedLevel, EXIT_RETRY, exitRetryWaitMs, exitTransferId, nextExit } from '../../../domain/wallet/exits.ts';
import type { ManualTrade } from '../../../domain/wallet/state.ts';

const LOT = 'manual-lot-1';
const T0 = Date.parse('2026-11-27T10:00:00Z');
const at = (ms: number) => new Date(T0 + ms);
const sell = (status: ManualTrade['status'], endedAtMs?: number): ManualTrade => ({
  side: 'sell',
  walletContext: 'virtual',
  mint: 'SOL',
  status,
  requested: 1_000_000,
  ...(endedAtMs === undefined ? {} : { endedAt: at(endedAtMs).toISOString() }),
});
const given = (...tries: ManualTrade[]) => tries.reduce((m, tried, i) => m.set(exitTransferId(LOT, i + 1), tried), PersistentMap.empty<ManualTrade>());

t.test('no try yet: the first, at once', async (t) => {
  t.same(nextExit(given(), LOT, at(0)), { attempt: 1 });
  t.same(nextExit(given().set(exitTransferId('another-lot', 1), sell('failed', 0)), LOT, at(0)), { attempt: 1 }, "another lot's failures do not count");
});

t.test('a try still running is found again by its id (the sell path answers the same sell)', async (t) => {
  t.same(nextExit(given(sell('requested')), LOT, at(0)), { attempt: 1 });
  t.same(nextExit(given(sell('failed', 0), sell('requested')), LOT, at(0)), { attempt: 2 });
});

t.test('after one failure: 30 s, to the millisecond', async (t) => {
  const tried = given(sell('failed', 0));
  t.same(nextExit(tried, LOT, at(EXIT_RETRY.firstMs - 1)), { retryAt: at(EXIT_RETRY.firstMs) });
  t.same(nextExit(tried, LOT, at(EXIT_RETRY.firstMs)), { attempt: 2 });
});

t.test('the wait doubles with each failure in a row, from the last one', async (t) => {
  const tried = given(sell('failed', 0), sell('failed', 40_000), sell('failed', 200_000));
  t.same(nextExit(tried, LOT, at(200_000 + 120_000 - 1)), { retryAt: at(320_000) }, 'three failures: 2 minutes after the third');
  t.same(nextExit(tried, LOT, at(320_000)), { attempt: 4 });
});

t.test('the wait is at most an hour, however many failures', async (t) => {
  t.same([1, 2, 3, 4].map(exitRetryWaitMs), [30_000, 60_000, 120_000, 240_000]);
  t.equal(exitRetryWaitMs(8), 3_600_000, 'capped from the eighth (30 s × 128 would be 64 minutes)');
  t.equal(exitRetryWaitMs(5_000), EXIT_RETRY.maxMs, 'no overflow');
  const many = given(...Array.from({ length: 40 }, (_, i) => sell('failed', i * 1_000)));
  t.same(nextExit(many, LOT, at(39_000 + 3_600_000)), { attempt: 41 });
});

t.test("a lot's level is crossed at or beyond it: the stop-loss at or below, the take-profit at or above, the stop first", async (t) => {
  const lot = { stopLoss: 90n, takeProfit: 120n };
  t.equal(crossedLevel(lot, 100n), null, 'between the levels');
  t.equal(crossedLevel(lot, 90n), 'stop-loss', 'at the stop');
  t.equal(crossedLevel(lot, 80n), 'stop-loss');
  t.equal(crossedLevel(lot, 120n), 'take-profit', 'at the target');
  t.equal(crossedLevel({ stopLoss: 130n, takeProfit: 120n }, 125n), 'stop-loss', 'beyond both: the stop');
  t.equal(crossedLevel({ stopLoss: null, takeProfit: null }, 1n), null, 'no levels (the read model)');
  t.equal(crossedLevel({}, 1n), null, 'no levels (the wallet state)');
});
