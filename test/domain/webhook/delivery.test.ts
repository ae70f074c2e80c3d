import t from 'tap';
import { DELIVERY_WINDOW_MS, deliveryIdOf, nextAttemptAt, retryDelayMs, webhookUrlRefusal } from '../../../domain/webhook/delivery.ts';

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

t.test('a webhookUrl is https; plain http only to loopback, and only where loopback is allowed', async (t) => {
  for (const url of ['https://dev.example.test/hook', 'https://127.0.0.1:8443/hook']) {
    t.equal(webhookUrlRefusal(url, false), undefined, url);
    t.equal(webhookUrlRefusal(url, true), undefined, url);
  }
  for (const url of ['http://127.0.0.1:8080/hook', 'http://127.1.2.3/hook', 'http://[::1]:8080/hook', 'http://localhost:8080/hook']) {
    t.equal(webhookUrlRefusal(url, false), 'webhookUrl must be an https URL', `${url} refused without the setting`);
    t.equal(webhookUrlRefusal(url, true), undefined, `${url} allowed with it`);
  }
  for (const url of ['http://dev.example.test/hook', 'http://10.0.0.1/hook', 'http://127.0.0.1.example.test/hook', 'ftp://127.0.0.1/x', 'ws://localhost/x']) {
    t.equal(webhookUrlRefusal(url, true), 'webhookUrl must be an https URL', `${url} refused even with the setting`);
  }
  t.equal(webhookUrlRefusal('not a url', true), 'webhookUrl must be a valid URL');
});
