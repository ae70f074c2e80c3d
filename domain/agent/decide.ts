import { assertNever } from '../shared/decider.ts';
import { badRequest, conflict, notFound } from '../shared/errors.ts';
import { nameProblem } from '../shared/text.ts';
import type { AgentEvent, AgentListed } from './events.ts';
import type { ReviewDecision, ReviewRecord } from './record.ts';
import type { AgentState, ListedAgent } from './state.ts';

/** The review fields an administrator gives; the id comes from the command handler (no randomness here). */
export interface ReviewInput {
  reviewId: string;
  notes?: string;
  safetyScore?: number;
}

export type ListAgent = { type: 'ListAgent'; data: Omit<AgentListed, 'listedAt'>; metadata: { now: Date } };
export type ApproveAgent = { type: 'ApproveAgent'; data: ReviewInput; metadata: { now: Date } };
export type RejectAgent = { type: 'RejectAgent'; data: ReviewInput; metadata: { now: Date } };
export type PromoteAgent = { type: 'PromoteAgent'; data: ReviewInput; metadata: { now: Date } };
export type ResubmitAgent = { type: 'ResubmitAgent'; data: { developerId: string; notes?: string }; metadata: { now: Date } };
export type TakeBetaSeat = { type: 'TakeBetaSeat'; data: { userId: string }; metadata: { now: Date } };
export type ReleaseBetaSeat = { type: 'ReleaseBetaSeat'; data: { userId: string }; metadata: { now: Date } };

export type AgentCommand = ListAgent | ApproveAgent | RejectAgent | PromoteAgent | ResubmitAgent | TakeBetaSeat | ReleaseBetaSeat;

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
    case 'TakeBetaSeat':
      return takeBetaSeat(command, listed(state));
    case 'ReleaseBetaSeat':
      return releaseBetaSeat(command, listed(state));
    default:
      return assertNever(command);
  }
}

function listed(state: AgentState): ListedAgent {
  if (!state.exists) throw notFound('agent not found');
  return state;
}

function listAgent(command: ListAgent, state: AgentState): AgentEvent[] {
  if (state.exists) throw conflict('agent already listed');
  const data = command.data;
  if (data.name.length < 1 || data.name.length > 80) throw badRequest('name must be 1 to 80 characters');
  assertVisibleNames(data);
  if (data.successFeePercent < 0 || data.successFeePercent > MAX_SUCCESS_FEE_PERCENT) {
    throw badRequest(`successFeePercent must be between 0 and ${MAX_SUCCESS_FEE_PERCENT}`);
  }
  if (data.venue === 'PERP_VENUE') {
    const lev = data.maxLeverage;
    if (lev === undefined || !Number.isInteger(lev) || lev < 1 || lev > MAX_LEVERAGE) {
      throw badRequest(`maxLeverage is required for PERP_VENUE and must be an integer from 1 to ${MAX_LEVERAGE}`);
    }
  } else if (data.maxLeverage !== undefined) {
    throw badRequest('maxLeverage is not allowed for SPOT_VENUE');
  }
  return [{ type: 'AgentListed', data: { ...data, listedAt: command.metadata.now.toISOString() } }];
}

/** The names readers of the marketplace see must read as what they are (domain/shared/text.ts). */
function assertVisibleNames(data: ListAgent['data']): void {
  const names: Array<[string, string | undefined]> = [
    ['name', data.name],
    ...data.tags.map((tag): [string, string] => ['tag', tag]),
    ...data.connectedChannels.flatMap((c): Array<[string, string | undefined]> => [
      ['channelName', c.channelName],
      ['channelUsername', c.channelUsername],
    ]),
  ];
  for (const [field, text] of names) {
    const problem = text === undefined ? undefined : nameProblem(text);
    if (problem) throw badRequest(`${field} ${problem}`);
  }
}

/** Moves of domain.md: pending-review → beta | rejected, beta → live. */
const reviewMoves: Record<ReviewDecision, { from: ListedAgent['betaStatus']; to: ListedAgent['betaStatus'] }> = {
  approve: { from: 'pending-review', to: 'beta' },
  reject: { from: 'pending-review', to: 'rejected' },
  promote: { from: 'beta', to: 'live' },
};

function review(input: ReviewInput, decision: ReviewDecision, now: Date, agent: ListedAgent): AgentEvent[] {
  const move = reviewMoves[decision];
  if (agent.betaStatus !== move.from) {
    throw conflict(`cannot ${decision} an agent in ${agent.betaStatus}; only an agent in ${move.from} can move to ${move.to}`);
  }
  if (input.safetyScore !== undefined && !(Number.isInteger(input.safetyScore) && input.safetyScore >= 0 && input.safetyScore <= 100)) {
    throw badRequest('safetyScore must be an integer from 0 to 100');
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
  if (agent.developerId !== command.data.developerId) throw notFound('agent not found');
  if (agent.betaStatus !== 'rejected') throw conflict(`only a rejected agent can be resubmitted; this one is ${agent.betaStatus}`);
  return [{ type: 'AgentResubmitted', data: { resubmittedAt: command.metadata.now.toISOString(), notes: command.data.notes ?? '' } }];
}

/**
 * A follower of a beta agent takes one of its `maxBetaUsers` seats; a live agent has no seats.
 * Taking a seat twice is a no-op, so a retried follow never counts a user twice.
 */
function takeBetaSeat(command: TakeBetaSeat, agent: ListedAgent): AgentEvent[] {
  const { userId } = command.data;
  if (agent.betaStatus === 'live') return [];
  if (agent.betaStatus !== 'beta') throw conflict(`agent is ${agent.betaStatus} and cannot be followed`);
  if (agent.betaSeats.includes(userId)) return [];
  if (agent.maxBetaUsers !== undefined && agent.betaSeats.length >= agent.maxBetaUsers) {
    throw conflict(`all ${agent.maxBetaUsers} beta seats of this agent are taken`);
  }
  return [{ type: 'BetaSeatTaken', data: { userId, at: command.metadata.now.toISOString() } }];
}

/** A user who stops following frees the seat for someone else; without a seat nothing happens. */
function releaseBetaSeat(command: ReleaseBetaSeat, agent: ListedAgent): AgentEvent[] {
  const { userId } = command.data;
  if (!agent.betaSeats.includes(userId)) return [];
  return [{ type: 'BetaSeatReleased', data: { userId, at: command.metadata.now.toISOString() } }];
}
