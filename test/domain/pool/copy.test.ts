// The pool state's copies (domain/pool/copy.ts) are what a spread made before them: the same
// fields, present or absent alike, with the same values. The arbitraries name every field of the
// states (the `satisfies` below), so a field added to a state fails to compile here until it is drawn.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { changed, changedLedger } from '../../../domain/pool/copy.ts';
import type { LedgerInputs } from '../../../domain/pool/ledger.ts';
import type { FollowedPool, PoolState, UnfollowedPool } from '../../../domain/pool/state.ts';
import { PersistentMap } from '../../../domain/shared/persistent-map.ts';
import { settings, terms } from './fixtures.ts';

type Arbitraries<T> = { [K in keyof Required<T>]: fc.Arbitrary<T[K]> };

const micro = fc.integer({ min: -1e12, max: 1e12 });
const ids = fc.string({ minLength: 1, maxLength: 8 });
const ledgerFields = {
  confirmedIn: micro,
  confirmedOut: micro,
  realized: micro,
  unrealized: micro,
  locked: micro,
  pendingIn: micro,
  pendingOut: micro,
  feesCharged: micro,
} satisfies Arbitraries<LedgerInputs>;
const plain = { noNullPrototype: true };
const ledger = fc.record(ledgerFields, plain);
const persistent = <V>(value: fc.Arbitrary<V>) =>
  fc.array(fc.tuple(ids, value), { maxLength: 4 }).map((entries) => entries.reduce((map, [k, v]) => map.set(k, v), PersistentMap.empty<V>()));
/** The id-keyed records as the fold keeps them: objects without a prototype. */
const dictionary = <V>(value: fc.Arbitrary<V>) =>
  fc.dictionary(ids, value, { maxKeys: 4 }).map((r) => Object.assign(Object.create(null) as Record<string, V>, r));

const book = {
  transfers: persistent(fc.constantFrom('credited', 'rejected', 'pending', 'paid', 'failed') as fc.Arbitrary<'credited'>),
  pending: dictionary(fc.record({ direction: fc.constantFrom('in', 'out') as fc.Arbitrary<'in' | 'out'>, amountMicro: micro }, plain)),
  trades: persistent(fc.constantFrom('open', 'closed', 'refused', 'simulated') as fc.Arbitrary<'open'>),
  settlements: fc.nat(),
  feesSettledMicro: micro,
  payouts: persistent(micro),
  closedClaims: fc.array(ids, { maxLength: 3 }),
  openings: fc.nat(),
};
const followedFields = {
  ...book,
  followed: fc.constant(true as const),
  poolId: ids,
  agentId: ids,
  userId: ids,
  walletContext: fc.constantFrom('virtual', 'real') as fc.Arbitrary<'virtual' | 'real'>,
  settings: fc.constant(settings),
  terms: fc.constant(terms),
  subscribedAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  updatedAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  ledger,
  openTrades: dictionary(
    fc.record(
      {
        marginMicro: micro,
        unrealizedMicro: micro,
        token: fc.option(ids),
        side: fc.option(fc.constantFrom('long', 'short', 'buy') as fc.Arbitrary<'long'>),
        signalId: fc.option(ids),
        openedAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      },
      plain,
    ),
  ),
  day: fc.record(
    { date: fc.constantFrom('2025-01-01', '2025-01-02'), startEquityMicro: micro, flowsMicro: micro, opens: fc.nat(), lastOpenAt: fc.option(ids) },
    plain,
  ),
  bridge: fc.option(fc.record({ transferId: ids, status: fc.constant('BRIDGING' as const), transactionId: fc.option(ids) }, plain)),
  reconciliation: fc.option(
    fc.record(
      {
        status: fc.constantFrom('IN_SYNC', 'GAP', 'UNKNOWN') as fc.Arbitrary<'GAP'>,
        venueEquityMicro: fc.option(micro),
        venueFreeMarginMicro: fc.option(micro),
        gapMicro: fc.option(micro),
      },
      plain,
    ),
  ),
  lastFailedTransfer: fc.option(
    fc.record(
      {
        transferId: ids,
        direction: fc.constantFrom('in', 'out') as fc.Arbitrary<'in' | 'out'>,
        amountMicro: micro,
        reason: ids,
        at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      },
      plain,
    ),
  ),
  seatClaim: ids,
  awaitingGoLive: fc.constant(true as const),
} satisfies Arbitraries<FollowedPool>;
const unfollowedFields = {
  ...book,
  followed: fc.constant(false as const),
  closedAt: fc.option(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
  residueMicro: micro,
} satisfies Arbitraries<UnfollowedPool>;

/** A state with each optional field present or not, its fields in any order (states read back from JSON have another). */
const optional = ['feesSettledMicro', 'residueMicro', 'day', 'lastFailedTransfer', 'seatClaim', 'closedClaims', 'openings', 'awaitingGoLive'];
const stateOf = <T extends PoolState>(fields: Arbitraries<T>): fc.Arbitrary<T> =>
  fc
    .tuple(fc.record(fields, { ...plain, requiredKeys: Object.keys(fields).filter((k) => !optional.includes(k)) as Array<keyof T> }), fc.boolean())
    .map(([s, reversed]) => (reversed ? Object.fromEntries(Object.entries(s).reverse()) : s) as T);
const state: fc.Arbitrary<PoolState> = fc.oneof(stateOf<FollowedPool>(followedFields), stateOf<UnfollowedPool>(unfollowedFields));

t.test('a copy of a state is its spread: the same fields, present or absent alike, and values', async (t) => {
  fc.assert(
    fc.property(state, (s) => {
      const copy = changed(s);
      assert.notEqual(copy, s);
      assert.deepEqual(copy, { ...s });
      assert.deepEqual(Object.keys(copy).sort(), Object.keys(s).sort());
    }),
    { numRuns: 500 },
  );
  t.pass('500 states copied');
});

t.test('a changed state is the spread of the state and the changes, the state left as it was', async (t) => {
  const followed = fc.record(followedFields, plain);
  const change = followed.chain((f) => fc.subarray(Object.keys(f) as Array<keyof FollowedPool>).map((keys) => Object.fromEntries(keys.map((k) => [k, f[k]]))));
  fc.assert(
    fc.property(stateOf<FollowedPool>(followedFields), change, change, (s, first, second) => {
      const before = { ...s };
      assert.deepEqual(changed(s, first, second), { ...s, ...first, ...second });
      assert.deepEqual(s, before);
    }),
    { numRuns: 300 },
  );
  t.pass('300 states changed');
});

t.test('a changed ledger is the spread of the ledger and the change', async (t) => {
  const change = fc.record(ledgerFields, { ...plain, requiredKeys: [] });
  fc.assert(
    fc.property(ledger, change, (l, c) => {
      const before = { ...l };
      assert.deepEqual(changedLedger(l, c), { ...l, ...c });
      assert.deepEqual(l, before);
    }),
    { numRuns: 300 },
  );
  t.pass('300 ledgers changed');
});
