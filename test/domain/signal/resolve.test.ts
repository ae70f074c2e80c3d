// A follow-up finds its trade by the signal it names, then by token and side; when still more than
// one trade fits it is AMBIGUOUS_TARGET, never applied to a guess.
import t from 'tap';
import { resolveTarget } from '../../../domain/signal/index.ts';

const trades = [
  { tradeId: 't1', signalId: 's1', token: 'BTC', side: 'long' as const },
  { tradeId: 't2', signalId: 's1', token: 'ETH', side: 'short' as const },
  { tradeId: 't3', signalId: 's2', token: 'BTC', side: 'buy' as const },
  { tradeId: 't4', signalId: 's3', token: 'SOL', side: 'sell' as const },
];
const found = (id: string) => ({ kind: 'found', trade: trades.find((t) => t.tradeId === id) });

t.test('the signal named first, then token and side', async (t) => {
  t.strictSame(resolveTarget({ action: 'close', closePercent: 100 }, trades, 's3'), found('t4'));
  t.strictSame(resolveTarget({ action: 'cancel', token: 'ETH' }, trades, 's1'), found('t2'), 'a two-trade signal narrowed by token');
  t.strictSame(resolveTarget({ action: 'update', token: '$SOL', breakeven: true }, trades), found('t4'), 'the token as the message wrote it');
  t.strictSame(resolveTarget({ action: 'close', token: 'BTC', side: 'buy', closePercent: 50 }, trades, 's1'), found('t1'), 'buy finds a long');
});

t.test('more than one candidate is AMBIGUOUS_TARGET', async (t) => {
  t.strictSame(resolveTarget({ action: 'close', token: 'BTC', closePercent: 100 }, trades), {
    kind: 'ambiguous',
    skipReason: 'AMBIGUOUS_TARGET',
    candidates: 2,
  });
  t.strictSame(resolveTarget({ action: 'close', side: 'long', closePercent: 100 }, trades), {
    kind: 'ambiguous',
    skipReason: 'AMBIGUOUS_TARGET',
    candidates: 2,
  });
  t.strictSame(resolveTarget({ action: 'cancel' }, trades, 's1'), { kind: 'ambiguous', skipReason: 'AMBIGUOUS_TARGET', candidates: 2 });
});

t.test('a follow-up naming nothing finds the only open trade', async (t) => {
  t.strictSame(resolveTarget({ action: 'update', breakeven: true }, [trades[3]!]), found('t4'));
  t.strictSame(resolveTarget({ action: 'update', breakeven: true }, trades), { kind: 'ambiguous', skipReason: 'AMBIGUOUS_TARGET', candidates: 4 });
});

t.test('no candidate is not found, even when another trade would fit the token', async (t) => {
  t.strictSame(resolveTarget({ action: 'close', token: 'DOGE', closePercent: 100 }, trades), { kind: 'notFound' });
  t.strictSame(resolveTarget({ action: 'close', token: 'BTC', closePercent: 100 }, trades, 's9'), { kind: 'notFound' });
  t.strictSame(resolveTarget({ action: 'close', token: 'BTC', side: 'short', closePercent: 100 }, trades), { kind: 'notFound' });
  t.strictSame(resolveTarget({ action: 'cancel' }, []), { kind: 'notFound' });
});
