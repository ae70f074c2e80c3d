// The simulated venues with their books in PostgreSQL: what a process had done is there after it
// stopped (a restart is a new process on the same database), a settlement that came due while no
// process ran applies at the first call after, and several processes calling at once share one
// book: no dollar leaves twice, an id takes effect once.
import t from 'tap';
import { VenueConflictError } from '../../../infra/venues/errors.ts';
import type { Venues } from '../../../infra/venues/port.ts';
import { bookDatabase, CHAIN_MS, DEPOSIT_MS, manualClock, RECLAIM_MS, usd } from './fixtures.ts';

const books = await bookDatabase();
t.teardown(() => books.drop());

t.test('a restarted process finds the books as they were, and what came due meanwhile settles', async (t) => {
  await books.fresh();
  const clock = manualClock();
  /** a process: its own connections, nothing else of its own */
  const start = () => books.process(clock);
  let p = start();
  await p.venues.spot.chain.submit({ transferId: 'd1', direction: 'deposit', userId: 'u1', poolId: 's1', amountMicro: usd(100) });
  await p.venues.perp.bridge.start({ transferId: 'b1', direction: 'deposit', poolId: 'f1', amountMicro: usd(100) });
  clock.advance(DEPOSIT_MS);
  await p.venues.perp.account.lockMargin({ poolId: 'f1', positionId: 'pos1', amountMicro: usd(100) });
  const withdrawal = await p.venues.spot.chain.submit({ transferId: 'w1', direction: 'withdrawal', userId: 'u1', poolId: 's1', amountMicro: usd(40) });
  t.equal(withdrawal.status, 'PENDING', 'the deposit had come due: the withdrawal is sent');
  const deferred = await p.venues.perp.bridge.start({ transferId: 'r1', direction: 'reclaim', poolId: 'f1', amountMicro: usd(30) });
  t.equal(deferred.status, 'RECLAIM_DEFERRED', 'everything is locked');
  await p.pool.end();

  clock.advance(CHAIN_MS); // the withdrawal comes due while no process runs
  p = start();
  t.same(await p.venues.spot.chain.status('w1'), { ...withdrawal, status: 'CONFIRMED' });
  t.same(await p.venues.spot.account.poolFigures('s1'), { poolId: 's1', equityMicro: usd(60), marginInUseMicro: 0, freeMicro: usd(60), outgoingMicro: 0 });
  t.same(
    await p.venues.spot.chain.submit({ transferId: 'w1', direction: 'withdrawal', userId: 'u1', poolId: 's1', amountMicro: usd(40) }),
    { ...withdrawal, status: 'CONFIRMED' },
    'a repeat answers the record',
  );
  t.match(
    await p.venues.perp.account.releaseMargin({ poolId: 'f1', positionId: 'pos1', pnlMicro: usd(5) }),
    { status: 'RELEASED', pnlMicro: usd(5) },
    'the lock was kept',
  );
  t.match(
    await p.venues.perp.bridge.start({ transferId: 'r1', direction: 'reclaim', poolId: 'f1', amountMicro: usd(30) }),
    { status: 'BRIDGING', amountMicro: usd(30) },
    'the deferred reclaim leaves',
  );
  await p.pool.end();

  clock.advance(RECLAIM_MS);
  p = start();
  t.same(
    await p.venues.perp.account.accountFigures(),
    { equityMicro: usd(75), marginInUseMicro: 0, freeMicro: usd(75), outgoingMicro: 0 },
    'deposit + PnL − reclaim',
  );
  t.match(await p.venues.perp.bridge.status('r1'), { status: 'CONFIRMED', amountMicro: usd(30) });
});

/** Two processes' venues on one book, on one clock; pools p1 and p2 hold 100 USD each. */
async function twoProcesses(): Promise<[Venues, Venues]> {
  const { clock, venues } = await books.fresh();
  for (const poolId of ['p1', 'p2'])
    await venues.spot.chain.submit({ transferId: `fund-${poolId}`, direction: 'deposit', userId: 'u1', poolId, amountMicro: usd(100) });
  clock.advance(CHAIN_MS);
  return [venues, books.process(clock).venues];
}

t.test('withdrawals from two processes at once never take more than the pool holds', async (t) => {
  const both = await twoProcesses();
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      both[i % 2]!.spot.chain.submit({ transferId: `w${i}`, direction: 'withdrawal', userId: 'u1', poolId: 'p1', amountMicro: usd(10) }),
    ),
  );
  t.equal(answers.filter((a) => a.status === 'PENDING').length, 10, 'ten of 10 USD leave a pool of 100 USD');
  t.ok(answers.filter((a) => a.status !== 'PENDING').every((a) => a.reason === 'INSUFFICIENT_FUNDS'));
  t.same(await both[1].spot.account.poolFigures('p1'), { poolId: 'p1', equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: usd(100) });
});

t.test('one id sent by two processes at once takes effect once; reused for another pool, the first stands', async (t) => {
  const both = await twoProcesses();
  const send = (i: number, poolId = 'p1') =>
    both[i % 2]!.spot.chain.submit({ transferId: 'w-once', direction: 'withdrawal', userId: 'u1', poolId, amountMicro: usd(10) });
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
  t.equal(new Set(answers.map((a) => JSON.stringify(a))).size, 1, 'every process answers the one record');
  t.equal((await both[0].spot.account.poolFigures('p1')).outgoingMicro, usd(10), 'sent once');
  await t.rejects(send(1, 'p2'), new VenueConflictError('w-once', ['poolId']));

  // p1 and p2 are locked by different calls, so their first inserts of the id race each other.
  const locks = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      both[i % 2]!.spot.account.lockMargin({ poolId: i % 4 < 2 ? 'p1' : 'p2', positionId: 'pos-once', amountMicro: usd(5) }),
    ),
  );
  const taken = locks.filter((l) => l.status === 'fulfilled').map((l) => l.value);
  const winner = taken[0]!.poolId;
  t.ok(
    taken.every((l) => l.poolId === winner),
    'one lock, in one pool',
  );
  t.same(
    locks.filter((l) => l.status === 'rejected').map((l) => (l as PromiseRejectedResult).reason),
    Array(20 - taken.length).fill(new VenueConflictError('pos-once', ['poolId'])),
    "the other pool's calls conflict",
  );
  const inUse = async (poolId: string) => (await both[1].spot.account.poolFigures(poolId)).marginInUseMicro;
  t.same([await inUse(winner), await inUse(winner === 'p1' ? 'p2' : 'p1')], [usd(5), 0], 'locked once');
});
