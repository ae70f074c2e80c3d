// The spot venue's chain transfers: pending until final, idempotent by transfer id, failures
// injected by the test, withdrawals out of the pool's balance at once.
import t from 'tap';
import { VenueConflictError, VenueRefusedError } from '../../../infra/venues/errors.ts';
import type { ChainTransferRequest } from '../../../infra/venues/port.ts';
import { CHAIN_MS, fundSpot, simulated, usd } from './fixtures.ts';

const deposit = (transferId: string, amountMicro: number, poolId = 'p1'): ChainTransferRequest => ({
  transferId,
  direction: 'deposit',
  userId: 'u1',
  poolId,
  amountMicro,
});
const withdrawal = (transferId: string, amountMicro: number, poolId = 'p1'): ChainTransferRequest => ({
  transferId,
  direction: 'withdrawal',
  userId: 'u1',
  poolId,
  amountMicro,
});

t.test('a deposit is pending until the chain transfer is final, then counts in the pool', async (t) => {
  const { clock, venues } = simulated();
  const sent = await venues.spot.chain.submit(deposit('t1', usd(100)));
  t.equal(sent.status, 'PENDING');
  t.match(sent.txHash, /^0x[0-9a-f]{64}$/);
  t.equal((await venues.spot.account.poolFigures('p1')).equityMicro, 0, 'nothing counts before it is final');

  clock.advance(CHAIN_MS - 1);
  t.equal((await venues.spot.chain.status('t1'))?.status, 'PENDING', 'one ms before the delay');
  clock.advance(1);
  t.same(await venues.spot.chain.status('t1'), { ...sent, status: 'CONFIRMED' });
  t.same(await venues.spot.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(100), marginInUseMicro: 0, freeMicro: usd(100), outgoingMicro: 0 });
});

t.test('a withdrawal leaves the pool at once as outgoing money and is gone once final', async (t) => {
  const { clock, venues } = simulated();
  await fundSpot(venues, clock, 'p1', usd(100));
  const sent = await venues.spot.chain.submit(withdrawal('w1', usd(40)));
  t.equal(sent.status, 'PENDING');
  t.same(await venues.spot.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(60), marginInUseMicro: 0, freeMicro: usd(60), outgoingMicro: usd(40) });
  clock.advance(CHAIN_MS);
  t.equal((await venues.spot.chain.status('w1'))?.status, 'CONFIRMED');
  t.same(await venues.spot.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(60), marginInUseMicro: 0, freeMicro: usd(60), outgoingMicro: 0 });
});

t.test('an injected failure ends the transfer FAILED with its reason: a failed withdrawal comes back, a failed deposit never arrives', async (t) => {
  const failing = new Set(['w-bad', 'd-bad']);
  const { clock, venues } = simulated({ failTransfer: (id) => (failing.has(id) ? 'chain congested' : null) });
  await fundSpot(venues, clock, 'p1', usd(100));
  await venues.spot.chain.submit(withdrawal('w-bad', usd(30)));
  await venues.spot.chain.submit(deposit('d-bad', usd(50)));
  t.equal((await venues.spot.account.poolFigures('p1')).equityMicro, usd(70));
  clock.advance(CHAIN_MS);
  t.match(await venues.spot.chain.status('w-bad'), { status: 'FAILED', reason: 'chain congested' });
  t.match(await venues.spot.chain.status('d-bad'), { status: 'FAILED', reason: 'chain congested' });
  t.same(await venues.spot.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(100), marginInUseMicro: 0, freeMicro: usd(100), outgoingMicro: 0 });
});

t.test('a final status never changes, whatever the failure rule says later', async (t) => {
  let reason: string | null = null;
  const { clock, venues } = simulated({ failTransfer: () => reason });
  await venues.spot.chain.submit(deposit('t1', usd(10)));
  clock.advance(CHAIN_MS);
  t.equal((await venues.spot.chain.status('t1'))?.status, 'CONFIRMED');
  reason = 'too late';
  clock.advance(CHAIN_MS);
  t.match(await venues.spot.chain.status('t1'), { status: 'CONFIRMED', reason: null });
  t.equal((await venues.spot.account.poolFigures('p1')).equityMicro, usd(10));
});

t.test("a withdrawal beyond the pool's free balance fails at once and moves nothing", async (t) => {
  const { clock, venues } = simulated();
  await fundSpot(venues, clock, 'p1', usd(100));
  await venues.spot.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(80) });
  const sent = await venues.spot.chain.submit(withdrawal('w1', usd(21)));
  t.match(sent, { status: 'FAILED', reason: 'INSUFFICIENT_FUNDS', txHash: null });
  t.same(await venues.spot.chain.submit(withdrawal('w1', usd(21))), sent, 'a repeat answers the same');
  t.same(await venues.spot.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(100), marginInUseMicro: usd(80), freeMicro: usd(20), outgoingMicro: 0 });
  t.equal((await venues.spot.chain.submit(withdrawal('w2', usd(20)))).status, 'PENDING', 'exactly the free balance is sent');
});

t.test('submit is idempotent by transfer id: a repeat answers the first record and counts once', async (t) => {
  const { clock, venues } = simulated();
  const first = await venues.spot.chain.submit(deposit('t1', usd(25)));
  t.same(await venues.spot.chain.submit(deposit('t1', usd(25))), first, 'while pending');
  clock.advance(CHAIN_MS);
  t.same(await venues.spot.chain.submit(deposit('t1', usd(25))), { ...first, status: 'CONFIRMED' }, 'once final');
  clock.advance(CHAIN_MS);
  t.equal((await venues.spot.account.poolFigures('p1')).equityMicro, usd(25), 'credited once');
});

t.test('reusing a transfer id for another request is a conflict and changes nothing', async (t) => {
  const { clock, venues } = simulated();
  await venues.spot.chain.submit(deposit('t1', usd(25)));
  await t.rejects(venues.spot.chain.submit(deposit('t1', usd(26))), new VenueConflictError('t1', ['amountMicro']));
  await t.rejects(venues.spot.chain.submit(deposit('t1', usd(25), 'p2')), { code: 'VENUE_ID_CONFLICT', fields: ['poolId'] });
  await t.rejects(venues.spot.chain.submit(withdrawal('t1', usd(25))), { code: 'VENUE_ID_CONFLICT', fields: ['direction'] });
  await t.rejects(venues.spot.chain.submit({ ...deposit('t1', usd(25)), userId: 'u2' }), { code: 'VENUE_ID_CONFLICT', fields: ['userId'] });
  clock.advance(CHAIN_MS);
  t.same(await venues.spot.account.accountFigures(), { equityMicro: usd(25), marginInUseMicro: 0, freeMicro: usd(25), outgoingMicro: 0 });
});

t.test('an unknown transfer id has no status', async (t) => {
  const { venues } = simulated();
  t.equal(await venues.spot.chain.status('never-sent'), null);
});

t.test('amounts that are not positive safe integers of micro-USD are refused before anything is recorded', async (t) => {
  const { venues } = simulated();
  for (const amountMicro of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
    await t.rejects(venues.spot.chain.submit(deposit('t-bad', amountMicro)), { code: 'VENUE_REFUSED', reason: 'INVALID_REQUEST' }, `amount ${amountMicro}`);
  }
  await t.rejects(venues.spot.chain.submit(deposit('', 1)), VenueRefusedError);
  t.equal(await venues.spot.chain.status('t-bad'), null);
});

t.test('a delay that is not a whole number of ms, at least 0, is refused when the venues are made', async (t) => {
  t.throws(() => simulated({ chainSettlementMs: -1 }), RangeError);
  t.throws(() => simulated({ bridgeDelays: { reclaimMs: 1.5 } }), RangeError);
  t.doesNotThrow(() => simulated({ chainSettlementMs: 0, bridgeDelays: { depositMs: 0 } }));
});
