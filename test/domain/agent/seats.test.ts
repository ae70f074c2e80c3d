// Beta seats split over shard streams: each shard is exact on its own share; a seat is held by
// claims, and goes back with the last of them.
import t from 'tap';
import { homeShard, seatShardDecider, shardCapacities, UNNAMED_CLAIM, type SeatCommand, type SeatEvent } from '../../../domain/agent/seats.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-03-02T10:00:00.000Z');
const { given } = scenario(seatShardDecider);
const claimOf = (userId: string) => `pool-of-${userId}#add-1@n`;
const take = (userId: string, capacity = 2, claimId = claimOf(userId)): SeatCommand => ({
  type: 'TakeBetaSeat',
  data: { agentId: 'a1', userId, capacity, claimId },
  metadata: at(now),
});
const release = (userId: string, claimId = claimOf(userId)): SeatCommand => ({
  type: 'ReleaseBetaSeat',
  data: { agentId: 'a1', userId, claimId },
  metadata: at(now),
});
const seat = (userId: string, claimId = claimOf(userId)) => ({ agentId: 'a1', userId, at: now.toISOString(), claimId });
const taken = (userId: string, claimId?: string): SeatEvent => ({ type: 'BetaSeatTaken', data: seat(userId, claimId) });
const released = (userId: string, claimId?: string): SeatEvent => ({ type: 'BetaSeatReleased', data: seat(userId, claimId) });
const added = (userId: string, claimId: string): SeatEvent => ({ type: 'BetaSeatClaimAdded', data: seat(userId, claimId) });
const dropped = (userId: string, claimId: string): SeatEvent => ({ type: 'BetaSeatClaimReleased', data: seat(userId, claimId) });
/** As written before seats were held by claims. */
const unnamed = (type: 'BetaSeatTaken' | 'BetaSeatReleased', userId: string): SeatEvent => ({ type, data: { agentId: 'a1', userId, at: now.toISOString() } });

t.test('a follower takes a seat of a shard once', async (t) => {
  given([])
    .when(take('u1'))
    .then(t, [taken('u1')]);
  given([taken('u1')])
    .when(take('u1'))
    .then(t, [], 'the same claim again takes nothing');
});

t.test('a full shard refuses another follower, and still lets a holder add a claim', async (t) => {
  given([taken('u1'), taken('u2')])
    .when(take('u3'))
    .thenRefused(t, 'BETA_FULL');
  given([taken('u1'), taken('u2')])
    .when(take('u2', 2, 'second'))
    .then(t, [added('u2', 'second')], 'a holder adds a claim to a full shard');
  const after = given([taken('u1'), taken('u2')])
    .when(take('u2', 2, 'second'))
    .after();
  t.same(after.holders, ['u1', 'u2'], 'still two holders: seats count users, not claims');
});

t.test('a released seat can be taken by someone else; releasing twice is a no-op', async (t) => {
  given([taken('u1')])
    .when(release('u1'))
    .then(t, [released('u1')]);
  given([taken('u1'), released('u1')])
    .when(take('u2', 1))
    .then(t, [taken('u2')]);
  given([taken('u1'), released('u1')])
    .when(release('u1'))
    .then(t, []);
});

t.test('a seat stays held while any claim holds it: giving one back keeps it, the last frees it', async (t) => {
  const twoClaims = [taken('u1', 'stop-me'), added('u1', 'follow-in-flight')];
  given(twoClaims)
    .when(release('u1', 'stop-me'))
    .then(t, [dropped('u1', 'stop-me')], "the stop gives back its opening's claim only");
  const kept = given(twoClaims).when(release('u1', 'stop-me')).after();
  t.same(kept.holders, ['u1'], 'the follow in flight keeps the seat');
  given(twoClaims).when(take('u2', 1)).thenRefused(t, 'BETA_FULL', undefined);
  given([...twoClaims, dropped('u1', 'stop-me')])
    .when(take('u2', 1))
    .thenRefused(t, 'BETA_FULL', undefined);
  given([...twoClaims, dropped('u1', 'stop-me')])
    .when(release('u1', 'follow-in-flight'))
    .then(t, [released('u1', 'follow-in-flight')], 'the last claim frees the seat');
  given(twoClaims).when(release('u1', 'never-taken')).then(t, [], 'a claim not held is a no-op');
});

t.test('a claim taken after the seat was freed needs room again', async (t) => {
  const freed = [taken('u1', 'old'), released('u1', 'old'), taken('u2')];
  given(freed)
    .when(take('u1', 1, 'new'))
    .thenRefused(t, 'BETA_FULL', undefined);
  given(freed)
    .when(take('u1', 2, 'new'))
    .then(t, [taken('u1', 'new')]);
});

t.test('events written before claims fold as they did: one unnamed claim, released whole', async (t) => {
  const old = given([unnamed('BetaSeatTaken', 'u1'), unnamed('BetaSeatTaken', 'u2'), unnamed('BetaSeatReleased', 'u1')]).state;
  t.same(old.holders, ['u2']);
  t.same(old.claims.get('u2'), [{ claimId: UNNAMED_CLAIM, at: now.toISOString() }]);
  given([unnamed('BetaSeatTaken', 'u1')])
    .when(release('u1', UNNAMED_CLAIM))
    .then(t, [released('u1', UNNAMED_CLAIM)]);
  given([unnamed('BetaSeatTaken', 'u1')])
    .when(take('u1', 1, 'new'))
    .then(t, [added('u1', 'new')], 'an old holder adds a claim without a second seat');
});

t.test('the seats of a beta split over the shards add up to maxBetaUsers exactly', async (t) => {
  for (const max of [1, 2, 15, 16, 17, 100, 1000]) {
    const caps = shardCapacities(max);
    t.equal(
      caps.reduce((a, b) => a + b, 0),
      max,
      `${max} seats`,
    );
    t.ok(caps.every((c) => c >= 1) && Math.max(...caps) - Math.min(...caps) <= 1, `${max}: even, no empty shard`);
    t.equal(caps.length, Math.min(16, max));
  }
  t.ok(
    shardCapacities(undefined).every((c) => c === Infinity),
    'an uncapped beta counts seats without a limit',
  );
});

t.test('a user always starts from the same shard', async (t) => {
  t.equal(homeShard('user-1', 16), homeShard('user-1', 16));
  const homes = new Set(Array.from({ length: 200 }, (_, i) => homeShard(`user-${i}`, 16)));
  t.equal(homes.size, 16, 'users spread over every shard');
});
