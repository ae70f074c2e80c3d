// A statement's pure part (domain/pool/statement.ts): the pool and the wallet at `at`, the lines,
// receipts and fees of [`from`, `at`], the equity line, and the latest position compared as numbers.
import t from 'tap';
import type { PoolEvent } from '../../../domain/pool/events.ts';
import type { PoolHistoryEvent } from '../../../domain/pool/history.ts';
import { latestPosition, poolStatement, walletStatement, type WalletHistoryEvent } from '../../../domain/pool/statement.ts';
import { settings, terms } from './fixtures.ts';

const M = 1_000_000;
const time = (minute: number) => new Date(Date.UTC(2025, 1, 1, 10, minute)).toISOString();
const at = (minute: number) => new Date(time(minute));

const life: Array<[number, PoolEvent]> = [
  [
    0,
    {
      type: 'AgentFollowed',
      data: {
        ...settings,
        agentId: 'a1',
        userId: 'u1',
        walletContext: 'virtual',
        poolId: 'u1.a1.virtual',
        walletMode: 'VIRTUAL',
        terms,
        subscribedAt: time(0),
      },
    },
  ],
  [1, { type: 'AllocationAdded', data: { transferId: 'add-1', amountMicro: 100 * M, confirmed: true, at: time(1) } }],
  [2, { type: 'TradeOpened', data: { tradeId: 't-1', marginMicro: 40 * M, at: time(2) } }],
  [3, { type: 'TradeClosed', data: { tradeId: 't-1', realizedPnlMicro: 20 * M, at: time(3) } }],
  [
    4,
    {
      type: 'FeesSettled',
      data: {
        settlementId: 'u1.a1.virtual#fees-1',
        feeMicro: 1 * M,
        creatorMicro: 800_000,
        platformMicro: 200_000,
        realizedMicro: 20 * M,
        unrealizedMicro: 0,
        feesChargedBeforeMicro: 0,
        successFeePercent: terms.successFeePercent,
        at: time(4),
      },
    },
  ],
  [6, { type: 'PoolClosed', data: { at: time(6) } }],
];
const history: PoolHistoryEvent[] = life.map(([minute, event], i) => ({
  id: `e${i}`,
  time: time(minute),
  event,
  position: { commit: String(9 + i), prepare: String(i) },
}));

t.test('the pool at `at`, the lines and receipts since `from`, and the fees', async (t) => {
  const s = poolStatement(history, at(5), at(3));
  t.equal(s.events, 5, 'the events up to `at`');
  t.same(s.position, { commit: '13', prepare: '4' });
  t.ok(s.state.followed);
  t.same(
    s.lines.map((l) => [l.index, l.event.type]),
    [
      [3, 'TradeClosed'],
      [4, 'FeesSettled'],
    ],
  );
  t.same([...s.receipts.keys()], [4]);
  t.equal(s.fees.charged, 1 * M);
  t.same(
    s.equity.map((p) => [p.time, p.equity]),
    [
      [time(3), 100 * M],
      [time(3), 120 * M],
      [time(4), 119 * M],
      [time(5), 119 * M],
    ],
    'at `from`, after each line, at `at`',
  );
  const before = poolStatement(history, at(5), new Date(Date.parse(time(4)) + 30_000));
  t.same(before.lines, [], 'nothing since `from`');
  t.same(before.receipts.size, 0, 'the settlement is before the period');
  t.equal(before.fees.charged, 0);
  t.same(
    before.equity.map((p) => p.equity),
    [119 * M, 119 * M],
  );
});

t.test('before the first event, and after the stop', async (t) => {
  const none = poolStatement(history, new Date(Date.UTC(2025, 0, 1)), null);
  t.equal(none.events, 0);
  t.equal(none.position, null);
  t.notOk(none.state.followed);
  t.same(none.equity, []);
  const stopped = poolStatement(history, at(7), null);
  t.notOk(stopped.state.followed);
  t.equal(stopped.lines.length, 6);
  t.same(stopped.fees, { charged: 1 * M, pending: 0 });
  t.equal(stopped.equity.at(-1)!.time, time(4), 'no equity once stopped');
});

t.test('the wallet at `at`: the virtual start until opened, and nothing later than `at`', async (t) => {
  const events: WalletHistoryEvent[] = [
    { time: time(0), event: { type: 'WalletOpened', data: { virtualStartMicro: 10_000 * M, openedAt: time(0) } }, position: { commit: '5', prepare: '1' } },
    {
      time: time(2),
      event: { type: 'WalletDeposited', data: { depositId: 'd-1', walletContext: 'real', amountMicro: 50 * M, at: time(2) } },
      position: { commit: '10', prepare: '2' },
    },
  ];
  t.same(walletStatement(events, new Date(Date.UTC(2024, 0, 1)), 7 * M).balances, { virtual: 7 * M, real: 0 }, 'never opened then');
  const then = walletStatement(events, at(1), 7 * M);
  t.same(then.balances, { virtual: 10_000 * M, real: 0 });
  t.same(then.position, { commit: '5', prepare: '1' });
  t.same(walletStatement(events, at(3), 7 * M).balances, { virtual: 10_000 * M, real: 50 * M });
});

t.test('the latest position compares numbers, not text', async (t) => {
  t.same(latestPosition([{ commit: '9', prepare: '1' }, null, { commit: '10', prepare: '0' }, { commit: '10', prepare: '2' }]), { commit: '10', prepare: '2' });
  t.equal(latestPosition([null, null]), null);
});
