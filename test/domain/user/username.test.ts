import t from 'tap';
import type { UsernameEvent } from '../../../domain/user/events.ts';
import { decideUsername, evolveUsername, initialUsernameState, type UsernameCommand } from '../../../domain/user/username.ts';

const now = new Date('2025-01-01T00:00:00.000Z');
const state = (events: UsernameEvent[]) => events.reduce(evolveUsername, initialUsernameState());
const reserve = (userId: string): UsernameCommand => ({ type: 'ReserveUsername', data: { username: 'Ann', userId }, now });
const release = (userId: string): UsernameCommand => ({ type: 'ReleaseUsername', data: { username: 'Ann', userId }, now });
const reserved = (userId: string): UsernameEvent => ({ type: 'UsernameReserved', data: { username: 'Ann', userId, reservedAt: now.toISOString() } });
const released = (userId: string): UsernameEvent => ({ type: 'UsernameReleased', data: { username: 'Ann', userId, releasedAt: now.toISOString() } });

t.test('a free username is reserved for the user who asks', async (t) => {
  t.same(decideUsername(reserve('u1'), state([])), [reserved('u1')]);
});

t.test('a username held by another user is refused with 400', async (t) => {
  t.throws(
    () => decideUsername(reserve('u2'), state([reserved('u1')])),
    { name: 'DomainError', kind: 'BAD_REQUEST' },
  );
});

t.test('reserving a name one already holds changes nothing', async (t) => {
  t.same(decideUsername(reserve('u1'), state([reserved('u1')])), []);
});

t.test('a released name can be taken by someone else; only its owner releases it', async (t) => {
  t.same(decideUsername(release('u2'), state([reserved('u1')])), []);
  t.same(decideUsername(release('u1'), state([reserved('u1')])), [released('u1')]);
  t.same(decideUsername(reserve('u2'), state([reserved('u1'), released('u1')])), [reserved('u2')]);
});
