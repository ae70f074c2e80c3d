import t from 'tap';
import { agentDecider, isFollowable, type AgentCommand, type AgentEvent, type AgentListed } from '../../../domain/agent/index.ts';
import { agentListing } from '../../support/agent-events.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-03-01T10:00:00.000Z');
const later = new Date('2025-03-02T10:00:00.000Z');

const listing = agentListing;

const listed = (o: Partial<AgentListed> = {}): AgentEvent => ({
  type: 'AgentListed',
  data: { ...listing(o), listedAt: now.toISOString() },
});
const review = (status: 'approve' | 'reject' | 'promote') => ({ id: `r-${status}`, status, reviewedAt: now.toISOString(), notes: '' });
const approved: AgentEvent = { type: 'AgentApproved', data: { review: review('approve'), betaStartDate: now.toISOString() } };
const rejected: AgentEvent = { type: 'AgentRejected', data: { review: review('reject') } };
const promoted: AgentEvent = { type: 'AgentPromoted', data: { review: review('promote') } };

const { given } = scenario(agentDecider);
const list = (data = listing()): AgentCommand => ({ type: 'ListAgent', data, metadata: at(now) });
const approve = (data = {}): AgentCommand => ({ type: 'ApproveAgent', data: { reviewId: 'r1', ...data }, metadata: at(later) });
const reject = (): AgentCommand => ({ type: 'RejectAgent', data: { reviewId: 'r2', notes: 'no edge' }, metadata: at(later) });
const promote = (): AgentCommand => ({ type: 'PromoteAgent', data: { reviewId: 'r3' }, metadata: at(later) });

t.test('listing a spot agent records it in pending-review', async (t) => {
  const listing_ = given().when(list());
  listing_.then(t, [listed()]);
  const state = listing_.after();
  t.equal(state.exists && state.betaStatus, 'pending-review');
  t.notOk(isFollowable(state), 'not followable before review');
});

t.test('a perp agent needs maxLeverage from 1 to 100', async (t) => {
  given()
    .when(list(listing({ venue: 'PERP_VENUE' })))
    .thenRefused(t, 'VALIDATION_FAILED', /maxLeverage is required/);
  given()
    .when(list(listing({ venue: 'PERP_VENUE', maxLeverage: 101 })))
    .thenRefused(t, 'VALIDATION_FAILED');
  given()
    .when(list(listing({ venue: 'PERP_VENUE', maxLeverage: 20 })))
    .then(t, [listed({ venue: 'PERP_VENUE', maxLeverage: 20 })]);
});

t.test('a spot agent refuses maxLeverage', async (t) => {
  given()
    .when(list(listing({ maxLeverage: 5 })))
    .thenRefused(t, 'VALIDATION_FAILED', /not allowed for SPOT_VENUE/);
});

t.test('a success fee above 50 percent is refused', async (t) => {
  given()
    .when(list(listing({ successFeePercent: 51 })))
    .thenRefused(t, 'VALIDATION_FAILED', /successFeePercent/);
});

t.test('an agent id cannot be listed twice', async (t) => {
  given([listed()]).when(list()).thenRefused(t, 'ALREADY_EXISTS');
});

t.test('approving a pending agent moves it to beta with a review record and a beta start date', async (t) => {
  const approval = given([listed()]).when(approve({ notes: 'looks sound', safetyScore: 82 }));
  const reviewedAt = later.toISOString();
  approval.then(t, [
    {
      type: 'AgentApproved',
      data: { review: { id: 'r1', status: 'approve', reviewedAt, notes: 'looks sound', safetyScore: 82 }, betaStartDate: reviewedAt },
    },
  ]);
  const state = approval.after();
  t.ok(state.exists && state.betaStatus === 'beta' && state.betaStartDate === reviewedAt);
  t.ok(isFollowable(state));
});

t.test('a review without a score records none rather than zero', async (t) => {
  const [event] = given([listed()]).when(approve()).events();
  t.equal(event?.type === 'AgentApproved' && 'safetyScore' in event.data.review, false);
  t.equal(event?.type === 'AgentApproved' && event.data.review.notes, '');
});

t.test('a safety score outside 0..100 is refused', async (t) => {
  given([listed()])
    .when(approve({ safetyScore: 101 }))
    .thenRefused(t, 'VALIDATION_FAILED', /safetyScore/);
});

t.test('rejecting a pending agent moves it to rejected', async (t) => {
  const rejection = given([listed()]).when(reject());
  rejection.then(t, [{ type: 'AgentRejected', data: { review: { id: 'r2', status: 'reject', reviewedAt: later.toISOString(), notes: 'no edge' } } }]);
  const state = rejection.after();
  t.equal(state.exists && state.betaStatus, 'rejected');
});

t.test('promoting a beta agent makes it live', async (t) => {
  const promotion = given([listed(), approved]).when(promote());
  promotion.then(t, [{ type: 'AgentPromoted', data: { review: { id: 'r3', status: 'promote', reviewedAt: later.toISOString(), notes: '' } } }]);
  const state = promotion.after();
  t.ok(state.exists && state.betaStatus === 'live' && isFollowable(state));
});

t.test('invalid review moves are refused as REVIEW_MOVE_NOT_ALLOWED', async (t) => {
  given([listed()])
    .when(promote())
    .thenRefused(t, 'REVIEW_MOVE_NOT_ALLOWED', /cannot promote an agent in pending-review/);
  given([listed(), approved]).when(approve()).thenRefused(t, 'REVIEW_MOVE_NOT_ALLOWED');
  given([listed(), approved]).when(reject()).thenRefused(t, 'REVIEW_MOVE_NOT_ALLOWED');
  given([listed(), rejected]).when(approve()).thenRefused(t, 'REVIEW_MOVE_NOT_ALLOWED');
  given([listed(), approved, promoted]).when(promote()).thenRefused(t, 'REVIEW_MOVE_NOT_ALLOWED');
});

t.test('only a beta or live agent can be followed: not one under review, rejected or unknown', async (t) => {
  const stateOf = (events: AgentEvent[]) => given(events).state;
  t.notOk(isFollowable(stateOf([])), 'unknown');
  t.notOk(isFollowable(stateOf([listed()])), 'pending-review');
  t.notOk(isFollowable(stateOf([listed(), rejected])), 'rejected');
  t.ok(isFollowable(stateOf([listed(), approved])), 'beta');
  t.ok(isFollowable(stateOf([listed(), approved, promoted])), 'live');
});

t.test('reviewing an unknown agent is not found', async (t) => {
  given([]).when(approve()).thenRefused(t, 'AGENT_NOT_FOUND');
});

t.test('the developer resubmits a rejected agent for review', async (t) => {
  const resubmit = (developerId: string): AgentCommand => ({ type: 'ResubmitAgent', data: { developerId, notes: 'fixed' }, metadata: at(later) });
  const resubmission = given([listed(), rejected]).when(resubmit('dev1'));
  resubmission.then(t, [{ type: 'AgentResubmitted', data: { resubmittedAt: later.toISOString(), notes: 'fixed' } }]);
  t.equal(resubmission.after().exists && (resubmission.after() as { betaStatus: string }).betaStatus, 'pending-review');
  given([listed()]).when(resubmit('dev1')).thenRefused(t, 'REVIEW_MOVE_NOT_ALLOWED');
  given([listed(), rejected]).when(resubmit('someone-else')).thenRefused(t, 'AGENT_NOT_FOUND');
});

t.test('the decider refuses names that would mislead marketplace readers', async (t) => {
  const named = (o: Partial<AgentListed>) => given().when(list(listing(o)));
  named({ name: '\u202eevil' }).thenRefused(t, 'VALIDATION_FAILED', /^name must not contain characters that change the text direction/);
  named({ name: '\u200b' }).thenRefused(t, 'VALIDATION_FAILED', /^name must not contain invisible/);
  named({ name: '\uff2d\uff4f\uff4d' }).thenRefused(t, 'VALIDATION_FAILED', /^name must be NFKC-normalised/);
  named({ tags: ['ok', 'x\u2066y'] }).thenRefused(t, 'VALIDATION_FAILED', /^tag must not contain/);
  named({ connectedChannels: [{ channelName: 'a\u200bb' }] }).thenRefused(t, 'VALIDATION_FAILED', /^channelName must not contain/);
  named({ name: 'Café 🚀' }).then(t, [listed({ name: 'Café 🚀' })]);
});

t.test('the developer edits the signal settings: only what differs is recorded, only by the developer', async (t) => {
  const edit = (data: Record<string, unknown>, developerId = 'dev1'): AgentCommand => ({
    type: 'UpdateAgentSignalSettings',
    data: { developerId, ...data },
    metadata: at(later),
  });
  const rule = { longKeywords: ['LONG'], strategyPrefix: 'MS' };
  const edited = given([listed()]).when(edit({ signalDetectionRule: rule }));
  edited.then(t, [{ type: 'AgentSignalSettingsUpdated', data: { signalDetectionRule: rule, updatedAt: later.toISOString() } }]);
  t.match(edited.after(), { signalDetectionRule: rule, updatedAt: later.toISOString() });
  const withRule = listed({ signalDetectionRule: { strategyPrefix: 'MS', longKeywords: ['LONG'] }, signalExecutionDefaults: { leverageMax: 5 } });
  given([withRule])
    .when(edit({ signalDetectionRule: rule, signalExecutionDefaults: { leverageMax: 5 } }))
    .then(t, []);
  given([withRule])
    .when(edit({ signalExecutionDefaults: { leverageMax: 3 } }))
    .then(t, [{ type: 'AgentSignalSettingsUpdated', data: { signalExecutionDefaults: { leverageMax: 3 }, updatedAt: later.toISOString() } }]);
  given([listed()])
    .when(edit({ signalDetectionRule: rule }, 'someone-else'))
    .thenRefused(t, 'NOT_AGENT_OWNER');
  given()
    .when(edit({ signalDetectionRule: rule }))
    .thenRefused(t, 'AGENT_NOT_FOUND');
});

t.test('developer webhooks are disabled and enabled by the developer, once each way, only with a webhookUrl', async (t) => {
  const hooked = listed({ webhookUrl: 'https://dev.example.test/hook' });
  const set = (enabled: boolean, developerId = 'dev1'): AgentCommand => ({ type: 'SetWebhookDelivery', data: { developerId, enabled }, metadata: at(later) });
  const disabled: AgentEvent = { type: 'AgentWebhookDisabled', data: { disabledAt: later.toISOString() } };
  const off = given([hooked]).when(set(false));
  off.then(t, [disabled]);
  const state = off.after();
  t.equal(state.exists && state.webhookDisabledAt, later.toISOString());
  given([hooked, disabled]).when(set(false)).then(t, []);
  given([hooked]).when(set(true)).then(t, []);
  const on = given([hooked, disabled]).when(set(true));
  on.then(t, [{ type: 'AgentWebhookEnabled', data: { enabledAt: later.toISOString() } }]);
  const again = on.after();
  t.ok(again.exists && again.webhookDisabledAt === undefined, 'enabled again');
  given([hooked]).when(set(false, 'dev2')).thenRefused(t, 'NOT_AGENT_OWNER');
  given([listed()]).when(set(false)).thenRefused(t, 'NO_WEBHOOK_URL');
  given([hooked, { type: 'AgentDeleted', data: { deletedAt: now.toISOString() } }])
    .when(set(false))
    .thenRefused(t, 'AGENT_NOT_FOUND');
});
