// Venue accounts: margin locked per position out of the pool's free money, released with its PnL,
// both idempotent by position id; per-pool figures and their sums over the shared account.
import t from 'tap';
import { VenueRefusedError } from '../../../infra/venues/errors.ts';
import { fundPerp, fundSpot, simulated, usd } from './fixtures.ts';

t.test('a lock takes free margin, not equity; its release gives the margin back with the PnL', async (t) => {
  const { clock, venues } = simulated();
  const perp = venues.perp.account;
  await fundPerp(venues, clock, 'p1', usd(1000));
  t.same(await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(250) }), {
    positionId: 'pos1',
    poolId: 'p1',
    amountMicro: usd(250),
    status: 'LOCKED',
    pnlMicro: null,
  });
  t.same(await perp.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(1000), marginInUseMicro: usd(250), freeMicro: usd(750), outgoingMicro: 0 });
  t.same(await perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: 12_345_678 }), {
    positionId: 'pos1',
    poolId: 'p1',
    amountMicro: usd(250),
    status: 'RELEASED',
    pnlMicro: 12_345_678,
  });
  t.same(await perp.poolFigures('p1'), { poolId: 'p1', equityMicro: 1_012_345_678, marginInUseMicro: 0, freeMicro: 1_012_345_678, outgoingMicro: 0 });
});

t.test('the account figures are the sums of its pools', async (t) => {
  const { clock, venues } = simulated();
  const perp = venues.perp.account;
  await fundPerp(venues, clock, 'p1', usd(100));
  await fundPerp(venues, clock, 'p2', usd(300));
  await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(100) });
  await perp.lockMargin({ poolId: 'p2', positionId: 'pos2', amountMicro: usd(50) });
  await venues.perp.bridge.start({ transferId: 'r2', direction: 'reclaim', poolId: 'p2', amountMicro: usd(20) });
  t.same(await perp.accountFigures(), { equityMicro: usd(380), marginInUseMicro: usd(150), freeMicro: usd(230), outgoingMicro: usd(20) });
  t.same(
    await venues.spot.account.accountFigures(),
    { equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 },
    'the spot venue is another account',
  );
});

t.test('a pool the venue never saw has zero figures', async (t) => {
  const { venues } = simulated();
  t.same(await venues.perp.account.poolFigures('nobody'), { poolId: 'nobody', equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 });
});

t.test("a lock beyond the pool's free money is refused with the free figure, and locks nothing", async (t) => {
  const { clock, venues } = simulated();
  const perp = venues.perp.account;
  await fundPerp(venues, clock, 'p1', usd(100));
  await fundPerp(venues, clock, 'p2', usd(1000));
  await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(60) });
  const refused = perp.lockMargin({ poolId: 'p1', positionId: 'pos2', amountMicro: usd(40) + 1 });
  await t.rejects(refused, { code: 'VENUE_REFUSED', reason: 'INSUFFICIENT_MARGIN', details: { freeMicro: usd(40), requestedMicro: usd(40) + 1 } });
  await t.rejects(refused, VenueRefusedError);
  t.equal((await perp.poolFigures('p1')).marginInUseMicro, usd(60), "another pool's free money does not count");
  await t.rejects(
    perp.releaseMargin({ poolId: 'p1', positionId: 'pos2', pnlMicro: 0 }),
    { code: 'VENUE_REFUSED', reason: 'UNKNOWN_POSITION' },
    'the refused lock left no position',
  );
  t.match(await perp.lockMargin({ poolId: 'p1', positionId: 'pos2', amountMicro: usd(40) }), { status: 'LOCKED' }, 'exactly the free money can be locked');
});

t.test('lockMargin is idempotent by position id, also once the pool could not afford a second lock', async (t) => {
  const { clock, venues } = simulated();
  const perp = venues.perp.account;
  await fundPerp(venues, clock, 'p1', usd(100));
  const first = await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(80) });
  t.same(await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(80) }), first);
  t.equal((await perp.poolFigures('p1')).marginInUseMicro, usd(80));
  await t.rejects(perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(10) }), { code: 'VENUE_ID_CONFLICT', fields: ['amountMicro'] });
  await t.rejects(perp.lockMargin({ poolId: 'p2', positionId: 'pos1', amountMicro: usd(80) }), { code: 'VENUE_ID_CONFLICT', fields: ['poolId'] });

  await perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(5) });
  t.match(
    await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(80) }),
    { status: 'RELEASED', pnlMicro: usd(5) },
    'a late repeat of the open locks nothing again',
  );
  t.same(await perp.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(105), marginInUseMicro: 0, freeMicro: usd(105), outgoingMicro: 0 });
});

t.test('releaseMargin is idempotent by position id and books the PnL once', async (t) => {
  const { clock, venues } = simulated();
  const perp = venues.perp.account;
  await fundPerp(venues, clock, 'p1', usd(100));
  await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(50) });
  const released = await perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(-7) });
  t.same(await perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(-7) }), released);
  t.equal((await perp.poolFigures('p1')).equityMicro, usd(93), 'the loss is booked once');
  await t.rejects(perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(-8) }), { code: 'VENUE_ID_CONFLICT', fields: ['pnlMicro'] });
  await t.rejects(perp.releaseMargin({ poolId: 'p2', positionId: 'pos1', pnlMicro: usd(-7) }), { code: 'VENUE_ID_CONFLICT', fields: ['poolId'] });
  await t.rejects(perp.releaseMargin({ poolId: 'p1', positionId: 'never', pnlMicro: 0 }), { code: 'VENUE_REFUSED', reason: 'UNKNOWN_POSITION' });
  await t.rejects(perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: 0.5 }), { code: 'VENUE_REFUSED', reason: 'INVALID_REQUEST' });
  t.equal((await perp.poolFigures('p1')).equityMicro, usd(93));
});

t.test("a loss beyond the pool's equity leaves it negative with nothing free (no liquidation in the simulation)", async (t) => {
  const { clock, venues } = simulated();
  const perp = venues.perp.account;
  await fundPerp(venues, clock, 'p1', usd(100));
  await perp.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(100) });
  await perp.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(-130) });
  t.same(await perp.poolFigures('p1'), { poolId: 'p1', equityMicro: usd(-30), marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 });
  t.match(await venues.perp.bridge.start({ transferId: 'r1', direction: 'reclaim', poolId: 'p1', amountMicro: usd(1) }), { status: 'RECLAIM_DEFERRED' });
});

t.test("the spot venue's account locks margin out of confirmed chain deposits the same way", async (t) => {
  const { clock, venues } = simulated();
  const spot = venues.spot.account;
  await fundSpot(venues, clock, 's1', usd(200));
  await spot.lockMargin({ poolId: 's1', positionId: 'buy1', amountMicro: usd(150) });
  await t.rejects(spot.lockMargin({ poolId: 's1', positionId: 'buy2', amountMicro: usd(51) }), { code: 'VENUE_REFUSED', reason: 'INSUFFICIENT_MARGIN' });
  await spot.releaseMargin({ poolId: 's1', positionId: 'buy1', pnlMicro: usd(3) });
  t.same(await spot.poolFigures('s1'), { poolId: 's1', equityMicro: usd(203), marginInUseMicro: 0, freeMicro: usd(203), outgoingMicro: 0 });
  t.equal((await venues.perp.account.poolFigures('s1')).equityMicro, 0, 'the perp account never saw it');
});
