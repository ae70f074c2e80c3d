// Which beta seat claims go back: never one a pool is open with or a debit waits to open a pool
// with; a spent one, the caller's own and one past the grace period do; a seat taken before
// claims goes back as it did then.
import t from 'tap';
import { claimsToRelease, type ClaimFacts } from '../../../domain/agent/seat-claims.ts';
import { UNNAMED_CLAIM, type SeatClaim } from '../../../domain/agent/seats.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import type { PoolEvent } from '../../../domain/pool/events.ts';
import { endpointKey, type WalletPaidPlan } from '../../../domain/transfer/plan.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import type { WalletEvent } from '../../../domain/wallet/events.ts';
import { settings, terms } from '../pool/fixtures.ts';

const now = '2025-03-02T10:00:00.000Z';
const old = '2025-03-02T09:00:00.000Z';
const pool = { kind: 'pool' as const, userId: 'u1', agentId: 'a1', walletContext: 'virtual' as const };
const key = endpointKey(pool);
const claim = (claimId: string, at = now): SeatClaim => ({ claimId, at });
const followedWith = (seatClaim?: string): PoolEvent => ({
  type: 'AgentFollowed',
  data: {
    ...settings,
    agentId: 'a1',
    userId: 'u1',
    walletContext: 'virtual',
    poolId: 'u1.a1.virtual',
    walletMode: 'VIRTUAL',
    terms,
    subscribedAt: now,
    ...(seatClaim ? { seatClaim } : {}),
  },
});
const closed: PoolEvent = { type: 'PoolClosed', data: { at: now } };
const debit = (transferId: string): WalletEvent => {
  const transfer: WalletPaidPlan = { transferId, amountMicro: 5, from: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' }, to: pool };
  return { type: 'WalletDebited', data: { transfer } };
};
const facts = (poolEvents: PoolEvent[], walletEvents: WalletEvent[] = [], own: string[] = []): ClaimFacts => ({
  pools: [{ key, state: poolEvents.reduce(poolDecider.evolve, poolDecider.initialState()) }],
  wallet: walletEvents.reduce(walletDecider.evolve, walletDecider.initialState()),
  own,
  graceEndsBefore: Date.parse('2025-03-02T09:30:00.000Z'),
});

t.test('a claim a pool is open with is kept, whoever asks', async (t) => {
  t.same(claimsToRelease([claim('p#add-1@a', old)], facts([followedWith('p#add-1@a')], [], ['p#add-1@a'])), []);
});

t.test('a claim whose debit waits to open the pool is kept: the recovery will open it', async (t) => {
  t.same(claimsToRelease([claim('p#add-2@a', old)], facts([], [debit('p#add-2')], ['p#add-2@a'])), []);
  t.same(
    claimsToRelease(
      [claim('p#add-2@a', old)],
      facts([], [debit('p#add-2'), { type: 'WalletRefunded', data: { transferId: 'p#add-2', walletContext: 'virtual', amountMicro: 5 } }]),
    ),
    ['p#add-2@a'],
    'given back: it opens nothing',
  );
});

t.test("a stopped opening's claim is spent and goes back at once; a follow in flight's young claim stays", async (t) => {
  const held = [claim('p#add-1@stopped'), claim('p#add-2@in-flight')];
  t.same(claimsToRelease(held, facts([followedWith('p#add-1@stopped'), closed])), ['p#add-1@stopped']);
});

t.test("the caller's own claims go back at once; others only past the grace period", async (t) => {
  const held = [claim('p#add-3@mine'), claim('p#add-3@another'), claim('p#add-1@died', old)];
  t.same(claimsToRelease(held, facts([], [], ['p#add-3@mine'])), ['p#add-3@mine', 'p#add-1@died']);
});

t.test('a seat taken before claims goes back when no pool opened without a claim is open and no debit waits', async (t) => {
  t.same(claimsToRelease([claim(UNNAMED_CLAIM, old)], facts([followedWith()])), []);
  t.same(claimsToRelease([claim(UNNAMED_CLAIM, old)], facts([], [debit('p#add-1')])), []);
  t.same(claimsToRelease([claim(UNNAMED_CLAIM, now)], facts([followedWith(), closed])), [UNNAMED_CLAIM]);
  t.same(
    claimsToRelease([claim(UNNAMED_CLAIM, now)], facts([followedWith('p#add-1@new')])),
    [UNNAMED_CLAIM],
    'a pool opened with a claim of its own does not keep it',
  );
});
