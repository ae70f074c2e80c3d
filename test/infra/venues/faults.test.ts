// Outages and lost answers: a venue that cannot be reached throws VenueUnavailableError and does
// nothing; a caller that repeats a call with the same id after a crash or a lost answer causes
// exactly one effect, the figures of a world where the call was made once.
import t from 'tap';
import { VenueUnavailableError } from '../../../infra/venues/errors.ts';
import type { Venues } from '../../../infra/venues/port.ts';
import type { Fault, VenueCall } from '../../../infra/venues/simulated.ts';
import { fundPerp, fundSpot, simulated, usd, type ManualClock } from './fixtures.ts';

t.test('an unreachable venue throws VenueUnavailableError on every call and changes nothing', async (t) => {
  let down = true;
  const { clock, venues } = simulated({ fault: (call) => (down && call.venue === 'perp' ? 'unavailable' : null) });
  const calls: [string, () => Promise<unknown>][] = [
    ['start', () => venues.perp.bridge.start({ transferId: 'b1', direction: 'deposit', poolId: 'p1', amountMicro: usd(10) })],
    ['status', () => venues.perp.bridge.status('b1')],
    ['poolFigures', () => venues.perp.account.poolFigures('p1')],
    ['accountFigures', () => venues.perp.account.accountFigures()],
    ['lockMargin', () => venues.perp.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: 1 })],
    ['releaseMargin', () => venues.perp.account.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: 0 })],
  ];
  for (const [operation, call] of calls) {
    const error = await call().then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(error instanceof VenueUnavailableError, `${operation} throws VenueUnavailableError`);
    t.match(error, { code: 'VENUE_UNAVAILABLE', venue: 'perp', operation });
  }
  t.same(await venues.spot.account.accountFigures(), { equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 }, 'the spot venue still answers');

  down = false;
  clock.advance(60_000);
  t.equal(await venues.perp.bridge.status('b1'), null, 'the start during the outage never reached the bridge');
  t.equal((await venues.perp.account.accountFigures()).equityMicro, 0);
});

t.test('a lost answer hides a call the venue did make: the status shows it', async (t) => {
  let lose = true;
  const { venues } = simulated({ fault: () => (lose ? 'reply-lost' : null) });
  await t.rejects(venues.perp.bridge.start({ transferId: 'b1', direction: 'deposit', poolId: 'p1', amountMicro: usd(10) }), {
    code: 'VENUE_UNAVAILABLE',
    operation: 'start',
  });
  await t.rejects(
    venues.spot.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: 1 }),
    VenueUnavailableError,
    'a refusal is lost the same way',
  );
  lose = false;
  t.match(await venues.perp.bridge.status('b1'), { status: 'BRIDGING', amountMicro: usd(10) });
});

/** A money-moving call, with what it needs in place, made on a fresh world. */
interface Case {
  name: string;
  setUp(venues: Venues, clock: ManualClock): Promise<void>;
  call(venues: Venues): Promise<unknown>;
  key: string;
}

const cases: Case[] = [
  {
    name: 'chain deposit',
    setUp: async () => {},
    call: (v) => v.spot.chain.submit({ transferId: 't1', direction: 'deposit', userId: 'u1', poolId: 'p1', amountMicro: usd(40) }),
    key: 't1',
  },
  {
    name: 'chain withdrawal',
    setUp: (v, c) => fundSpot(v, c, 'p1', usd(100)),
    call: (v) => v.spot.chain.submit({ transferId: 't1', direction: 'withdrawal', userId: 'u1', poolId: 'p1', amountMicro: usd(40) }),
    key: 't1',
  },
  {
    name: 'bridge deposit',
    setUp: async () => {},
    call: (v) => v.perp.bridge.start({ transferId: 'b1', direction: 'deposit', poolId: 'p1', amountMicro: usd(40) }),
    key: 'b1',
  },
  {
    name: 'bridge reclaim',
    setUp: (v, c) => fundPerp(v, c, 'p1', usd(100)),
    call: (v) => v.perp.bridge.start({ transferId: 'r1', direction: 'reclaim', poolId: 'p1', amountMicro: usd(40) }),
    key: 'r1',
  },
  {
    name: 'margin lock',
    setUp: (v, c) => fundPerp(v, c, 'p1', usd(100)),
    call: (v) => v.perp.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(40) }),
    key: 'pos1',
  },
  {
    name: 'margin release',
    setUp: async (v, c) => {
      await fundPerp(v, c, 'p1', usd(100));
      await v.perp.account.lockMargin({ poolId: 'p1', positionId: 'pos1', amountMicro: usd(40) });
    },
    call: (v) => v.perp.account.releaseMargin({ poolId: 'p1', positionId: 'pos1', pnlMicro: usd(9) }),
    key: 'pos1',
  },
];

/** Both accounts' figures for p1 after every transfer in flight became final. */
async function settledFigures(venues: Venues, clock: ManualClock) {
  clock.advance(60_000);
  return { spot: await venues.spot.account.poolFigures('p1'), perp: await venues.perp.account.poolFigures('p1') };
}

for (const c of cases) {
  t.test(`${c.name}: repeated after a lost answer or a caller's crash, it takes effect once`, async (t) => {
    const once = simulated();
    await c.setUp(once.venues, once.clock);
    const answer = await c.call(once.venues);
    const expected = await settledFigures(once.venues, once.clock);

    // The venue applies the call and the answer is lost: the caller only sees the outage.
    let lose = false;
    const lost = simulated({ fault: (call: VenueCall): Fault | null => (lose && call.key === c.key ? 'reply-lost' : null) });
    await c.setUp(lost.venues, lost.clock);
    lose = true;
    await t.rejects(c.call(lost.venues), VenueUnavailableError);
    lose = false;
    t.same(await c.call(lost.venues), answer, 'the repeat answers what the first call did');
    t.same(await settledFigures(lost.venues, lost.clock), expected);

    // The caller got the answer and crashed before recording it; after restart it calls twice more.
    const crashed = simulated();
    await c.setUp(crashed.venues, crashed.clock);
    await c.call(crashed.venues);
    await c.call(crashed.venues);
    await c.call(crashed.venues);
    t.same(await settledFigures(crashed.venues, crashed.clock), expected);
  });
}

t.test('the comparison above can tell one effect from two', async (t) => {
  // Guard against a vacuous check: two distinct ids do move the money twice.
  const { clock, venues } = simulated();
  await venues.perp.bridge.start({ transferId: 'b1', direction: 'deposit', poolId: 'p1', amountMicro: usd(40) });
  await venues.perp.bridge.start({ transferId: 'b2', direction: 'deposit', poolId: 'p1', amountMicro: usd(40) });
  t.equal((await settledFigures(venues, clock)).perp.equityMicro, usd(80));
});
