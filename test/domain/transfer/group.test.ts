// The group transfer in Given / When / Then form: given a signal's trades in one pool (both or
// neither) and what their steps reported so far, when the group decides, then the next steps (or
// none, and how the group ended).
import t from 'tap';
import { refuse } from '../../../domain/shared/errors.ts';
import { decide, evolve, groupDebited, groupPlanned, groupReason, groupResumed, groupStatus, type GroupState } from '../../../domain/transfer/group.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import type { TransferOutcome } from '../../../domain/transfer/steps.ts';

const poolId = 'u1.a1.virtual';
const from = { kind: 'pool' as const, userId: 'u1', agentId: 'a1', walletContext: 'virtual' as const };
const member = (tradeId: string): TransferPlan => ({
  transferId: tradeId,
  amountMicro: 10_000_000,
  from,
  to: { kind: 'trade', tradeId, poolId },
});
const plans = [member('t1'), member('t2')];
const returnOf = (tradeId: string): TransferPlan => ({
  transferId: `${tradeId}.return`,
  amountMicro: 0,
  from: { kind: 'trade', tradeId, poolId },
  to: from,
});

/** Given a start and what the members' steps reported, in order. */
const given = (start: GroupState, ...reported: Array<[string, TransferOutcome]>) => reported.reduce((s, [m, o]) => evolve(s, m, o), start);

t.test('a planned group starts with every member debit side by side, a debited one with every credit', async (t) => {
  t.same(
    decide(groupPlanned(plans)).map((s) => [s.member, s.step.type]),
    [
      ['t1', 'LockMargin'],
      ['t2', 'LockMargin'],
    ],
  );
  t.same(
    decide(groupDebited(plans)).map((s) => [s.member, s.step.type]),
    [
      ['t1', 'OpenTradeEntry'],
      ['t2', 'OpenTradeEntry'],
    ],
  );
  t.equal(groupStatus(groupDebited(plans)), 'running');
});

t.test('every credit taken: the group is completed, nothing to give back', async (t) => {
  const done = given(groupDebited(plans), ['t1', { type: 'Credited' }], ['t2', { type: 'Credited' }]);
  t.same(decide(done), []);
  t.equal(groupStatus(done), 'completed');
  t.equal(groupReason(done), undefined);
});

t.test('a debit refused for the group: failed, nothing moved, with the pool reason', async (t) => {
  const error = refuse('TRADE_SKIPPED', 'the pool refused');
  const refused = given(groupPlanned(plans), ['t1', { type: 'DebitRefused', error }], ['t2', { type: 'DebitRefused', error }]);
  t.same(decide(refused), []);
  t.equal(groupStatus(refused), 'failed');
  t.equal(groupReason(refused), 'TRADE_SKIPPED');
});

t.test('one credit rejected: the completed member is undone first (its trade ended, then paid back), then the rejected one refunded', async (t) => {
  const rejected = given(groupDebited(plans), ['t1', { type: 'Credited' }], ['t2', { type: 'CreditRejected', reason: 'INVALID_LEVELS' }]);
  t.same(decide(rejected), [{ member: 't1', step: { type: 'UndoTrade', data: { transfer: plans[0]! } } }], 'the undo comes before any refund');
  t.equal(groupStatus(rejected), 'running');
  const closed = given(rejected, ['t1', { type: 'Refunded' }]);
  t.same(decide(closed), [{ member: 't1', step: { type: 'DebitTrade', data: { transfer: returnOf('t1') } } }], 'the trade pays its pool back');
  const debited = given(closed, ['t1', { type: 'Debited', amountMicro: 9_900_000 }]);
  t.same(decide(debited), [{ member: 't1', step: { type: 'ReturnMargin', data: { transfer: { ...returnOf('t1'), amountMicro: 9_900_000 } } } }]);
  const returned = given(debited, ['t1', { type: 'Credited' }]);
  t.same(decide(returned), [{ member: 't2', step: { type: 'ReleaseMargin', data: { transfer: plans[1]! } } }], 'then the rejected margin goes back');
  const compensated = given(returned, ['t2', { type: 'Refunded' }]);
  t.same(decide(compensated), []);
  t.equal(groupStatus(compensated), 'compensated');
  t.equal(groupReason(compensated), 'INVALID_LEVELS', 'why it was given back stays known');
});

t.test('every credit rejected: each member refunded at once, no undo', async (t) => {
  const rejected = given(groupDebited(plans), ['t1', { type: 'CreditRejected', reason: 'NO_MARK_PRICE' }], ['t2', { type: 'CreditRejected', reason: 'X' }]);
  t.same(
    decide(rejected).map((s) => [s.member, s.step.type]),
    [
      ['t1', 'ReleaseMargin'],
      ['t2', 'ReleaseMargin'],
    ],
  );
  t.equal(groupReason(rejected), 'NO_MARK_PRICE', 'the first member’s reason, in the group’s order');
});

t.test('a resumed group reads its debits back first, and a credit is asked as resumed', async (t) => {
  const again = groupResumed(plans);
  t.same(
    decide(again).map((s) => s.step.type),
    ['LockMargin', 'LockMargin'],
  );
  const debited = given(again, ['t1', { type: 'Debited', amountMicro: 10_000_000 }], ['t2', { type: 'Debited', amountMicro: 10_000_000 }]);
  t.same(
    decide(debited).map((s) => s.step.type),
    ['OpenTradeEntry', 'OpenTradeEntry'],
  );
});

t.test('an outcome the group does not expect is a bug, never taken silently', async (t) => {
  const done = given(groupDebited(plans), ['t1', { type: 'Credited' }], ['t2', { type: 'CreditRejected', reason: 'X' }]);
  t.throws(() => evolve(done, 't1', { type: 'Credited' }), /cannot follow its undo/);
  t.throws(() => evolve(done, 't3', { type: 'Credited' }), /no member t3/);
  t.throws(() => groupPlanned([]), /at least one member/);
});
