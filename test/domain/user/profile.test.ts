import t from 'tap';
import { userDecider, type UserCommand } from '../../../domain/user/decide.ts';
import type { UserEvent } from '../../../domain/user/events.ts';
import { MAX_PINS } from '../../../domain/user/profile.ts';
import type { RegisteredUser } from '../../../domain/user/state.ts';
import { at, scenario } from '../../support/given-when-then.ts';

// The guide agent, interests and pinned agents of the user aggregate, at their boundaries.
const { given } = scenario(userDecider);

const now = new Date('2025-02-01T00:00:00.000Z');
const iso = now.toISOString();
const userId = '22222222-2222-5222-8222-222222222222';
const registered: UserEvent = {
  type: 'UserRegistered',
  data: {
    userId,
    email: 'pia@example.com',
    username: 'pia',
    role: 'user',
    tier: 'free',
    virtualWalletMode: true,
    languageCode: 'en',
    registeredAt: iso,
    signup: {},
  },
};
const command = (c: Omit<UserCommand, 'metadata'>) => ({ ...c, metadata: at(now) }) as UserCommand;
const guide = (guideAgentId: string, agentFollowable = true) => command({ type: 'ChooseGuideAgent', data: { guideAgentId, agentFollowable } });
const interests = (list: unknown) => command({ type: 'ReplaceInterests', data: { interests: list as string[] } });
const pin = (agentId: string, agentFollowable = true) => command({ type: 'PinAgent', data: { agentId, agentFollowable } });
const unpin = (agentId: string, agentFollowable = true) => command({ type: 'UnpinAgent', data: { agentId, agentFollowable } });
const pinned = (agentId: string): UserEvent => ({ type: 'AgentPinned', data: { userId, agentId, pinnedAt: iso } });
const pinsUpTo = (n: number) => Array.from({ length: n }, (_, i) => pinned(`agent-${i + 1}`));
function registeredAfter(events: UserEvent[], c: UserCommand): RegisteredUser {
  const state = given(events).when(c).after();
  if (state.status !== 'registered') throw new Error('the user is registered in every scenario');
  return state;
}
const replaced = (list: string[]): UserEvent => ({ type: 'InterestsReplaced', data: { userId, interests: list, replacedAt: iso } });

t.test('a followable agent becomes the guide; the same one again records nothing', async (t) => {
  const chosen: UserEvent = { type: 'GuideAgentChosen', data: { userId, guideAgentId: 'a1', chosenAt: iso } };
  given([registered]).when(guide('a1')).then(t, [chosen]);
  given([registered, chosen]).when(guide('a1')).then(t, []);
  t.equal(registeredAfter([registered, chosen], guide('a2')).guideAgentId, 'a2', 'a later pick replaces it');
});

t.test('an agent that is not followable (unknown, pending, rejected, deleted) cannot be the guide', async (t) => {
  given([registered]).when(guide('gone', false)).thenRefused(t, 'AGENT_NOT_FOUND');
});

t.test('the profile commands of an unregistered user are 404', async (t) => {
  for (const c of [guide('a1'), interests(['x']), pin('a1'), unpin('a1')]) given([]).when(c).thenRefused(t, 'USER_NOT_FOUND');
});

t.test('interests are trimmed, kept distinct ignoring case (first spelling wins) and replace the list', async (t) => {
  given([registered])
    .when(interests(['  Solana ', 'DeFi', 'solana', 'defi', 'Memes']))
    .then(t, [replaced(['Solana', 'DeFi', 'Memes'])]);
  given([registered, replaced(['old'])])
    .when(interests(['new']))
    .then(t, [replaced(['new'])]);
});

t.test('the same interests again record nothing; another order or spelling is a change', async (t) => {
  given([registered, replaced(['a', 'b'])])
    .when(interests([' a', 'b ', 'A']))
    .then(t, []);
  given([registered, replaced(['a', 'b'])])
    .when(interests(['b', 'a']))
    .then(t, [replaced(['b', 'a'])]);
  given([registered, replaced(['a', 'b'])])
    .when(interests(['A', 'b']))
    .then(t, [replaced(['A', 'b'])]);
});

t.test('20 interests are accepted, 21 refused; none refused', async (t) => {
  const twenty = Array.from({ length: 20 }, (_, i) => `topic ${i}`);
  given([registered])
    .when(interests(twenty))
    .then(t, [replaced(twenty)]);
  given([registered])
    .when(interests([...twenty, 'one more']))
    .thenRefused(t, 'VALIDATION_FAILED', /1 to 20 items/);
  given([registered])
    .when(interests([]))
    .thenRefused(t, 'VALIDATION_FAILED', /1 to 20 items/);
});

t.test('an interest of 40 characters is accepted, 41 refused, blank refused; 40 once trimmed is accepted', async (t) => {
  given([registered])
    .when(interests(['x'.repeat(40)]))
    .then(t, [replaced(['x'.repeat(40)])]);
  given([registered])
    .when(interests([` ${'x'.repeat(40)} `]))
    .then(t, [replaced(['x'.repeat(40)])]);
  given([registered])
    .when(interests(['x'.repeat(41)]))
    .thenRefused(t, 'VALIDATION_FAILED', /1 to 40 characters/);
  given([registered])
    .when(interests(['   ']))
    .thenRefused(t, 'VALIDATION_FAILED', /1 to 40 characters/);
  given([registered])
    .when(interests([42]))
    .thenRefused(t, 'VALIDATION_FAILED');
});

t.test('pinning appends in order; pinning a pinned agent records nothing', async (t) => {
  given([registered])
    .when(pin('a1'))
    .then(t, [pinned('a1')]);
  given([registered, pinned('a1')])
    .when(pin('a1'))
    .then(t, []);
  t.same(registeredAfter([registered, pinned('a1')], pin('a2')).pinnedAgentIds, ['a1', 'a2']);
});

t.test(`the ${MAX_PINS}th pin is accepted, the ${MAX_PINS + 1}st refused; a pinned one is still answered unchanged at the limit`, async (t) => {
  t.equal(MAX_PINS, 20);
  given([registered, ...pinsUpTo(19)])
    .when(pin('agent-20'))
    .then(t, [pinned('agent-20')]);
  const refusal = given([registered, ...pinsUpTo(20)])
    .when(pin('agent-21'))
    .thenRefused(t, 'TOO_MANY_PINS');
  t.same(refusal?.details, { maxPins: 20 });
  given([registered, ...pinsUpTo(20)])
    .when(pin('agent-7'))
    .then(t, []);
});

t.test('an agent that is not followable cannot be pinned', async (t) => {
  given([registered]).when(pin('gone', false)).thenRefused(t, 'AGENT_NOT_FOUND');
});

t.test('unpinning removes the agent and frees a place; an agent not pinned answers unchanged', async (t) => {
  const unpinned: UserEvent = { type: 'AgentUnpinned', data: { userId, agentId: 'agent-3', unpinnedAt: iso } };
  given([registered, ...pinsUpTo(20)])
    .when(unpin('agent-3'))
    .then(t, [unpinned]);
  given([registered, ...pinsUpTo(20), unpinned])
    .when(pin('agent-21'))
    .then(t, [pinned('agent-21')]);
  given([registered, pinned('a1')])
    .when(unpin('a2'))
    .then(t, []);
});

t.test('a pinned agent deleted since can be unpinned; an unknown agent not pinned is 404', async (t) => {
  given([registered, pinned('a1')])
    .when(unpin('a1', false))
    .then(t, [{ type: 'AgentUnpinned', data: { userId, agentId: 'a1', unpinnedAt: iso } }]);
  given([registered, pinned('a1')])
    .when(unpin('nope', false))
    .thenRefused(t, 'AGENT_NOT_FOUND');
});
