// Fee receipts (domain/pool/receipts.ts): what set each settlement off, and the high-water mark the
// fold carries between settlements: raised only by a settlement paid in full, reset by a new follow.
import t from 'tap';
import type { PoolEvent } from '../../../domain/pool/events.ts';
import type { PoolHistoryEvent } from '../../../domain/pool/history.ts';
import { feeReceipts } from '../../../domain/pool/receipts.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { settings, terms } from './fixtures.ts';

const M = 1_000_000;
const time = (minute: number) => new Date(Date.UTC(2025, 1, 1, 10, minute)).toISOString();
const followed = (minute: number): PoolEvent => ({
  type: 'AgentFollowed',
  data: { ...settings, agentId: 'a1', userId: 'u1', walletContext: 'real', poolId: 'u1.a1.real', walletMode: 'REAL', terms, subscribedAt: time(minute) },
});
const plan = (transferId: string, amountMicro: number): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'real' },
  to: { kind: 'wallet', userId: 'u1', walletContext: 'real' },
});
/** A settlement of `fee` at 20 %, on `realized` profit, after `before` was charged. */
const fees = (n: number, minute: number, fee: number, realized: number, before: number): PoolEvent => ({
  type: 'FeesSettled',
  data: {
    settlementId: `u1.a1.real#fees-${n}`,
    feeMicro: fee,
    creatorMicro: Math.floor((fee * 4) / 5),
    platformMicro: fee - Math.floor((fee * 4) / 5),
    realizedMicro: realized,
    unrealizedMicro: 0,
    feesChargedBeforeMicro: before,
    successFeePercent: 20,
    at: time(minute),
  },
});
const confirmedOut = (transferId: string, minute: number): PoolEvent => ({
  type: 'AllocationSettled',
  data: { transferId, direction: 'out', outcome: 'confirmed', amountMicro: 10 * M, at: time(minute) },
});

const life: PoolEvent[] = [
  followed(0),
  // 50 USD of profit: 10 due, only 4 free, so the mark stays where it was.
  confirmedOut('w-1', 1),
  fees(1, 1, 4 * M, 50 * M, 0),
  // The rest (6) on the next withdrawal: paid in full, the mark reaches 50.
  confirmedOut('w-2', 2),
  fees(2, 2, 6 * M, 50 * M, 4 * M),
  // Recorded with no neighbour of its command: what set it off is unknown.
  fees(3, 3, 2 * M, 60 * M, 10 * M),
  fees(4, 4, 2 * M, 70 * M, 12 * M),
  { type: 'WithdrawalRequested', data: { transfer: plan('stop-1', 100 * M), pending: true, at: time(4) } },
  { type: 'PoolClosed', data: { at: time(4), transferId: 'stop-1' } },
  followed(5),
  fees(5, 6, 1 * M, 5 * M, 0),
];
const position = { commit: '7', prepare: '7' };
const events: PoolHistoryEvent[] = life.map((event, i) => ({ id: `e${i}`, time: time(0), event, ...(i === 2 ? { position } : {}) }));

t.test('each settlement with what set it off, the mark before and after, and what was due', async (t) => {
  const receipts = feeReceipts(events);
  t.same([...receipts.keys()], [2, 4, 5, 6, 10], 'keyed by the event’s place in the history');
  const [partial, rest, lone, stop, again] = [...receipts.values()];
  t.match(partial, { sequence: 3, eventId: 'e2', position: { commit: '7' }, trigger: 'withdrawal', triggerTransferId: 'w-1' });
  t.match(partial, { chargeableProfit: 50 * M, feeDue: 10 * M, fee: 4 * M, highWaterMarkBefore: 0, highWaterMarkAfter: 0, feesChargedAfter: 4 * M });
  t.match(rest, { trigger: 'withdrawal', triggerTransferId: 'w-2', feeDue: 6 * M, fee: 6 * M, highWaterMarkBefore: 0, highWaterMarkAfter: 50 * M });
  t.match(lone, { trigger: 'unknown', triggerTransferId: null, position: null, highWaterMarkBefore: 50 * M, highWaterMarkAfter: 60 * M, feeDue: 2 * M });
  t.match(stop, { trigger: 'stop', triggerTransferId: 'stop-1', highWaterMarkBefore: 60 * M, highWaterMarkAfter: 70 * M });
  t.match(stop, { fee: 2 * M, creatorFee: 1_600_000, platformFee: 400_000 });
  t.match(again, { highWaterMarkBefore: 0, highWaterMarkAfter: 5 * M, feesChargedBefore: 0, feeDue: 1 * M }, 'a new follow starts without a mark');
});

t.test('a history without settlements has no receipts', async (t) => {
  t.equal(feeReceipts(events.slice(0, 2)).size, 0);
});
