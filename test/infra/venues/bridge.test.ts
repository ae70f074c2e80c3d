// The perp venue's bridge: deposits and reclaims through BRIDGING to CONFIRMED or FAILED, a reclaim
// taking min(requested, free collateral), deferred while nothing is free and started again later.
import t from 'tap';
import type { BridgeRequest } from '../../../infra/venues/port.ts';
import { DEPOSIT_MS, RECLAIM_MS, fundPerp, simulated, usd } from './fixtures.ts';

const deposit = (transferId: string, amountMicro: number, poolId = 'p1'): BridgeRequest => ({ transferId, direction: 'deposit', poolId, amountMicro });
const reclaim = (transferId: string, amountMicro: number, poolId = 'p1'): BridgeRequest => ({ transferId, direction: 'reclaim', poolId, amountMicro });

t.test("a deposit is BRIDGING until the bridge delay has passed, then CONFIRMED and in the pool's collateral", async (t) => {
  const { clock, venues } = simulated();
  const started = await venues.perp.bridge.start(deposit('b1', usd(500)));
  t.same(started, {
    transferId: 'b1',
    direction: 'deposit',
    poolId: 'p1',
    requestedMicro: usd(500),
    amountMicro: usd(500),
    status: 'BRIDGING',
    bridgeTransactionId: started.bridgeTransactionId,
    reason: null,
  });
  t.match(started.bridgeTransactionId, /^0x[0-9a-f]{64}$/);
  clock.advance(DEPOSIT_MS - 1);
  t.equal((await venues.perp.bridge.status('b1'))?.status, 'BRIDGING');
  t.equal((await venues.perp.account.poolFigures('p1')).equityMicro, 0);
  clock.advance(1);
  t.same(await venues.perp.bridge.status('b1'), { ...started, status: 'CONFIRMED' });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(500), marginInUseMicro: 0, freeMicro: usd(500), outgoingMicro: 0 });
});

t.test('a failed deposit credits nothing and says why', async (t) => {
  const { clock, venues } = simulated({ failTransfer: (id) => (id === 'b1' ? 'bridge halted' : null) });
  await venues.perp.bridge.start(deposit('b1', usd(500)));
  clock.advance(DEPOSIT_MS);
  t.match(await venues.perp.bridge.status('b1'), { status: 'FAILED', reason: 'bridge halted', amountMicro: usd(500) });
  t.equal((await venues.perp.account.poolFigures('p1')).equityMicro, 0);
});

t.test('a reclaim takes min(requested, free collateral) out of the account at once', async (t) => {
  const { clock, venues } = simulated();
  await fundPerp(venues, clock, 'p1', usd(100));
  await venues.perp.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(70) });
  const started = await venues.perp.bridge.start(reclaim('r1', usd(50)));
  t.match(started, { status: 'BRIDGING', requestedMicro: usd(50), amountMicro: usd(30) });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(70), marginInUseMicro: usd(70), freeMicro: 0, outgoingMicro: usd(30) });
  clock.advance(RECLAIM_MS);
  t.match(await venues.perp.bridge.status('r1'), { status: 'CONFIRMED', amountMicro: usd(30) });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(70), marginInUseMicro: usd(70), freeMicro: 0, outgoingMicro: 0 });
});

t.test('a reclaim no larger than the free collateral takes the whole request', async (t) => {
  const { clock, venues } = simulated();
  await fundPerp(venues, clock, 'p1', usd(100));
  t.match(await venues.perp.bridge.start(reclaim('r1', usd(40))), { status: 'BRIDGING', amountMicro: usd(40) });
  t.equal((await venues.perp.account.poolFigures('p1')).freeMicro, usd(60));
});

t.test('two reclaims never take the same dollar', async (t) => {
  const { clock, venues } = simulated();
  await fundPerp(venues, clock, 'p1', usd(100));
  const [a, b] = await Promise.all([venues.perp.bridge.start(reclaim('r1', usd(80))), venues.perp.bridge.start(reclaim('r2', usd(80)))]);
  t.equal(a.amountMicro + b.amountMicro, usd(100));
  t.same(
    [a.amountMicro, b.amountMicro].sort((x, y) => x - y),
    [usd(20), usd(80)],
  );
});

t.test('a reclaim with no free collateral is RECLAIM_DEFERRED and stays so until started again', async (t) => {
  const { clock, venues } = simulated();
  await fundPerp(venues, clock, 'p1', usd(100));
  await venues.perp.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(100) });
  const deferred = await venues.perp.bridge.start(reclaim('r1', usd(60)));
  t.same(deferred, {
    transferId: 'r1',
    direction: 'reclaim',
    poolId: 'p1',
    requestedMicro: usd(60),
    amountMicro: 0,
    status: 'RECLAIM_DEFERRED',
    bridgeTransactionId: null,
    reason: null,
  });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(100), marginInUseMicro: usd(100), freeMicro: 0, outgoingMicro: 0 });

  t.same(await venues.perp.bridge.start(reclaim('r1', usd(60))), deferred, 'started again with nothing free: still deferred');
  await venues.perp.account.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(-60) });
  clock.advance(10 * RECLAIM_MS);
  t.same(await venues.perp.bridge.status('r1'), deferred, 'free collateral alone does not move it: the caller starts it again');

  const resumed = await venues.perp.bridge.start(reclaim('r1', usd(60)));
  t.match(resumed, { status: 'BRIDGING', requestedMicro: usd(60), amountMicro: usd(40) }, 'what is free now');
  t.match(resumed.bridgeTransactionId, /^0x[0-9a-f]{64}$/);
  clock.advance(RECLAIM_MS - 1);
  t.equal((await venues.perp.bridge.status('r1'))?.status, 'BRIDGING', 'the delay runs from the second start');
  clock.advance(1);
  t.match(await venues.perp.bridge.status('r1'), { status: 'CONFIRMED', amountMicro: usd(40) });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 });
});

t.test('a failed reclaim puts the collateral back in the pool', async (t) => {
  const { clock, venues } = simulated({ failTransfer: (id) => (id === 'r1' ? 'withdrawal rejected' : null) });
  await fundPerp(venues, clock, 'p1', usd(100));
  await venues.perp.bridge.start(reclaim('r1', usd(100)));
  t.equal((await venues.perp.account.poolFigures('p1')).freeMicro, 0);
  clock.advance(RECLAIM_MS);
  t.match(await venues.perp.bridge.status('r1'), { status: 'FAILED', reason: 'withdrawal rejected', amountMicro: usd(100) });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(100), marginInUseMicro: 0, freeMicro: usd(100), outgoingMicro: 0 });
});

t.test('a reclaim sees a deposit that became final before it', async (t) => {
  const { clock, venues } = simulated();
  await venues.perp.bridge.start(deposit('b1', usd(100)));
  clock.advance(DEPOSIT_MS);
  // No status call in between: the reclaim itself must first apply what became final.
  t.match(await venues.perp.bridge.start(reclaim('r1', usd(100))), { status: 'BRIDGING', amountMicro: usd(100) });
});

t.test("one shared account, free collateral per pool: a pool never reclaims another pool's collateral", async (t) => {
  const { clock, venues } = simulated();
  await fundPerp(venues, clock, 'p1', usd(100));
  t.match(await venues.perp.bridge.start(reclaim('r1', usd(10), 'p2')), { status: 'RECLAIM_DEFERRED', amountMicro: 0 });
  t.same(await venues.perp.account.accountFigures(), { equityMicro: usd(100), marginInUseMicro: 0, freeMicro: usd(100), outgoingMicro: 0 });
});

t.test('start is idempotent by transfer id: a repeat moves nothing twice, even with more collateral free now', async (t) => {
  const { clock, venues } = simulated();
  const first = await venues.perp.bridge.start(deposit('b1', usd(100)));
  t.same(await venues.perp.bridge.start(deposit('b1', usd(100))), first);
  clock.advance(DEPOSIT_MS);
  t.same(await venues.perp.bridge.start(deposit('b1', usd(100))), { ...first, status: 'CONFIRMED' });
  t.equal((await venues.perp.account.poolFigures('p1')).equityMicro, usd(100), 'credited once');

  await venues.perp.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(90) });
  const partial = await venues.perp.bridge.start(reclaim('r1', usd(50)));
  t.equal(partial.amountMicro, usd(10));
  await venues.perp.account.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: 0 });
  t.same(await venues.perp.bridge.start(reclaim('r1', usd(50))), partial, 'a BRIDGING reclaim keeps the amount it left with');
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(90), marginInUseMicro: 0, freeMicro: usd(90), outgoingMicro: usd(10) });
});

t.test('reusing a bridge transfer id for another request is a conflict and changes nothing', async (t) => {
  const { clock, venues } = simulated();
  await fundPerp(venues, clock, 'p1', usd(100));
  await venues.perp.bridge.start(reclaim('r1', usd(50)));
  await t.rejects(venues.perp.bridge.start(reclaim('r1', usd(51))), { code: 'VENUE_ID_CONFLICT', id: 'r1', fields: ['requestedMicro'] });
  await t.rejects(venues.perp.bridge.start(deposit('r1', usd(50))), { code: 'VENUE_ID_CONFLICT', fields: ['direction'] });
  await t.rejects(venues.perp.bridge.start(reclaim('r1', usd(50), 'p2')), { code: 'VENUE_ID_CONFLICT', fields: ['poolId'] });
  t.same(await venues.perp.account.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(50), marginInUseMicro: 0, freeMicro: usd(50), outgoingMicro: usd(50) });
});

t.test('an unknown bridge transfer has no status; bad amounts are refused', async (t) => {
  const { venues } = simulated();
  t.equal(await venues.perp.bridge.status('never-started'), null);
  await t.rejects(venues.perp.bridge.start(reclaim('r1', 0)), { code: 'VENUE_REFUSED', reason: 'INVALID_REQUEST' });
  await t.rejects(venues.perp.bridge.start(deposit('b1', 2.5)), { code: 'VENUE_REFUSED', reason: 'INVALID_REQUEST' });
  t.equal(await venues.perp.bridge.status('r1'), null);
});
