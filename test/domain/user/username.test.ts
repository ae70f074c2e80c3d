import t from 'tap';
import type { UsernameEvent } from '../../../domain/user/events.ts';
import { usernameDecider, type UsernameCommand } from '../../../domain/user/username.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-01-01T00:00:00.000Z');
const { given } = scenario(usernameDecider);
const reserve = (userId: string): UsernameCommand => ({ type: 'ReserveUsername', data: { username: 'Ann', userId }, metadata: at(now) });
const release = (userId: string): UsernameCommand => ({ type: 'ReleaseUsername', data: { username: 'Ann', userId }, metadata: at(now) });
const reserved = (userId: string): UsernameEvent => ({ type: 'UsernameReserved', data: { username: 'Ann', userId, reservedAt: now.toISOString() } });
const released = (userId: string): UsernameEvent => ({ type: 'UsernameReleased', data: { username: 'Ann', userId, releasedAt: now.toISOString() } });

t.test('a free username is reserved for the user who asks', async (t) => {
  given([])
    .when(reserve('u1'))
    .then(t, [reserved('u1')]);
});

t.test('a username held by another user is refused with 400', async (t) => {
  given([reserved('u1')])
    .when(reserve('u2'))
    .thenRefused(t, 'USERNAME_TAKEN');
});

t.test('reserving a name one already holds changes nothing', async (t) => {
  given([reserved('u1')])
    .when(reserve('u1'))
    .then(t, []);
});

t.test('a released name can be taken by someone else; only its owner releases it', async (t) => {
  given([reserved('u1')])
    .when(release('u2'))
    .then(t, []);
  given([reserved('u1')])
    .when(release('u1'))
    .then(t, [released('u1')]);
  given([reserved('u1'), released('u1')])
    .when(reserve('u2'))
    .then(t, [reserved('u2')]);
});
