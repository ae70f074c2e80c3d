// Beta seats split over shard streams: each shard is exact on its own share.
import t from 'tap';
import { homeShard, seatShardDecider, shardCapacities, type SeatCommand, type SeatEvent } from '../../../domain/agent/seats.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-03-02T10:00:00.000Z');
const { given } = scenario(seatShardDecider);
const take = (userId: string, capacity = 2): SeatCommand => ({ type: 'TakeBetaSeat', data: { agentId: 'a1', userId, capacity }, metadata: at(now) });
const release = (userId: string): SeatCommand => ({ type: 'ReleaseBetaSeat', data: { agentId: 'a1', userId }, metadata: at(now) });
const taken = (userId: string): SeatEvent => ({ type: 'BetaSeatTaken', data: { agentId: 'a1', userId, at: now.toISOString() } });
const released = (userId: string): SeatEvent => ({ type: 'BetaSeatReleased', data: { agentId: 'a1', userId, at: now.toISOString() } });

t.test('a follower takes a seat of a shard once', async (t) => {
  given([]).when(take('u1')).then(t, [taken('u1')]);
  given([taken('u1')]).when(take('u1')).then(t, [], 'a second follow of the same user takes no seat');
});

t.test('a full shard refuses another follower, and still lets a holder in', async (t) => {
  given([taken('u1'), taken('u2')]).when(take('u3')).thenRefused(t, 'BETA_FULL');
  given([taken('u1'), taken('u2')]).when(take('u2')).then(t, []);
});

t.test('a released seat can be taken by someone else; releasing twice is a no-op', async (t) => {
  given([taken('u1')]).when(release('u1')).then(t, [released('u1')]);
  given([taken('u1'), released('u1')]).when(take('u2', 1)).then(t, [taken('u2')]);
  given([taken('u1'), released('u1')]).when(release('u1')).then(t, []);
});

t.test('the seats of a beta split over the shards add up to maxBetaUsers exactly', async (t) => {
  for (const max of [1, 2, 15, 16, 17, 100, 1000]) {
    const caps = shardCapacities(max);
    t.equal(caps.reduce((a, b) => a + b, 0), max, `${max} seats`);
    t.ok(caps.every((c) => c >= 1) && Math.max(...caps) - Math.min(...caps) <= 1, `${max}: even, no empty shard`);
    t.equal(caps.length, Math.min(16, max));
  }
  t.ok(shardCapacities(undefined).every((c) => c === Infinity), 'an uncapped beta counts seats without a limit');
});

t.test('a user always starts from the same shard', async (t) => {
  t.equal(homeShard('user-1', 16), homeShard('user-1', 16));
  const homes = new Set(Array.from({ length: 200 }, (_, i) => homeShard(`user-${i}`, 16)));
  t.equal(homes.size, 16, 'users spread over every shard');
});
