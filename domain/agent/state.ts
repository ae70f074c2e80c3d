import { assertNever } from '../shared/decider.ts';
import type { AgentEvent, AgentListed } from './events.ts';
import type { BetaStatus } from './record.ts';

export const agentStream = (agentId: string): string => `agent-${agentId}`;

/** An agent as its stream tells it; limits are integer micro-USD. */
export type ListedAgent = Omit<AgentListed, 'agentId'> & {
  exists: true;
  id: string;
  betaStatus: BetaStatus;
  betaStartDate?: string;
  updatedAt: string;
  /** set once deleted: no listing, no follow, no signal */
  deletedAt?: string;
  /** set while its developer webhooks are disabled */
  webhookDisabledAt?: string;
};

export type AgentState = { exists: false } | ListedAgent;

export const initialState = (): AgentState => ({ exists: false });

/** Only beta and live agents can be followed (docs/domain-rules.md, Agent review). */
export const isFollowable = (state: AgentState): state is ListedAgent =>
  state.exists && state.deletedAt === undefined && (state.betaStatus === 'beta' || state.betaStatus === 'live');

export function evolve(state: AgentState, event: AgentEvent): AgentState {
  if (event.type === 'AgentListed') {
    const { agentId, ...rest } = event.data;
    return { ...rest, exists: true, id: agentId, betaStatus: 'pending-review', updatedAt: rest.listedAt };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'AgentApproved':
      return { ...state, betaStatus: 'beta', betaStartDate: event.data.betaStartDate, updatedAt: event.data.review.reviewedAt };
    case 'AgentRejected':
      return { ...state, betaStatus: 'rejected', updatedAt: event.data.review.reviewedAt };
    case 'AgentPromoted':
      return { ...state, betaStatus: 'live', updatedAt: event.data.review.reviewedAt };
    case 'AgentResubmitted':
      return { ...state, betaStatus: 'pending-review', updatedAt: event.data.resubmittedAt };
    case 'AgentSignalSettingsUpdated': {
      const { updatedAt, ...changes } = event.data;
      return { ...state, ...changes, updatedAt };
    }
    case 'AgentDeleted':
      return { ...state, deletedAt: event.data.deletedAt, updatedAt: event.data.deletedAt };
    case 'AgentWebhookDisabled':
      return { ...state, webhookDisabledAt: event.data.disabledAt };
    case 'AgentWebhookEnabled': {
      const { webhookDisabledAt: _was, ...rest } = state;
      return rest;
    }
    default:
      return assertNever(event);
  }
}
