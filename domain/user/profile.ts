// The user's choices about agents and topics: a guide agent, interests, pinned agents. Whether an
// agent is followable lives on the agent's stream: the command carries what the sender read there
// (isFollowable, the rule a follow applies), and an agent the user cannot follow is unknown to them.
import type { Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import type { UserEvent } from './events.ts';
import { interestsSchema } from './fields.ts';
import type { RegisteredUser } from './state.ts';

export const MAX_PINS = 20;

export type ProfileCommand =
  | Command<'ChooseGuideAgent', { guideAgentId: string; agentFollowable: boolean }>
  | Command<'ReplaceInterests', { interests: string[] }>
  | Command<'PinAgent', { agentId: string; agentFollowable: boolean }>
  | Command<'UnpinAgent', { agentId: string; agentFollowable: boolean }>;

type Cmd<T extends ProfileCommand['type']> = Extract<ProfileCommand, { type: T }>;

const unknownAgent = () => refuse('AGENT_NOT_FOUND', 'no followable agent has this id');

export function chooseGuideAgent({ data, metadata: { now } }: Cmd<'ChooseGuideAgent'>, state: RegisteredUser): UserEvent[] {
  if (!data.agentFollowable) throw unknownAgent();
  if (state.guideAgentId === data.guideAgentId) return [];
  return [{ type: 'GuideAgentChosen', data: { userId: state.userId, guideAgentId: data.guideAgentId, chosenAt: now.toISOString() } }];
}

/** The rule is checked here too (the route checked it already): no sender can store a list the API would refuse. */
export function replaceInterests({ data, metadata: { now } }: Cmd<'ReplaceInterests'>, state: RegisteredUser): UserEvent[] {
  const parsed = interestsSchema.safeParse(data.interests);
  if (!parsed.success) throw refuse('VALIDATION_FAILED', parsed.error.issues.map((i) => i.message).join(', '));
  const interests = parsed.data;
  if (interests.length === state.interests.length && interests.every((item, i) => item === state.interests[i])) return [];
  return [{ type: 'InterestsReplaced', data: { userId: state.userId, interests, replacedAt: now.toISOString() } }];
}

export function pinAgent({ data, metadata: { now } }: Cmd<'PinAgent'>, state: RegisteredUser): UserEvent[] {
  if (!data.agentFollowable) throw unknownAgent();
  if (state.pinnedAgentIds.includes(data.agentId)) return [];
  if (state.pinnedAgentIds.length >= MAX_PINS) {
    throw refuse('TOO_MANY_PINS', `at most ${MAX_PINS} agents can be pinned: unpin one first`, { maxPins: MAX_PINS });
  }
  return [{ type: 'AgentPinned', data: { userId: state.userId, agentId: data.agentId, pinnedAt: now.toISOString() } }];
}

/** A pinned agent can always be unpinned, even one deleted since: else it would hold a place for good. */
export function unpinAgent({ data, metadata: { now } }: Cmd<'UnpinAgent'>, state: RegisteredUser): UserEvent[] {
  if (state.pinnedAgentIds.includes(data.agentId)) {
    return [{ type: 'AgentUnpinned', data: { userId: state.userId, agentId: data.agentId, unpinnedAt: now.toISOString() } }];
  }
  if (!data.agentFollowable) throw unknownAgent();
  return [];
}
