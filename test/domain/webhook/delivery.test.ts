import t from 'tap';
import { DELIVERY_WINDOW_MS, deliveryIdOf, nextAttemptAt, retryDelayMs } from '../../../domain/webhook/delivery.ts';

const schedule = { baseMs: 10_000, maxMs: 3_600_000 };

t.test('the wait doubles per failed attempt, jittered over its upper half, capped', async (t) => {
  t.same(
    [1, 2, 3, 4].map((n) => retryDelayMs(n, schedule, 0)),
    [5_000, 10_000, 20_000, 40_000],
    'the least: half the ceiling',
  );
  t.same(
    [1, 2, 3, 4].map((n) => retryDelayMs(n, schedule, 0.999_999)),
    [10_000, 20_000, 40_000, 80_000],
    'the most: the ceiling',
  );
  t.equal(retryDelayMs(30, schedule, 0), 1_800_000, 'capped: half the cap at the least');
  t.ok(retryDelayMs(30, schedule, 0.999_999) <= 3_600_000, 'never over the cap');
  t.equal(retryDelayMs(1_000, schedule, 0.5), 2_700_000, 'a huge attempt count stays finite');
});

t.test('a delivery is tried for 3 days after its event, then given up', async (t) => {
  const occurredAt = new Date('2026-01-01T00:00:00Z');
  const late = new Date(occurredAt.getTime() + DELIVERY_WINDOW_MS - 60_000);
  t.ok(nextAttemptAt({ occurredAt, now: new Date(occurredAt.getTime() + 1_000), attempts: 1, schedule, random: 0 }));
  t.equal(nextAttemptAt({ occurredAt, now: late, attempts: 20, schedule, random: 0 }), null, 'the next try would fall past the window');
});

t.test('the delivery id is stable per event', async (t) => {
  t.equal(deliveryIdOf('0b9e1a52-6a0c-4a3c-9a51-8b1d7e2f4c10'), 'evt_0b9e1a526a0c4a3c9a518b1d7e2f4c10');
});
