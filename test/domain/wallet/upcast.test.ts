// Wallet events stored before prices were finer than a micro-USD: read as they meant, never
// rewritten. A swap's `priceMicro`, a lot's `stopLossMicro` / `takeProfitMicro` and a plan's level
// `{ priceMicro }` were integer micro-USD; parsed (the projectors, the recovery) or folded (the
// decider) today they are the same prices as decimal text / bigints.
import t from 'tap';
import { transferPlanSchema } from '../../../domain/transfer/plan.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { walletEventSchema, type WalletEvent } from '../../../domain/wallet/events.ts';
import { upcastWalletEvent } from '../../../domain/wallet/upcast.ts';

const at = '2025-03-01T12:00:00.000Z';
const USD = 1_000_000;
const buyPlan = {
  transferId: 'b1',
  amountMicro: 300 * USD,
  from: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
  to: { kind: 'lots', userId: 'u1', walletContext: 'virtual', mint: 'SOL', levels: { stopLoss: { priceMicro: 120 * USD }, takeProfit: { percentBps: 2_000 } } },
};
const sellPlan = {
  transferId: 's1',
  amountMicro: 0,
  from: { kind: 'lots', userId: 'u1', walletContext: 'virtual', mint: 'SOL', units: 1_000_000, levels: { takeProfit: { priceMicro: 250 * USD } } },
  to: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
};
const legacy = [
  { type: 'WalletOpened', data: { virtualStartMicro: 1_000 * USD, openedAt: at } },
  { type: 'WalletDebited', data: { transfer: buyPlan } },
  {
    type: 'LotOpened',
    data: {
      transferId: 'b1',
      walletContext: 'virtual',
      mint: 'SOL',
      txId: 'tx-b1',
      priceMicro: 150 * USD,
      units: 2_000_000,
      usdMicro: 300 * USD,
      costMicro: 300 * USD,
      openedAt: at,
      stopLossMicro: 120 * USD,
      takeProfitMicro: 180 * USD,
    },
  },
  { type: 'SellRequested', data: { transfer: sellPlan, at } },
  {
    type: 'LotsSold',
    data: {
      transferId: 's1',
      walletContext: 'virtual',
      mint: 'SOL',
      txId: 'tx-s1',
      priceMicro: 7,
      units: 1_000_000,
      usdMicro: 7,
      reductions: [{ lotId: 'b1', units: 1_000_000, costMicro: 150 * USD }],
      realizedPnlMicro: 7 - 150 * USD,
      at,
      takeProfitMicro: 250 * USD,
    },
  },
] as unknown as WalletEvent[];

t.test('old wallet events parse as the same prices: 7 micro-USD is 0.000007 USD, a level { priceMicro } is { price }', async (t) => {
  const parsed = legacy.map((e) => walletEventSchema.parse(JSON.parse(JSON.stringify(e))));
  t.match(parsed[1], { data: { transfer: { to: { levels: { stopLoss: { price: '120' }, takeProfit: { percentBps: 2_000 } } } } } });
  t.match(parsed[2], { data: { price: '150', stopLoss: '120', takeProfit: '180' } });
  t.notOk('priceMicro' in parsed[2]!.data || 'stopLossMicro' in parsed[2]!.data, 'the old names are gone');
  t.match(parsed[3], { data: { transfer: { from: { levels: { takeProfit: { price: '250' } } } } } });
  t.match(parsed[4], { data: { price: '0.000007', takeProfit: '250' } });
  t.equal(upcastWalletEvent(parsed[2]!), parsed[2], 'a current event comes back as it is');
  t.equal((legacy[2]!.data as unknown as { priceMicro: number }).priceMicro, 150 * USD, 'the stored event is not rewritten');
  t.match(
    transferPlanSchema.parse(JSON.parse(JSON.stringify(sellPlan))),
    { from: { levels: { takeProfit: { price: '250' } } } },
    'a plan alone (the transfer stream) reads its levels upcast',
  );
});

t.test('old wallet events fold as the parsed ones: lots, levels and swaps as bigints', async (t) => {
  const fold = (events: readonly WalletEvent[]) => events.reduce(walletDecider.evolve, walletDecider.initialState());
  const old = fold(legacy);
  const current = fold(legacy.map((e) => walletEventSchema.parse(JSON.parse(JSON.stringify(e)))));
  t.same(old, current);
  t.same(old.lots, [
    {
      lotId: 'b1',
      walletContext: 'virtual',
      mint: 'SOL',
      units: 1_000_000,
      costMicro: 150 * USD,
      openedAt: at,
      stopLoss: 120n * 10n ** 18n,
      takeProfit: 250n * 10n ** 18n,
    },
  ]);
  t.match(old.manual.get('b1'), { status: 'done', swap: { price: 150n * 10n ** 18n }, levels: { stopLoss: { price: '120' } } });
  t.match(old.manual.get('s1'), { status: 'done', swap: { price: 7_000_000_000_000n, usdMicro: 7 }, levels: { takeProfit: { price: '250' } } });
});

t.test('an old take-profit from a percent above 1e9 USD (up to 2^53 − 1 micro-USD) still reads: it never triggers, it stays as recorded', async (t) => {
  const high = { ...legacy[2]!, data: { ...(legacy[2]!.data as object), takeProfitMicro: Number.MAX_SAFE_INTEGER } } as unknown as WalletEvent;
  t.match(walletEventSchema.parse(high), { data: { takeProfit: '9007199254.740991' } });
  const state = [legacy[0]!, legacy[1]!, high].reduce(walletDecider.evolve, walletDecider.initialState());
  t.equal(state.lots[0]!.takeProfit, 9_007_199_254_740_991n * 10n ** 12n);
});
