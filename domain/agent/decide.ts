import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { refuse } from '../shared/errors.ts';
import { nameProblem } from '../shared/text.ts';
import type { AgentEvent, AgentListed } from './events.ts';
import type { ReviewDecision, ReviewRecord, SignalDetectionRule, SignalExecutionDefaults } from './record.ts';
import { agentStream, evolve, initialState, type AgentState, type ListedAgent } from './state.ts';

/** The review fields an administrator gives; the id comes from the command handler (no randomness here). */
export interface ReviewInput {
  reviewId: string;
  notes?: string;
  safetyScore?: number;
}

export type ListAgent = Command<'ListAgent', Omit<AgentListed, 'listedAt'>>;
export type ApproveAgent = Command<'ApproveAgent', ReviewInput>;
export type RejectAgent = Command<'RejectAgent', ReviewInput>;
export type PromoteAgent = Command<'PromoteAgent', ReviewInput>;
export type ResubmitAgent = Command<'ResubmitAgent', { developerId: string; notes?: string }>;
export type UpdateAgentSignalSettings = Command<
  'UpdateAgentSignalSettings',
  { developerId: string; signalDetectionRule?: SignalDetectionRule; signalExecutionDefaults?: SignalExecutionDefaults }
>;

/** Removes the agent (its developer or an administrator: the caller checks who); a repeat changes nothing. */
export type DeleteAgent = Command<'DeleteAgent', Record<string, never>>;
/** The developer turns the agent's developer webhooks off or on; asking for the state it is in records nothing. */
export type SetWebhookDelivery = Command<'SetWebhookDelivery', { developerId: string; enabled: boolean; reason?: 'failing' }>;
export type AgentCommand = ListAgent | ApproveAgent | RejectAgent | PromoteAgent | ResubmitAgent | UpdateAgentSignalSettings | DeleteAgent | SetWebhookDelivery;

export const MAX_LEVERAGE = 100;
export const MAX_SUCCESS_FEE_PERCENT = 50;

export function decide(command: AgentCommand, state: AgentState): AgentEvent[] {
  switch (command.type) {
    case 'ListAgent':
      return listAgent(command, state);
    case 'ApproveAgent':
      return review(command.data, 'approve', command.metadata.now, listed(state));
    case 'RejectAgent':
      return review(command.data, 'reject', command.metadata.now, listed(state));
    case 'PromoteAgent':
      return review(command.data, 'promote', command.metadata.now, listed(state));
    case 'ResubmitAgent':
      return resubmit(command, listed(state));
    case 'UpdateAgentSignalSettings':
      return updateSignalSettings(command, listed(state));
    case 'DeleteAgent':
      return listed(state).deletedAt === undefined ? [{ type: 'AgentDeleted', data: { deletedAt: command.metadata.now.toISOString() } }] : [];
    case 'SetWebhookDelivery':
      return setWebhookDelivery(command, listed(state));
    default:
      return assertNever(command);
  }
}

function listed(state: AgentState): ListedAgent {
  if (!state.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  return state;
}

function listAgent(command: ListAgent, state: AgentState): AgentEvent[] {
  if (state.exists) throw refuse('ALREADY_EXISTS', 'agent already listed');
  const data = command.data;
  if (data.name.length < 1 || data.name.length > 80) throw refuse('VALIDATION_FAILED', 'name must be 1 to 80 characters');
  assertVisibleNames(data);
  if (data.successFeePercent < 0 || data.successFeePercent > MAX_SUCCESS_FEE_PERCENT) {
    throw refuse('VALIDATION_FAILED', `successFeePercent must be between 0 and ${MAX_SUCCESS_FEE_PERCENT}`);
  }
  if (data.venue === 'PERP_VENUE') {
    const lev = data.maxLeverage;
    if (lev === undefined || !Number.isInteger(lev) || lev < 1 || lev > MAX_LEVERAGE) {
      throw refuse('VALIDATION_FAILED', `maxLeverage is required for PERP_VENUE and must be an integer from 1 to ${MAX_LEVERAGE}`);
    }
  } else if (data.maxLeverage !== undefined) {
    throw refuse('VALIDATION_FAILED', 'maxLeverage is not allowed for SPOT_VENUE');
  }
  return [{ type: 'AgentListed', data: { ...data, listedAt: command.metadata.now.toISOString() } }];
}

/** The names readers of the marketplace see must read as what they are (domain/shared/text.ts). */
function assertVisibleNames(data: ListAgent['data']): void {
  const names: Array<[string, string | undefined]> = [
    ['name', data.name],
    ...data.tags.map((tag): [string, string] => ['tag', tag]),
    ...data.connectedChannels.flatMap(
      (c): Array<[string, string | undefined]> => [
        ['channelName', c.channelName],
        ['channelUsername', c.channelUsername],
      ],
    ),
  ];
  for (const [field, text] of names) {
    const problem = text === undefined ? undefined : nameProblem(text);
    if (problem) throw refuse('VALIDATION_FAILED', `${field} ${problem}`);
  }
}

/** Moves of docs/domain-rules.md, Agent review: pending-review → beta | rejected, beta → live. */
const reviewMoves: Record<ReviewDecision, { from: ListedAgent['betaStatus']; to: ListedAgent['betaStatus'] }> = {
  approve: { from: 'pending-review', to: 'beta' },
  reject: { from: 'pending-review', to: 'rejected' },
  promote: { from: 'beta', to: 'live' },
};

function review(input: ReviewInput, decision: ReviewDecision, now: Date, agent: ListedAgent): AgentEvent[] {
  const move = reviewMoves[decision];
  if (agent.betaStatus !== move.from) {
    throw refuse('REVIEW_MOVE_NOT_ALLOWED', `cannot ${decision} an agent in ${agent.betaStatus}; only an agent in ${move.from} can move to ${move.to}`);
  }
  if (input.safetyScore !== undefined && !(Number.isInteger(input.safetyScore) && input.safetyScore >= 0 && input.safetyScore <= 100)) {
    throw refuse('VALIDATION_FAILED', 'safetyScore must be an integer from 0 to 100');
  }
  const reviewedAt = now.toISOString();
  const record: ReviewRecord = {
    id: input.reviewId,
    status: decision,
    reviewedAt,
    notes: input.notes ?? '',
    ...(input.safetyScore !== undefined ? { safetyScore: input.safetyScore } : {}),
  };
  switch (decision) {
    case 'approve':
      return [{ type: 'AgentApproved', data: { review: record, betaStartDate: reviewedAt } }];
    case 'reject':
      return [{ type: 'AgentRejected', data: { review: record } }];
    case 'promote':
      return [{ type: 'AgentPromoted', data: { review: record } }];
    default:
      return assertNever(decision);
  }
}

function resubmit(command: ResubmitAgent, agent: ListedAgent): AgentEvent[] {
  if (agent.developerId !== command.data.developerId) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  if (agent.betaStatus !== 'rejected') throw refuse('REVIEW_MOVE_NOT_ALLOWED', `only a rejected agent can be resubmitted; this one is ${agent.betaStatus}`);
  return [{ type: 'AgentResubmitted', data: { resubmittedAt: command.metadata.now.toISOString(), notes: command.data.notes ?? '' } }];
}

/** Only what differs is recorded (in canonical JSON, so key order is no change); nothing differing, nothing recorded. */
function updateSignalSettings(command: UpdateAgentSignalSettings, agent: ListedAgent): AgentEvent[] {
  const { developerId, signalDetectionRule, signalExecutionDefaults } = command.data;
  if (agent.developerId !== developerId) throw refuse('NOT_AGENT_OWNER', "only the agent's developer can edit its signal settings");
  const differs = (next: unknown, current: unknown) => next !== undefined && canonicalJson(next) !== canonicalJson(current ?? null);
  const changes = {
    ...(differs(signalDetectionRule, agent.signalDetectionRule) ? { signalDetectionRule } : {}),
    ...(differs(signalExecutionDefaults, agent.signalExecutionDefaults) ? { signalExecutionDefaults } : {}),
  };
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'AgentSignalSettingsUpdated', data: { ...changes, updatedAt: command.metadata.now.toISOString() } }];
}

function setWebhookDelivery(command: SetWebhookDelivery, agent: ListedAgent): AgentEvent[] {
  const { developerId, enabled, reason } = command.data;
  if (agent.deletedAt !== undefined) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  if (agent.developerId !== developerId) throw refuse('NOT_AGENT_OWNER', "only the agent's developer can turn its webhooks off or on");
  if (agent.webhookUrl === undefined) throw refuse('NO_WEBHOOK_URL', 'the agent has no webhookUrl');
  const at = command.metadata.now.toISOString();
  if (enabled) return agent.webhookDisabledAt === undefined ? [] : [{ type: 'AgentWebhookEnabled', data: { enabledAt: at } }];
  return agent.webhookDisabledAt === undefined ? [{ type: 'AgentWebhookDisabled', data: { disabledAt: at, ...(reason ? { reason } : {}) } }] : [];
}

export const agentDecider: Aggregate<AgentCommand, AgentState, AgentEvent> = { streamOf: agentStream, initialState, evolve, decide };
