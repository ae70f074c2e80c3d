// Collateral is conserved at both venues: random deposits, withdrawals or reclaims, margin locks and
// releases with zero PnL, some transfers failing, some answers lost and calls repeated, time moving
// by random steps. After every step each pool holds exactly what arrived minus what left
// (equity + outgoing = confirmed in − confirmed out), outgoing is what is still in flight, margin
// in use is the open locks, and money only leaves from what was free just before. The same runs
// on the venues in memory and on the venues keeping their books in PostgreSQL.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { VenueRefusedError, VenueUnavailableError } from '../../../infra/venues/errors.ts';
import type { MicroUsd, Venues, VenueAccount } from '../../../infra/venues/port.ts';
import type { SimulatedVenuesOptions } from '../../../infra/venues/simulated.ts';
import { bookDatabase, simulated, usd, type ManualClock } from './fixtures.ts';

const POOLS = ['p0', 'p1', 'p2'];

type Op =
  | { kind: 'transfer'; way: 'in' | 'out'; pool: number; amount: MicroUsd; fails: boolean; lost: boolean }
  | { kind: 'again'; pick: number; lost: boolean }
  | { kind: 'lock'; pool: number; amount: MicroUsd; lost: boolean }
  | { kind: 'release'; pick: number; lost: boolean }
  | { kind: 'advance'; ms: number };

const amount = fc.oneof(fc.integer({ min: 1, max: usd(100) }), fc.integer({ min: 1, max: 1_000 }));
const pool = fc.nat({ max: POOLS.length - 1 });
// Weighted so that money usually arrives before it is asked back: time moves often and by more
// than the delays, deposits outnumber the other calls.
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('transfer' as const),
      way: fc.constantFrom('in' as const, 'in' as const, 'out' as const),
      pool,
      amount,
      fails: fc.constantFrom(false, false, false, true),
      lost: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('again' as const), pick: fc.nat(), lost: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('lock' as const), pool, amount, lost: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), lost: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4_000 }) }) },
);

/** A transfer as either venue reports it, in the words both share. */
interface Seen {
  way: 'in' | 'out';
  poolId: string;
  requested: MicroUsd;
  amount: MicroUsd;
  state: 'in-flight' | 'confirmed' | 'failed' | 'deferred';
  reason: string | null;
}

/** How a property reaches one venue's transfers and account. */
interface Rail {
  name: string;
  send(v: Venues, id: string, way: 'in' | 'out', poolId: string, amountMicro: MicroUsd): Promise<Seen>;
  status(v: Venues, id: string): Promise<Seen | null>;
  account(v: Venues): VenueAccount;
  /** what an outgoing transfer takes when `free` is free: the whole request or nothing (spot), min (perp) */
  takes(requested: MicroUsd, free: MicroUsd): MicroUsd;
}

const spotRail: Rail = {
  name: 'spot venue (chain transfers)',
  async send(v, id, way, poolId, amountMicro) {
    return seenChain(await v.spot.chain.submit({ transferId: id, direction: way === 'in' ? 'deposit' : 'withdrawal', userId: 'u1', poolId, amountMicro }));
  },
  async status(v, id) {
    const s = await v.spot.chain.status(id);
    return s && seenChain(s);
  },
  account: (v) => v.spot.account,
  takes: (requested, free) => (requested <= free ? requested : 0),
};

function seenChain(s: Awaited<ReturnType<Venues['spot']['chain']['submit']>>): Seen {
  const moved = s.reason === 'INSUFFICIENT_FUNDS' ? 0 : s.amountMicro;
  const state = s.status === 'PENDING' ? 'in-flight' : s.status === 'CONFIRMED' ? 'confirmed' : 'failed';
  return { way: s.direction === 'deposit' ? 'in' : 'out', poolId: s.poolId, requested: s.amountMicro, amount: moved, state, reason: s.reason };
}

const perpRail: Rail = {
  name: 'perp venue (bridge)',
  async send(v, id, way, poolId, amountMicro) {
    return seenBridge(await v.perp.bridge.start({ transferId: id, direction: way === 'in' ? 'deposit' : 'reclaim', poolId, amountMicro }));
  },
  async status(v, id) {
    const s = await v.perp.bridge.status(id);
    return s && seenBridge(s);
  },
  account: (v) => v.perp.account,
  takes: (requested, free) => Math.min(requested, free),
};

function seenBridge(s: Awaited<ReturnType<Venues['perp']['bridge']['start']>>): Seen {
  const states = { BRIDGING: 'in-flight', CONFIRMED: 'confirmed', FAILED: 'failed', RECLAIM_DEFERRED: 'deferred' } as const;
  return {
    way: s.direction === 'deposit' ? 'in' : 'out',
    poolId: s.poolId,
    requested: s.requestedMicro,
    amount: s.amountMicro,
    state: states[s.status],
    reason: s.reason,
  };
}

/** What the random runs went through, so that a generator that stops reaching a path fails the test. */
type Reached = Record<'confirmedIn' | 'confirmedOut' | 'failed' | 'partial' | 'deferred' | 'resumed' | 'refusedLock' | 'released' | 'lost', number>;

interface Request {
  id: string;
  way: 'in' | 'out';
  poolId: string;
  amount: MicroUsd;
}

interface Lock {
  positionId: string;
  poolId: string;
  amount: MicroUsd;
  released: boolean;
}

/** Fresh venues on a clock of their own: in memory, or on emptied books in PostgreSQL. */
type Make = (options: Partial<SimulatedVenuesOptions>) => Promise<{ clock: ManualClock; venues: Venues }>;

/** One random run on fresh venues: the requests and locks made, the transfers made to fail. */
class World {
  readonly failing = new Set<string>();
  readonly requests: Request[] = [];
  readonly locks: Lock[] = [];
  private lose = false;
  clock!: ManualClock;
  venues!: Venues;
  account!: VenueAccount;

  constructor(
    readonly rail: Rail,
    readonly seen: Reached,
  ) {}

  async open(make: Make): Promise<this> {
    ({ clock: this.clock, venues: this.venues } = await make({
      failTransfer: (id) => (this.failing.has(id) ? 'injected' : null),
      fault: () => (this.lose ? 'reply-lost' : null),
    }));
    this.account = this.rail.account(this.venues);
    return this;
  }

  /** The call with its answer lost first when asked (the venue handled it), then repeated. */
  async call<T>(lost: boolean, f: () => Promise<T>): Promise<T> {
    if (lost) {
      this.lose = true;
      await assert.rejects(f(), VenueUnavailableError);
      this.lose = false;
      this.seen.lost++;
    }
    return f();
  }

  async transfer(r: Request, lost: boolean): Promise<void> {
    const before = await this.rail.status(this.venues, r.id);
    const free = (await this.account.poolFigures(r.poolId)).freeMicro;
    const answer = await this.call(lost, () => this.rail.send(this.venues, r.id, r.way, r.poolId, r.amount));
    if (before && before.state !== 'deferred') {
      assert.deepEqual(answer, before, 'a repeat of a started transfer changes nothing');
    } else if (r.way === 'out') {
      assert.equal(answer.amount, this.rail.takes(r.amount, free), 'money leaves only from what was free');
      if (answer.amount > 0 && answer.amount < r.amount) this.seen.partial++;
      if (answer.state === 'deferred') this.seen.deferred++;
      if (before?.state === 'deferred' && answer.state === 'in-flight') this.seen.resumed++;
    }
  }

  async lock(l: Lock, lost: boolean): Promise<void> {
    const free = (await this.account.poolFigures(l.poolId)).freeMicro;
    try {
      await this.call(lost, () => this.account.lockMargin({ poolId: l.poolId, positionId: l.positionId, amountMicro: l.amount }));
      assert.ok(l.amount <= free, 'a lock beyond the free money was taken');
      this.locks.push(l);
    } catch (error) {
      assert.ok(error instanceof VenueRefusedError && error.reason === 'INSUFFICIENT_MARGIN', String(error));
      assert.ok(l.amount > free, 'a lock within the free money was refused');
      this.seen.refusedLock++;
    }
  }

  async release(l: Lock, lost: boolean): Promise<void> {
    await this.call(lost, () => this.account.releaseMargin({ poolId: l.poolId, positionId: l.positionId, pnlMicro: 0 }));
    l.released = true;
    this.seen.released++;
  }

  async step(op: Op, i: number): Promise<void> {
    const pick = <T>(list: T[], n: number): T | undefined => list[n % Math.max(1, list.length)];
    switch (op.kind) {
      case 'advance':
        return this.clock.advance(op.ms);
      case 'transfer': {
        const r = { id: `tr${i}`, way: op.way, poolId: POOLS[op.pool]!, amount: op.amount };
        this.requests.push(r);
        if (op.fails) this.failing.add(r.id);
        return this.transfer(r, op.lost);
      }
      case 'again': {
        const r = pick(this.requests, op.pick);
        return r && this.transfer(r, op.lost);
      }
      case 'lock':
        return this.lock({ positionId: `pos${i}`, poolId: POOLS[op.pool]!, amount: op.amount, released: false }, op.lost);
      case 'release': {
        const l = pick(this.locks, op.pick);
        return l && this.release(l, op.lost);
      }
    }
  }

  /** The books after every step: see the file's opening comment. */
  async check(): Promise<void> {
    const sum = { equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 };
    for (const poolId of POOLS) {
      const moved = await this.moved(poolId);
      const f = await this.account.poolFigures(poolId);
      const locked = this.locks.filter((l) => l.poolId === poolId && !l.released).reduce((a, l) => a + l.amount, 0);
      assert.equal(f.equityMicro + f.outgoingMicro, moved.arrived - moved.left, `${poolId}: equity + outgoing = confirmed in − confirmed out`);
      assert.equal(f.outgoingMicro, moved.inFlightOut, `${poolId}: outgoing is what is in flight`);
      assert.equal(f.marginInUseMicro, locked, `${poolId}: margin in use is the open locks`);
      assert.equal(f.freeMicro, f.equityMicro - f.marginInUseMicro, `${poolId}: with zero PnL nothing is locked beyond equity`);
      sum.equityMicro += f.equityMicro;
      sum.marginInUseMicro += f.marginInUseMicro;
      sum.freeMicro += f.freeMicro;
      sum.outgoingMicro += f.outgoingMicro;
    }
    assert.deepEqual(await this.account.accountFigures(), sum, 'the account is the sum of its pools');
  }

  /** What the venue reports moved for a pool, each transfer checked against how it was asked. */
  private async moved(poolId: string) {
    const moved = { arrived: 0, left: 0, inFlightOut: 0 };
    for (const r of this.requests.filter((r) => r.poolId === poolId)) {
      const s = (await this.rail.status(this.venues, r.id))!;
      assert.ok(s.amount <= s.requested && s.amount >= 0);
      if (s.state === 'failed') assert.ok(this.failing.has(r.id) || s.reason === 'INSUFFICIENT_FUNDS', `${r.id} failed without being made to`);
      if (s.state === 'confirmed') assert.ok(!this.failing.has(r.id), `${r.id} confirmed though made to fail`);
      if (s.state === 'deferred') assert.equal(s.amount, 0);
      if (s.state === 'confirmed' && s.way === 'in') moved.arrived += s.amount;
      if (s.state === 'confirmed' && s.way === 'out') moved.left += s.amount;
      if (s.state === 'in-flight' && s.way === 'out') moved.inFlightOut += s.amount;
    }
    return moved;
  }
}

async function run(rail: Rail, make: Make, ops: Op[], seen: Reached): Promise<void> {
  const world = await new World(rail, seen).open(make);
  for (const [i, op] of ops.entries()) {
    await world.step(op, i);
    await world.check();
  }
  world.clock.advance(60_000);
  await world.check();
  for (const r of world.requests) {
    const s = (await rail.status(world.venues, r.id))!;
    assert.notEqual(s.state, 'in-flight', 'every transfer is final once its delay has passed');
    if (s.state === 'confirmed') seen[r.way === 'in' ? 'confirmedIn' : 'confirmedOut']++;
    if (s.state === 'failed') seen.failed++;
  }
}

const books = await bookDatabase();
t.teardown(() => books.drop());
// Fewer runs on PostgreSQL: each step's check reads every transfer back, a query each.
const stores: Array<{ name: string; make: Make; numRuns: number }> = [
  { name: 'in memory', make: async (options) => simulated(options), numRuns: 150 },
  { name: 'books in PostgreSQL', make: (options) => books.fresh(options), numRuns: 25 },
];

for (const rail of [spotRail, perpRail])
  for (const store of stores) {
    t.test(`${rail.name}, ${store.name}: collateral is conserved across random transfers, locks and releases`, async (t) => {
      const seen: Reached = { confirmedIn: 0, confirmedOut: 0, failed: 0, partial: 0, deferred: 0, resumed: 0, refusedLock: 0, released: 0, lost: 0 };
      const paths = Object.keys(seen).filter((path) => rail === perpRail || !['partial', 'deferred', 'resumed'].includes(path)) as Array<keyof Reached>;
      // Random runs, again while a path is still unreached (a rare one, e.g. a resumed bridge in the PostgreSQL
      // store's fewer runs, was missed by about one seed in a hundred): at most four rounds.
      for (let round = 0; round < 4 && (round === 0 || paths.some((path) => seen[path] === 0)); round++) {
        await fc.assert(
          fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60, size: 'max' }), (ops) => run(rail, store.make, ops, seen)),
          { numRuns: store.numRuns },
        );
      }
      for (const path of paths) t.ok(seen[path] > 0, `the runs reached ${path} (${seen[path]})`);
    });
  }
