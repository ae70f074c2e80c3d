// Manual buys and sells in the wallet decider (domain/wallet/decide.ts), Given / When / Then: a buy
// is DebitWallet to a `lots` endpoint (cash leaves, the trade lock taken), then OpenLot or
// RefundWallet; a sell is RequestSell (the lock, nothing moved), then SettleSell (lots reduced
// oldest first, proceeds in) or FailSell (lots as they were). Every refusal at its boundary, the
// lock taken and released by each event, cost shares rounded down (a whole lot takes its whole
// cost) and levels resolved from percents (stop down, target up) at 10^-18 USD, kept or merged on
// the lot left.
import t from 'tap';
import { priceText, storedPrice, type Price } from '../../../domain/shared/price.ts';
import type { LotsEndpoint, TransferPlan } from '../../../domain/transfer/plan.ts';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import type { SwapDone } from '../../../domain/wallet/manual.ts';
import type { WalletContext, WalletEvent } from '../../../domain/wallet/events.ts';
import type { LotLevels } from '../../../domain/wallet/lots.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const when = now.toISOString();
const START = 10_000_000_000; // 10000 USD
const USD = 1_000_000;
/** units of one whole token */
const TOKEN = 1_000_000;

const { given } = scenario(walletDecider);

interface Where {
  mint?: string;
  walletContext?: WalletContext;
  levels?: LotLevels;
}

const buyPlan = (transferId: string, amountMicro: number, { mint = 'SOL', walletContext = 'virtual', levels }: Where = {}): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'wallet', userId: 'u', walletContext },
  to: { kind: 'lots', userId: 'u', walletContext, mint, ...(levels ? { levels } : {}) },
});
const sellPlan = (
  transferId: string,
  units: number,
  { mint = 'SOL', walletContext = 'virtual', levels }: Where = {},
): TransferPlan & { from: LotsEndpoint } => ({
  transferId,
  amountMicro: 0,
  from: { kind: 'lots', userId: 'u', walletContext, mint, units, ...(levels ? { levels } : {}) },
  to: { kind: 'wallet', userId: 'u', walletContext },
});
const poolPlan = (transferId: string, amountMicro: number): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'wallet', userId: 'u', walletContext: 'virtual' },
  to: { kind: 'pool', userId: 'u', agentId: 'a', walletContext: 'virtual' },
});

// ---- commands ----
const debit = (transfer: TransferPlan): WalletCommand => ({ type: 'DebitWallet', data: { transfer, virtualStartMicro: START }, metadata: at(now) });
const openLot = (transferId: string, swap: SwapDone): WalletCommand => ({ type: 'OpenLot', data: { transferId, swap }, metadata: at(now) });
const refund = (transferId: string, reason?: string): WalletCommand => ({
  type: 'RefundWallet',
  data: { transferId, ...(reason ? { reason } : {}) },
  metadata: at(now),
});
const requestSell = (transfer: TransferPlan): WalletCommand => ({ type: 'RequestSell', data: { transfer }, metadata: at(now) });
const settleSell = (transferId: string, swap: SwapDone): WalletCommand => ({ type: 'SettleSell', data: { transferId, swap }, metadata: at(now) });
const failSell = (transferId: string, reason = 'SLIPPAGE'): WalletCommand => ({ type: 'FailSell', data: { transferId, reason }, metadata: at(now) });
const freeze: WalletCommand = { type: 'FreezeWallet', data: { virtualStartMicro: START }, metadata: at(now, 'admin') };

// ---- events ----
const opened: WalletEvent = { type: 'WalletOpened', data: { virtualStartMicro: START, openedAt: when } };
const frozen: WalletEvent = { type: 'WalletFrozen', data: { at: when } };
const debited = (transfer: TransferPlan): WalletEvent => ({
  type: 'WalletDebited',
  data: { transfer: transfer as TransferPlan & { from: { kind: 'wallet' } } },
});
/** A price in USD (decimal text) as the domain holds it. */
const usd = (text: string): Price => storedPrice(text);
const swap = (
  units: number,
  usdMicro: number,
  price: Price = BigInt(Math.max(1, Math.floor((usdMicro * TOKEN) / units))) * 10n ** 12n,
  txId = 'tx-1',
): SwapDone => ({ txId, price, units, usdMicro });
/** The swap as an event holds it: the price as decimal text. */
const held = (s: SwapDone) => ({ ...s, price: priceText(s.price) });
type LevelTexts = { stopLoss?: string; takeProfit?: string };
const lotOpened = (
  transferId: string,
  s: SwapDone,
  costMicro: number,
  { mint = 'SOL', walletContext = 'virtual' }: Where = {},
  levels: LevelTexts = {},
): WalletEvent => ({
  type: 'LotOpened',
  data: { transferId, walletContext, mint, costMicro, openedAt: when, ...held(s), ...levels },
});
/** A buy that ended with its lot open: `units` for `costMicro` (the swap paid exactly the debit). */
const bought = (transferId: string, units: number, costMicro: number, where: Where = {}, levels: LevelTexts = {}): WalletEvent[] => [
  debited(buyPlan(transferId, costMicro, where)),
  lotOpened(transferId, swap(units, costMicro, undefined, `tx-${transferId}`), costMicro, where, levels),
];
const sellRequested = (transfer: TransferPlan & { from: LotsEndpoint }): WalletEvent => ({ type: 'SellRequested', data: { transfer, at: when } });
const sellFailed = (transferId: string, reason = 'SLIPPAGE'): WalletEvent => ({ type: 'SellFailed', data: { transferId, reason, at: when } });

// ==== DebitWallet to a lots endpoint: a buy ====

t.test('a buy debits the cash and takes the trade lock; nothing is bought yet', async (t) => {
  const buying = given([opened]).when(debit(buyPlan('b1', 300 * USD)));
  buying.then(t, [debited(buyPlan('b1', 300 * USD))]);
  const after = buying.after();
  t.equal(after.balances.virtual, START - 300 * USD);
  t.equal(after.lock, 'b1', 'the lock names the buy');
  t.same(after.lots, []);
  t.same(after.manual.get('b1'), { side: 'buy', walletContext: 'virtual', mint: 'SOL', status: 'requested', requested: 300 * USD });
});

t.test("a wallet's first buy opens it at its virtual start", async (t) => {
  given([])
    .when(debit(buyPlan('b1', 300 * USD)))
    .then(t, [opened, debited(buyPlan('b1', 300 * USD))]);
});

t.test('a buy of exactly the balance is taken; one micro-USD more is INSUFFICIENT_FUNDS and takes no lock', async (t) => {
  given([opened])
    .when(debit(buyPlan('b1', START)))
    .then(t, [debited(buyPlan('b1', START))]);
  const refused = given([opened]).when(debit(buyPlan('b1', START + 1)));
  refused.thenRefused(t, 'INSUFFICIENT_FUNDS');
});

t.test('while a buy or a sell holds the lock, another buy is TRADE_IN_PROGRESS naming the holder', async (t) => {
  const heldByBuy = given([opened, debited(buyPlan('b1', 100 * USD))])
    .when(debit(buyPlan('b2', 100 * USD)))
    .thenRefused(t, 'TRADE_IN_PROGRESS');
  t.same(heldByBuy?.details, { transferId: 'b1' });
  const heldBySell = given([opened, ...bought('b1', 2 * TOKEN, 300 * USD), sellRequested(sellPlan('s1', TOKEN))])
    .when(debit(buyPlan('b2', 100 * USD, { mint: 'BTC', walletContext: 'virtual' })))
    .thenRefused(t, 'TRADE_IN_PROGRESS');
  t.same(heldBySell?.details, { transferId: 's1' }, 'whatever the mint: the lock is the wallet’s');
});

t.test('the lock is for manual trades only: a transfer to a pool is still paid while a buy runs', async (t) => {
  const paying = given([opened, debited(buyPlan('b1', 100 * USD))]).when(debit(poolPlan('p1', 100 * USD)));
  paying.then(t, [debited(poolPlan('p1', 100 * USD))]);
  t.equal(paying.after().lock, 'b1', 'the buy keeps it');
});

t.test('a frozen wallet buys nothing: WALLET_FROZEN, before the lock is looked at', async (t) => {
  given([opened, frozen])
    .when(debit(buyPlan('b1', 100 * USD)))
    .thenRefused(t, 'WALLET_FROZEN');
  given([opened, debited(buyPlan('b1', 100 * USD)), frozen])
    .when(debit(buyPlan('b2', 100 * USD)))
    .thenRefused(t, 'WALLET_FROZEN');
});

t.test('a buy repeated records nothing: running, done, refunded, frozen since, or for another amount', async (t) => {
  const running = [opened, debited(buyPlan('b1', 100 * USD))];
  given(running)
    .when(debit(buyPlan('b1', 100 * USD)))
    .then(t, [], 'while it runs (it holds the lock itself)');
  given([...running, frozen])
    .when(debit(buyPlan('b1', 100 * USD)))
    .then(t, [], 'frozen since');
  given([opened, ...bought('b1', TOKEN, 100 * USD)])
    .when(debit(buyPlan('b1', 100 * USD)))
    .then(t, [], 'its lot open');
  const refunded = [...running, { type: 'WalletRefunded', data: { transferId: 'b1', walletContext: 'virtual', amountMicro: 100 * USD } } as WalletEvent];
  given(refunded)
    .when(debit(buyPlan('b1', 100 * USD)))
    .then(t, [], 'refunded');
  given(running)
    .when(debit(buyPlan('b1', 999 * USD)))
    .then(t, [], 'another amount: the recorded debit is the truth');
});

t.test('a buy repeated for another mint or context is ALREADY_EXISTS', async (t) => {
  const running = [opened, debited(buyPlan('b1', 100 * USD))];
  given(running)
    .when(debit(buyPlan('b1', 100 * USD, { mint: 'BTC' })))
    .thenRefused(t, 'ALREADY_EXISTS', /another destination/);
  given(running)
    .when(debit(buyPlan('b1', 100 * USD, { walletContext: 'real' })))
    .thenRefused(t, 'ALREADY_EXISTS');
});

t.test("a buy under a sell's transfer id is ALREADY_EXISTS: one id, one trade", async (t) => {
  const sold = [opened, ...bought('b1', 2 * TOKEN, 300 * USD), sellRequested(sellPlan('s1', TOKEN))];
  given(sold)
    .when(debit(buyPlan('s1', 100 * USD)))
    .thenRefused(t, 'ALREADY_EXISTS', /sell/);
  given([...sold, sellFailed('s1')])
    .when(debit(buyPlan('s1', 100 * USD)))
    .thenRefused(t, 'ALREADY_EXISTS', /sell/);
});

t.test('levels on a buy need no open lot of the mint in the context: one open is LEVELS_NEED_ONE_LOT', async (t) => {
  const levels: LotLevels = { stopLoss: { percentBps: 1_000 } };
  given([opened])
    .when(debit(buyPlan('b2', 100 * USD, { levels })))
    .then(t, [debited(buyPlan('b2', 100 * USD, { levels }))], 'no lot yet');
  given([opened, ...bought('b1', TOKEN, 100 * USD)])
    .when(debit(buyPlan('b2', 100 * USD, { levels })))
    .thenRefused(t, 'LEVELS_NEED_ONE_LOT', /one is open already/);
  given([opened, ...bought('b1', TOKEN, 100 * USD)])
    .when(debit(buyPlan('b2', 100 * USD)))
    .then(t, [debited(buyPlan('b2', 100 * USD))], 'without levels a second lot opens');
  given([opened, ...bought('b1', TOKEN, 100 * USD, { mint: 'BTC' })])
    .when(debit(buyPlan('b2', 100 * USD, { levels })))
    .then(t, [debited(buyPlan('b2', 100 * USD, { levels }))], 'a lot of another mint does not count');
});

// ==== OpenLot ====

t.test('the swap done, the lot opens at what the debit paid, the lock is released and the buy is done', async (t) => {
  const s = swap(6_666_666, 1_000 * USD, usd('150'));
  const opening = given([opened, debited(buyPlan('b1', 1_000 * USD))]).when(openLot('b1', s));
  opening.then(t, [lotOpened('b1', s, 1_000 * USD)]);
  const after = opening.after();
  t.equal(after.lock, null);
  t.same(after.lots, [{ lotId: 'b1', walletContext: 'virtual', mint: 'SOL', units: 6_666_666, costMicro: 1_000 * USD, openedAt: when }]);
  t.equal(after.balances.virtual, START - 1_000 * USD, 'the cash went at the debit, not again');
  t.match(after.manual.get('b1'), { status: 'done', swap: s, endedAt: when });
});

t.test("a lot's cost is what the debit paid, whatever the swap reports it spent", async (t) => {
  const s = swap(TOKEN, 99 * USD);
  given([opened, debited(buyPlan('b1', 100 * USD))])
    .when(openLot('b1', s))
    .then(t, [lotOpened('b1', s, 100 * USD)]);
});

t.test('levels as percents resolve from the average price paid: the stop rounded down, the target rounded up', async (t) => {
  // 1000 USD at 150 buys 6.666666 tokens: an average of 150.00001500000150000015… per token,
  // 150.0000150000015 at 10^-18 (rounded down).
  const levels: LotLevels = { stopLoss: { percentBps: 1_000 }, takeProfit: { percentBps: 2_500 } };
  const s = swap(6_666_666, 1_000 * USD, usd('150'));
  const opening = given([opened, debited(buyPlan('b1', 1_000 * USD, { levels }))]).when(openLot('b1', s));
  // × 0.9 = 135.00001350000135 exactly; × 1.25 = 187.500018750001875 exactly
  opening.then(t, [lotOpened('b1', s, 1_000 * USD, {}, { stopLoss: '135.00001350000135', takeProfit: '187.500018750001875' })]);
  t.match(opening.after().lots[0], { stopLoss: usd('135.00001350000135'), takeProfit: usd('187.500018750001875') });
});

t.test('levels as prices are taken as they are; a percent and a price mix', async (t) => {
  const s = swap(2 * TOKEN, 300 * USD, usd('150'));
  const levels: LotLevels = { stopLoss: { percentBps: 1_000 }, takeProfit: { price: '200' } };
  given([opened, debited(buyPlan('b1', 300 * USD, { levels }))])
    .when(openLot('b1', s))
    .then(t, [lotOpened('b1', s, 300 * USD, {}, { stopLoss: '135', takeProfit: '200' })]);
});

t.test('the swap is final: levels that cannot stand at the price paid never stop the lot from opening', async (t) => {
  // 151 micro-USD of SOL at 150 buys 1 unit: an average of 151 per token, above the mark the target
  // was checked against. A stop 0.01 % below it (150.9849) is above the 150.015 target: opened as asked.
  const crossing: LotLevels = { stopLoss: { percentBps: 1 }, takeProfit: { price: '150.015' } };
  const s = swap(1, 151, usd('150'));
  given([opened, debited(buyPlan('b1', 151, { levels: crossing }))])
    .when(openLot('b1', s))
    .then(t, [lotOpened('b1', s, 151, {}, { stopLoss: '150.9849', takeProfit: '150.015' })]);
  // 1 micro-USD buys 2·10^14 units (2·10^8 tokens): an average of 5·10^-15 USD. A 99.99 % stop is at
  // 5·10^-19, below 10^-18, i.e. 0: it could never trigger and is left off; the target rounds up.
  const cheap = swap(200_000_000_000_000, 1, usd('0.000000000000005'));
  const opening = given([
    opened,
    debited(buyPlan('b1', 1, { mint: 'SOL', levels: { stopLoss: { percentBps: 9_999 }, takeProfit: { percentBps: 100 } } })),
  ]).when(openLot('b1', cheap));
  opening.then(t, [lotOpened('b1', cheap, 1, {}, { takeProfit: '0.00000000000000505' })]);
  t.equal(opening.after().lock, null, 'the lock released');
});

t.test('a sell recorded with levels that cannot stand on the lot it leaves still settles once its swap is final', async (t) => {
  // Requested before INVALID_LEVELS was checked at the request: its stop (90) above its target (60).
  const contradicting: LotLevels = { stopLoss: { percentBps: 1_000 }, takeProfit: { price: '60' } };
  const history = [opened, ...bought('b1', 2 * TOKEN, 200 * USD), sellRequested(sellPlan('s1', TOKEN, { levels: contradicting }))];
  const settling = given(history).when(settleSell('s1', swap(TOKEN, 50 * USD)));
  t.match(settling.events(), [{ type: 'LotsSold', data: { stopLoss: '90', takeProfit: '60', realizedPnlMicro: -50 * USD } }]);
  t.equal(settling.after().lock, null);
});

t.test('OpenLot repeated opens nothing; for a refunded buy it is ALREADY_EXISTS; for no buy TRANSFER_NOT_FOUND', async (t) => {
  const s = swap(TOKEN, 100 * USD);
  given([opened, ...bought('b1', TOKEN, 100 * USD)])
    .when(openLot('b1', s))
    .then(t, []);
  const refunded: WalletEvent = { type: 'WalletRefunded', data: { transferId: 'b1', walletContext: 'virtual', amountMicro: 100 * USD, reason: 'NO_PRICE' } };
  given([opened, debited(buyPlan('b1', 100 * USD)), refunded])
    .when(openLot('b1', s))
    .thenRefused(t, 'ALREADY_EXISTS', /refunded/);
  given([opened]).when(openLot('b9', s)).thenRefused(t, 'TRANSFER_NOT_FOUND');
  given([opened, debited(poolPlan('p1', 100 * USD))])
    .when(openLot('p1', s))
    .thenRefused(t, 'TRANSFER_NOT_FOUND', /no manual buy/);
  given([opened, ...bought('b1', 2 * TOKEN, 100 * USD), sellRequested(sellPlan('s1', TOKEN))])
    .when(openLot('s1', s))
    .thenRefused(t, 'TRANSFER_NOT_FOUND', /no manual buy/);
});

// ==== RefundWallet of a buy ====

t.test('a buy whose swap failed is refunded: the cash back, the lock released, the buy failed with the reason', async (t) => {
  const refunding = given([opened, debited(buyPlan('b1', 100 * USD))]).when(refund('b1', 'NO_PRICE'));
  refunding.then(t, [{ type: 'WalletRefunded', data: { transferId: 'b1', walletContext: 'virtual', amountMicro: 100 * USD, reason: 'NO_PRICE' } }]);
  const after = refunding.after();
  t.equal(after.balances.virtual, START);
  t.equal(after.lock, null);
  t.same(after.lots, []);
  t.match(after.manual.get('b1'), { status: 'failed', reason: 'NO_PRICE' });
  given([opened, debited(buyPlan('b1', 100 * USD)), ...refunding.events()])
    .when(refund('b1', 'NO_PRICE'))
    .then(t, [], 'once');
  given([opened, debited(buyPlan('b1', 100 * USD)), ...refunding.events()])
    .when(debit(buyPlan('b2', 100 * USD)))
    .then(t, [debited(buyPlan('b2', 100 * USD))], 'the next buy runs');
});

t.test('a buy whose lot opened cannot be refunded: ALREADY_EXISTS', async (t) => {
  given([opened, ...bought('b1', TOKEN, 100 * USD)])
    .when(refund('b1'))
    .thenRefused(t, 'ALREADY_EXISTS', /opened its lot/);
});

t.test('refunding a pool transfer leaves the lock of a running buy alone', async (t) => {
  const refunding = given([opened, debited(poolPlan('p1', 50 * USD)), debited(buyPlan('b1', 100 * USD))]).when(refund('p1'));
  t.equal(refunding.after().lock, 'b1');
});

// ==== RequestSell ====

const twoLots = [opened, ...bought('b1', 2 * TOKEN, 300 * USD), ...bought('b2', TOKEN, 160 * USD)];

t.test('selling exactly the units held is requested: the lock taken, nothing moved yet', async (t) => {
  const plan = sellPlan('s1', 3 * TOKEN);
  const selling = given(twoLots).when(requestSell(plan));
  selling.then(t, [sellRequested(plan)]);
  const after = selling.after();
  t.equal(after.lock, 's1');
  t.same(after.lots, given(twoLots).state.lots, 'the lots wait for the swap');
  t.equal(after.balances.virtual, START - 460 * USD);
  t.same(after.manual.get('s1'), { side: 'sell', walletContext: 'virtual', mint: 'SOL', status: 'requested', requested: 3 * TOKEN });
});

t.test('one unit more than held is SELL_EXCEEDS_MANUAL_POSITION, naming both amounts', async (t) => {
  const refused = given(twoLots)
    .when(requestSell(sellPlan('s1', 3 * TOKEN + 1)))
    .thenRefused(t, 'SELL_EXCEEDS_MANUAL_POSITION', /exceeds/);
  t.same(refused?.details, { requestedAmount: 3.000001, manualPositionAmount: 3 });
});

t.test('only the lots of the mint in the context count', async (t) => {
  const history = [opened, { type: 'WalletDeposited', data: { depositId: 'd1', walletContext: 'real', amountMicro: 500 * USD, at: when } } as WalletEvent];
  const lots = [...history, ...bought('b1', TOKEN, 100 * USD, { mint: 'BTC' }), ...bought('b2', TOKEN, 100 * USD, { walletContext: 'real' })];
  given(lots)
    .when(requestSell(sellPlan('s1', 1)))
    .thenRefused(t, 'SELL_EXCEEDS_MANUAL_POSITION');
  given(lots)
    .when(requestSell(sellPlan('s1', TOKEN, { walletContext: 'real' })))
    .then(t, [sellRequested(sellPlan('s1', TOKEN, { walletContext: 'real' }))]);
  given([])
    .when(requestSell(sellPlan('s1', 1)))
    .thenRefused(t, 'SELL_EXCEEDS_MANUAL_POSITION', undefined);
});

t.test('while a buy or a sell holds the lock, a sell is TRADE_IN_PROGRESS', async (t) => {
  const byBuy = given([...twoLots, debited(buyPlan('b3', 10 * USD))])
    .when(requestSell(sellPlan('s1', TOKEN)))
    .thenRefused(t, 'TRADE_IN_PROGRESS');
  t.same(byBuy?.details, { transferId: 'b3' });
  const bySell = given([...twoLots, sellRequested(sellPlan('s1', TOKEN))])
    .when(requestSell(sellPlan('s2', TOKEN)))
    .thenRefused(t, 'TRADE_IN_PROGRESS');
  t.same(bySell?.details, { transferId: 's1' });
});

t.test('a frozen wallet sells nothing: WALLET_FROZEN first, even for a sell that exceeds', async (t) => {
  given([...twoLots, frozen])
    .when(requestSell(sellPlan('s1', TOKEN)))
    .thenRefused(t, 'WALLET_FROZEN');
  given([...twoLots, frozen])
    .when(requestSell(sellPlan('s1', 99 * TOKEN)))
    .thenRefused(t, 'WALLET_FROZEN');
});

t.test('a sell repeated records nothing, in whatever state it is, frozen since or not', async (t) => {
  const plan = sellPlan('s1', TOKEN);
  const requested = [...twoLots, sellRequested(plan)];
  given(requested).when(requestSell(plan)).then(t, [], 'running (it holds the lock itself)');
  given([...requested, frozen])
    .when(requestSell(plan))
    .then(t, [], 'frozen since');
  given([...requested, sellFailed('s1')])
    .when(requestSell(plan))
    .then(t, [], 'failed');
  const done = given(requested)
    .when(settleSell('s1', swap(TOKEN, 170 * USD)))
    .events();
  given([...requested, ...done])
    .when(requestSell(plan))
    .then(t, [], 'done');
});

t.test('a sell repeated with another plan is ALREADY_EXISTS: units, mint, context, levels; a buy’s id too', async (t) => {
  const requested = [...twoLots, sellRequested(sellPlan('s1', TOKEN))];
  given(requested)
    .when(requestSell(sellPlan('s1', TOKEN, { levels: { stopLoss: { price: '90' } } })))
    .thenRefused(t, 'ALREADY_EXISTS', /another buy or sell/);
  const levels: LotLevels = { stopLoss: { price: '90' }, takeProfit: { percentBps: 2_000 } };
  const leveled = [...twoLots, sellRequested(sellPlan('s1', TOKEN, { levels }))];
  given(leveled)
    .when(requestSell(sellPlan('s1', TOKEN)))
    .thenRefused(t, 'ALREADY_EXISTS', /another buy or sell/);
  given(leveled)
    .when(requestSell(sellPlan('s1', TOKEN, { levels: { takeProfit: { percentBps: 2_000 }, stopLoss: { price: '90' } } })))
    .then(t, [], 'the same levels, in another order: a repeat');
  given(requested)
    .when(requestSell(sellPlan('s1', TOKEN + 1)))
    .thenRefused(t, 'ALREADY_EXISTS');
  given(requested)
    .when(requestSell(sellPlan('s1', TOKEN, { mint: 'BTC' })))
    .thenRefused(t, 'ALREADY_EXISTS');
  given(requested)
    .when(requestSell(sellPlan('s1', TOKEN, { walletContext: 'real' })))
    .thenRefused(t, 'ALREADY_EXISTS');
  given(twoLots)
    .when(requestSell(sellPlan('b1', TOKEN)))
    .thenRefused(t, 'ALREADY_EXISTS', /another buy or sell/);
  given([...twoLots, debited(poolPlan('p1', 10 * USD))])
    .when(requestSell(sellPlan('p1', TOKEN)))
    .thenRefused(t, 'ALREADY_EXISTS');
});

t.test('a sell is of manual lots into the same wallet context: the runner plans it so, another is a bug', async (t) => {
  const plan = sellPlan('s1', TOKEN);
  given(twoLots)
    .when(requestSell({ ...plan, from: { ...plan.from, units: undefined } } as unknown as TransferPlan))
    .thenViolates(t, /not a sell of manual lots/);
  given(twoLots)
    .when(requestSell(buyPlan('s1', 10 * USD)))
    .thenViolates(t, /not a sell of manual lots/);
  given(twoLots)
    .when(requestSell({ ...plan, to: { kind: 'wallet', userId: 'u', walletContext: 'real' } }))
    .thenViolates(t, /same wallet context/);
});

t.test('levels on a sell: one lot left open takes them; two lots, or a sell that closes the one, is LEVELS_NEED_ONE_LOT', async (t) => {
  const levels: LotLevels = { stopLoss: { percentBps: 500 } };
  const oneLot = [opened, ...bought('b1', 2 * TOKEN, 300 * USD)];
  given(oneLot)
    .when(requestSell(sellPlan('s1', 2 * TOKEN - 1, { levels })))
    .then(t, [sellRequested(sellPlan('s1', 2 * TOKEN - 1, { levels }))], 'one unit left');
  given(oneLot)
    .when(requestSell(sellPlan('s1', 2 * TOKEN, { levels })))
    .thenRefused(t, 'LEVELS_NEED_ONE_LOT', /closes it/);
  given(twoLots)
    .when(requestSell(sellPlan('s1', 1, { levels })))
    .thenRefused(t, 'LEVELS_NEED_ONE_LOT', /2 are open/);
  given(twoLots)
    .when(requestSell(sellPlan('s1', TOKEN)))
    .then(t, [sellRequested(sellPlan('s1', TOKEN))], 'without levels two lots are sold');
});

t.test('levels on a sell that cannot stand on the lot it leaves are INVALID_LEVELS before any swap', async (t) => {
  // 2 tokens for 200 USD: the lot left keeps an average of 100; a stop 10 % below it (90) is above a 60 target.
  const oneLot = [opened, ...bought('b1', 2 * TOKEN, 200 * USD)];
  const contradicting: LotLevels = { stopLoss: { percentBps: 1_000 }, takeProfit: { price: '60' } };
  given(oneLot)
    .when(requestSell(sellPlan('s1', TOKEN, { levels: contradicting })))
    .thenRefused(t, 'INVALID_LEVELS', /below the take-profit/);
  // 4·10^14 units for 1 micro-USD, 10^14 sold: the lot left is 3·10^14 units for 1 micro-USD, an
  // average of 3.333·10^-15 USD; a 99.99 % stop is below 10^-18, i.e. 0, which can never trigger.
  const cheap = [opened, ...bought('b1', 400_000_000_000_000, 1)];
  const part = 100_000_000_000_000;
  given(cheap)
    .when(requestSell(sellPlan('s1', part, { levels: { stopLoss: { percentBps: 9_999 } } })))
    .thenRefused(t, 'INVALID_LEVELS', /at or below 0/);
  given(cheap)
    .when(requestSell(sellPlan('s1', part, { levels: { stopLoss: { percentBps: 5_000 } } })))
    .then(t, [sellRequested(sellPlan('s1', part, { levels: { stopLoss: { percentBps: 5_000 } } }))]);
  // A take-profit above 1e9 USD could not be stored: refused before the swap.
  given([opened, ...bought('b1', 2, 200 * USD)])
    .when(requestSell(sellPlan('s1', 1, { levels: { takeProfit: { percentBps: 1_000_000 } } })))
    .thenRefused(t, 'INVALID_LEVELS', /above 1000000000/);
});

// ==== SettleSell ====

t.test('a sell takes the lots oldest first: a whole lot its whole cost, a part its share rounded down', async (t) => {
  // b1: 3 tokens for 100 USD; b2: 3 tokens for 200 USD. Selling 4: all of b1, a third of b2.
  const history = [opened, ...bought('b1', 3 * TOKEN, 100 * USD), ...bought('b2', 3 * TOKEN, 200 * USD + 2), sellRequested(sellPlan('s1', 4 * TOKEN))];
  const s = swap(4 * TOKEN, 320 * USD, usd('80'));
  const settling = given(history).when(settleSell('s1', s));
  // b2's share: (200 USD + 2) × 1/3 = 66.666667333… → 66.666667 USD (66_666_667 micro)
  const reductions = [
    { lotId: 'b1', units: 3 * TOKEN, costMicro: 100 * USD },
    { lotId: 'b2', units: TOKEN, costMicro: 66_666_667 },
  ];
  settling.then(t, [
    {
      type: 'LotsSold',
      data: { transferId: 's1', walletContext: 'virtual', mint: 'SOL', ...held(s), reductions, realizedPnlMicro: 320 * USD - 166_666_667, at: when },
    },
  ]);
  const after = settling.after();
  t.same(
    after.lots.map((l) => [l.lotId, l.units, l.costMicro]),
    [['b2', 2 * TOKEN, 200 * USD + 2 - 66_666_667]],
    'b1 left; b2 keeps the rest of its cost',
  );
  t.equal(after.balances.virtual, START - 300 * USD - 2 + 320 * USD, 'the proceeds in');
  t.equal(after.lock, null);
  t.match(after.manual.get('s1'), { status: 'done', swap: s, realizedPnlMicro: 320 * USD - 166_666_667, endedAt: when });
});

t.test('selling a lot in parts: each part rounded down, the last part takes what is left, the cost adds up', async (t) => {
  let history: WalletEvent[] = [opened, ...bought('b1', 3, 100)]; // 3 units for 100 micro-USD
  const costs: number[] = [];
  for (const [id, units] of [
    ['s1', 1],
    ['s2', 1],
    ['s3', 1],
  ] as const) {
    history = [...history, sellRequested(sellPlan(id, units))];
    const [sold] = given(history)
      .when(settleSell(id, swap(units, 40)))
      .events();
    if (sold?.type !== 'LotsSold') throw new Error('sold');
    costs.push(sold.data.reductions[0]!.costMicro);
    history = [...history, sold];
  }
  t.same(costs, [33, 33, 34], '⌊100/3⌋, ⌊67/2⌋, then the whole 34 left');
  t.same(given(history).state.lots, []);
});

t.test('a loss: proceeds below the cost taken', async (t) => {
  const history = [opened, ...bought('b1', 2 * TOKEN, 300 * USD), sellRequested(sellPlan('s1', TOKEN))];
  const [sold] = given(history)
    .when(settleSell('s1', swap(TOKEN, 0, 1n)))
    .events();
  t.match(
    sold,
    { type: 'LotsSold', data: { usdMicro: 0, realizedPnlMicro: -150 * USD } },
    'a swap that fetched nothing realizes the whole cost taken as a loss',
  );
});

t.test('levels of a sell resolve on the lot left (its average after the sell) and merge with the levels it had', async (t) => {
  // 3 units for 1_000_000: the lot left after one unit is 2 units for 666_667 (average 333333.5 USD per token).
  const kept = { stopLoss: '100000', takeProfit: '900000' };
  const history = [opened, ...bought('b1', 3, 1_000_000, {}, kept)];
  const levels: LotLevels = { stopLoss: { percentBps: 3_333 } };
  const requested = [...history, sellRequested(sellPlan('s1', 1, { levels }))];
  const settling = given(requested).when(settleSell('s1', swap(1, 400_000)));
  // 333333.5 × 0.6667 = 222233.44445 → the stop; the target kept
  const [sold] = settling.events();
  t.match(sold, { type: 'LotsSold', data: { stopLoss: '222233.44445' } });
  t.notOk(sold?.type === 'LotsSold' && 'takeProfit' in sold.data, 'no new target asked');
  t.same(settling.after().lots, [
    {
      lotId: 'b1',
      walletContext: 'virtual',
      mint: 'SOL',
      units: 2,
      costMicro: 666_667,
      openedAt: when,
      stopLoss: usd('222233.44445'),
      takeProfit: usd('900000'),
    },
  ]);

  const target: LotLevels = { takeProfit: { percentBps: 1 } };
  // 333333.5 × 1.0001 = 333366.83335 exactly; a target rounds up only a fraction
  const up = given([...history, sellRequested(sellPlan('s1', 1, { levels: target }))]).when(settleSell('s1', swap(1, 400_000)));
  t.match(up.after().lots[0], { stopLoss: usd('100000'), takeProfit: usd('333366.83335') }, 'the stop kept, the target replaced');
  const without = given([...history, sellRequested(sellPlan('s1', 1))]).when(settleSell('s1', swap(1, 400_000)));
  t.match(without.after().lots[0], { stopLoss: usd('100000'), takeProfit: usd('900000') }, 'a sell without levels keeps the lot’s');
});

t.test('on the lot left too, a stop from a percent rounds down and a target up', async (t) => {
  // 7 units for 1_000_000, 4 sold: their cost ⌊4/7 × 1_000_000⌋ = 571_428; left 3 units for 428_572,
  // an average of 142857.333… USD per token, 142857.333333333333333333 at 10^-18.
  const history = [
    opened,
    ...bought('b1', 7, 1_000_000),
    sellRequested(sellPlan('s1', 4, { levels: { stopLoss: { percentBps: 3 }, takeProfit: { percentBps: 3 } } })),
  ];
  const settling = given(history).when(settleSell('s1', swap(4, 400_000)));
  // stop × 0.9997 = 142814.4761333333333333333001 → …333333 (down); target × 1.0003 = 142900.1905333333333333332999 → …333333 (up)
  const [stop, target] = ['142814.476133333333333333', '142900.190533333333333333'];
  t.match(settling.events()[0], { data: { reductions: [{ lotId: 'b1', units: 4, costMicro: 571_428 }], stopLoss: stop, takeProfit: target } });
  t.match(settling.after().lots, [{ units: 3, costMicro: 428_572, stopLoss: usd(stop), takeProfit: usd(target) }]);
});

t.test('a frozen wallet still takes the proceeds of a sell requested before the freeze', async (t) => {
  const history = [opened, ...bought('b1', 2 * TOKEN, 300 * USD), sellRequested(sellPlan('s1', TOKEN)), frozen];
  const settling = given(history).when(settleSell('s1', swap(TOKEN, 160 * USD)));
  t.equal(settling.events().length, 1);
  t.equal(settling.after().lock, null);
});

t.test('SettleSell: repeated settles nothing; the swap must sell what was asked; only a sell requested and not failed', async (t) => {
  const requested = [...twoLots, sellRequested(sellPlan('s1', TOKEN))];
  const done = given(requested)
    .when(settleSell('s1', swap(TOKEN, 170 * USD)))
    .events();
  given([...requested, ...done])
    .when(settleSell('s1', swap(TOKEN, 170 * USD)))
    .then(t, []);
  given(requested)
    .when(settleSell('s1', swap(TOKEN + 1, 170 * USD)))
    .thenViolates(t, /sold/);
  given([...requested, sellFailed('s1')])
    .when(settleSell('s1', swap(TOKEN, 170 * USD)))
    .thenRefused(t, 'ALREADY_EXISTS', /failed/);
  given(twoLots)
    .when(settleSell('s9', swap(TOKEN, 170 * USD)))
    .thenRefused(t, 'TRANSFER_NOT_FOUND');
  given(twoLots)
    .when(settleSell('b1', swap(TOKEN, 170 * USD)))
    .thenRefused(t, 'TRANSFER_NOT_FOUND', /no manual sell/);
});

// ==== FailSell ====

t.test('a failed swap leaves the lots as they were and releases the lock', async (t) => {
  const requested = [...twoLots, sellRequested(sellPlan('s1', 3 * TOKEN))];
  const failing = given(requested).when(failSell('s1', 'NO_PRICE'));
  failing.then(t, [sellFailed('s1', 'NO_PRICE')]);
  const after = failing.after();
  t.same(after.lots, given(twoLots).state.lots);
  t.same(after.balances, given(twoLots).state.balances);
  t.equal(after.lock, null);
  t.match(after.manual.get('s1'), { status: 'failed', reason: 'NO_PRICE', endedAt: when });
  given([...requested, ...failing.events()])
    .when(failSell('s1', 'NO_PRICE'))
    .then(t, [], 'once');
  given([...requested, ...failing.events()])
    .when(requestSell(sellPlan('s2', 3 * TOKEN)))
    .then(t, [sellRequested(sellPlan('s2', 3 * TOKEN))], 'the next sell runs');
});

t.test('FailSell: a sell done cannot fail; no sell, nothing to fail', async (t) => {
  const requested = [...twoLots, sellRequested(sellPlan('s1', TOKEN))];
  const done = given(requested)
    .when(settleSell('s1', swap(TOKEN, 170 * USD)))
    .events();
  given([...requested, ...done])
    .when(failSell('s1'))
    .thenRefused(t, 'ALREADY_EXISTS', /done/);
  given(twoLots).when(failSell('s9')).thenRefused(t, 'TRANSFER_NOT_FOUND');
  given(twoLots).when(failSell('b1')).thenRefused(t, 'TRANSFER_NOT_FOUND');
});

t.test('freezing does not release a lock', async (t) => {
  const freezing = given([...twoLots, sellRequested(sellPlan('s1', TOKEN))]).when(freeze);
  t.equal(freezing.after().lock, 's1');
});
