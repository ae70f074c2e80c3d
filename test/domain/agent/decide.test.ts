import t, { type Test } from 'tap';
import {
  decide,
  evolve,
  initialState,
  isFollowable,
  type AgentCommand,
  type AgentEvent,
  type AgentListed,
  type AgentState,
} from '../../../domain/agent/index.ts';
import { DomainError } from '../../../domain/shared/errors.ts';

const now = new Date('2025-03-01T10:00:00.000Z');
const later = new Date('2025-03-02T10:00:00.000Z');

function listing(overrides: Partial<AgentListed> = {}): Omit<AgentListed, 'listedAt'> {
  return {
    agentId: 'a1',
    developerId: 'dev1',
    name: 'Momentum',
    tags: [],
    monthlyPriceMicroUsd: 0,
    successFeePercent: 10,
    connectedChannels: [],
    membershipGated: false,
    venue: 'SPOT_VENUE',
    minAllocationMicroUsd: 0,
    minTradeMicroUsd: 0,
    minPerTradePercent: 0,
    recommendedPerTradePercent: 10,
    maxConcurrentPositions: 10,
    maxEntriesPerTrade: 3,
    signingSecretCiphertext: 'v1.x.y.z',
    ...overrides,
  };
}

const listed = (o: Partial<AgentListed> = {}): AgentEvent => ({
  type: 'AgentListed',
  data: { ...listing(o), listedAt: now.toISOString() },
});
const review = (status: 'approve' | 'reject' | 'promote') => ({ id: `r-${status}`, status, reviewedAt: now.toISOString(), notes: '' });
const approved: AgentEvent = { type: 'AgentApproved', data: { review: review('approve'), betaStartDate: now.toISOString() } };
const rejected: AgentEvent = { type: 'AgentRejected', data: { review: review('reject') } };
const promoted: AgentEvent = { type: 'AgentPromoted', data: { review: review('promote') } };
const seat = (userId: string): AgentEvent => ({ type: 'BetaSeatTaken', data: { userId, at: now.toISOString() } });

const given = (...events: AgentEvent[]): AgentState => events.reduce(evolve, initialState());

function when(state: AgentState, command: AgentCommand): AgentEvent[] | DomainError {
  try {
    return decide(command, state);
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
}

const approve = (data = {}): AgentCommand => ({ type: 'ApproveAgent', data: { reviewId: 'r1', ...data }, metadata: { now: later } });
const reject = (): AgentCommand => ({ type: 'RejectAgent', data: { reviewId: 'r2', notes: 'no edge' }, metadata: { now: later } });
const promote = (): AgentCommand => ({ type: 'PromoteAgent', data: { reviewId: 'r3' }, metadata: { now: later } });
const takeSeat = (userId: string): AgentCommand => ({ type: 'TakeBetaSeat', data: { userId }, metadata: { now: later } });

function thenError(t: Test, result: AgentEvent[] | DomainError, kind: string, pattern?: RegExp) {
  t.ok(result instanceof DomainError, 'an error');
  if (result instanceof DomainError) {
    t.equal(result.kind, kind);
    if (pattern) t.match(result.message, pattern);
  }
}

t.test('listing a spot agent records it in pending-review', async (t) => {
  const result = when(given(), { type: 'ListAgent', data: listing(), metadata: { now } });
  t.same(result, [listed()]);
  const state = given(...(result as AgentEvent[]));
  t.equal(state.exists && state.betaStatus, 'pending-review');
  t.notOk(isFollowable(state), 'not followable before review');
});

t.test('a perp agent needs maxLeverage from 1 to 100', async (t) => {
  thenError(t, when(given(), { type: 'ListAgent', data: listing({ venue: 'PERP_VENUE' }), metadata: { now } }), 'BAD_REQUEST', /maxLeverage is required/);
  thenError(t, when(given(), { type: 'ListAgent', data: listing({ venue: 'PERP_VENUE', maxLeverage: 101 }), metadata: { now } }), 'BAD_REQUEST');
  t.same(when(given(), { type: 'ListAgent', data: listing({ venue: 'PERP_VENUE', maxLeverage: 20 }), metadata: { now } }), [
    listed({ venue: 'PERP_VENUE', maxLeverage: 20 }),
  ]);
});

t.test('a spot agent refuses maxLeverage', async (t) => {
  thenError(t, when(given(), { type: 'ListAgent', data: listing({ maxLeverage: 5 }), metadata: { now } }), 'BAD_REQUEST', /not allowed for SPOT_VENUE/);
});

t.test('a success fee above 50 percent is refused', async (t) => {
  thenError(t, when(given(), { type: 'ListAgent', data: listing({ successFeePercent: 51 }), metadata: { now } }), 'BAD_REQUEST', /successFeePercent/);
});

t.test('an agent id cannot be listed twice', async (t) => {
  thenError(t, when(given(listed()), { type: 'ListAgent', data: listing(), metadata: { now } }), 'CONFLICT');
});

t.test('approving a pending agent moves it to beta with a review record and a beta start date', async (t) => {
  const result = when(given(listed()), approve({ notes: 'looks sound', safetyScore: 82 }));
  const reviewedAt = later.toISOString();
  t.same(result, [
    {
      type: 'AgentApproved',
      data: { review: { id: 'r1', status: 'approve', reviewedAt, notes: 'looks sound', safetyScore: 82 }, betaStartDate: reviewedAt },
    },
  ]);
  const state = given(listed(), ...(result as AgentEvent[]));
  t.ok(state.exists && state.betaStatus === 'beta' && state.betaStartDate === reviewedAt);
  t.ok(isFollowable(state));
});

t.test('a review without a score records none rather than zero', async (t) => {
  const [event] = when(given(listed()), approve()) as AgentEvent[];
  t.equal(event?.type === 'AgentApproved' && 'safetyScore' in event.data.review, false);
  t.equal(event?.type === 'AgentApproved' && event.data.review.notes, '');
});

t.test('a safety score outside 0..100 is refused', async (t) => {
  thenError(t, when(given(listed()), approve({ safetyScore: 101 })), 'BAD_REQUEST', /safetyScore/);
});

t.test('rejecting a pending agent moves it to rejected', async (t) => {
  const result = when(given(listed()), reject());
  t.same(result, [{ type: 'AgentRejected', data: { review: { id: 'r2', status: 'reject', reviewedAt: later.toISOString(), notes: 'no edge' } } }]);
  const state = given(listed(), ...(result as AgentEvent[]));
  t.equal(state.exists && state.betaStatus, 'rejected');
});

t.test('promoting a beta agent makes it live', async (t) => {
  const result = when(given(listed(), approved), promote());
  t.same(result, [{ type: 'AgentPromoted', data: { review: { id: 'r3', status: 'promote', reviewedAt: later.toISOString(), notes: '' } } }]);
  const state = given(listed(), approved, promoted);
  t.ok(state.exists && state.betaStatus === 'live' && isFollowable(state));
});

t.test('invalid review moves are conflicts', async (t) => {
  thenError(t, when(given(listed()), promote()), 'CONFLICT', /cannot promote an agent in pending-review/);
  thenError(t, when(given(listed(), approved), approve()), 'CONFLICT');
  thenError(t, when(given(listed(), approved), reject()), 'CONFLICT');
  thenError(t, when(given(listed(), rejected), approve()), 'CONFLICT');
  thenError(t, when(given(listed(), approved, promoted), promote()), 'CONFLICT');
});

t.test('reviewing an unknown agent is not found', async (t) => {
  thenError(t, when(given(), approve()), 'NOT_FOUND');
  thenError(t, when(given(), takeSeat('u1')), 'NOT_FOUND');
});

t.test('the developer resubmits a rejected agent for review', async (t) => {
  const resubmit = (developerId: string): AgentCommand => ({ type: 'ResubmitAgent', data: { developerId, notes: 'fixed' }, metadata: { now: later } });
  const result = when(given(listed(), rejected), resubmit('dev1'));
  t.same(result, [{ type: 'AgentResubmitted', data: { resubmittedAt: later.toISOString(), notes: 'fixed' } }]);
  const state = given(listed(), rejected, ...(result as AgentEvent[]));
  t.equal(state.exists && state.betaStatus, 'pending-review');
  thenError(t, when(given(listed()), resubmit('dev1')), 'CONFLICT');
  thenError(t, when(given(listed(), rejected), resubmit('someone-else')), 'NOT_FOUND');
});

t.test('a follower takes a beta seat once', async (t) => {
  const agent = listed({ maxBetaUsers: 2 });
  t.same(when(given(agent, approved), takeSeat('u1')), [{ type: 'BetaSeatTaken', data: { userId: 'u1', at: later.toISOString() } }]);
  t.same(when(given(agent, approved, seat('u1')), takeSeat('u1')), [], 'a second follow of the same user takes no seat');
});

t.test('a full beta refuses another follower', async (t) => {
  const state = given(listed({ maxBetaUsers: 2 }), approved, seat('u1'), seat('u2'));
  thenError(t, when(state, takeSeat('u3')), 'CONFLICT', /all 2 beta seats/);
  t.same(when(state, takeSeat('u2')), [], 'a seat holder still gets in');
});

t.test('a released seat can be taken by someone else', async (t) => {
  const full = given(listed({ maxBetaUsers: 1 }), approved, seat('u1'));
  const released = when(full, { type: 'ReleaseBetaSeat', data: { userId: 'u1' }, metadata: { now: later } }) as AgentEvent[];
  t.same(released, [{ type: 'BetaSeatReleased', data: { userId: 'u1', at: later.toISOString() } }]);
  const after = released.reduce(evolve, full);
  t.same(when(after, takeSeat('u2')), [{ type: 'BetaSeatTaken', data: { userId: 'u2', at: later.toISOString() } }]);
  t.same(when(after, { type: 'ReleaseBetaSeat', data: { userId: 'u1' }, metadata: { now: later } }), [], 'releasing twice is a no-op');
});

t.test('a live agent has no seats to take', async (t) => {
  t.same(when(given(listed({ maxBetaUsers: 1 }), approved, seat('u1'), promoted), takeSeat('u9')), []);
});

t.test('an agent under review or rejected cannot be followed', async (t) => {
  thenError(t, when(given(listed()), takeSeat('u1')), 'CONFLICT', /pending-review/);
  thenError(t, when(given(listed(), rejected), takeSeat('u1')), 'CONFLICT', /rejected/);
});

t.test('the decider refuses names that would mislead marketplace readers', async (t) => {
  const list = (o: Partial<AgentListed>) => when(given(), { type: 'ListAgent', data: listing(o), metadata: { now } });
  thenError(t, list({ name: '\u202eevil' }), 'BAD_REQUEST', /^name must not contain characters that change the text direction/);
  thenError(t, list({ name: '\u200b' }), 'BAD_REQUEST', /^name must not contain invisible/);
  thenError(t, list({ name: '\uff2d\uff4f\uff4d' }), 'BAD_REQUEST', /^name must be NFKC-normalised/);
  thenError(t, list({ tags: ['ok', 'x\u2066y'] }), 'BAD_REQUEST', /^tag must not contain/);
  thenError(t, list({ connectedChannels: [{ channelName: 'a\u200bb' }] }), 'BAD_REQUEST', /^channelName must not contain/);
  t.same(list({ name: 'Café 🚀' }), [listed({ name: 'Café 🚀' })]);
});
