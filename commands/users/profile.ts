// POST /api/v1/users/me/guide-agent, POST /api/v1/users/me/interests, POST and DELETE
// /api/v1/agents/{id}/pin. An agent counts when a user could follow it (isFollowable, the rule of a
// follow): its stream is read fresh, and the user's decider refuses what the agent does not allow.
import { agentDecider, isFollowable } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { userDecider } from '../../domain/user/decide.ts';
import type { Tools } from '../tools.ts';
import type { PinData, PinsResult } from './commands.ts';

const followable = async (tools: Tools, agentId: string) => isFollowable((await tools.load(agentDecider, agentId)).state);

export async function chooseGuideAgent(
  { data: { userId, guideAgentId } }: Command<'ChooseGuideAgent', { userId: string; guideAgentId: string }>,
  tools: Tools,
): Promise<Record<string, never>> {
  const agentFollowable = await followable(tools, guideAgentId);
  await tools.execute(userDecider, userId, { type: 'ChooseGuideAgent', data: { guideAgentId, agentFollowable } });
  return {};
}

export async function replaceInterests(
  { data: { userId, interests } }: Command<'ReplaceInterests', { userId: string; interests: string[] }>,
  tools: Tools,
): Promise<Record<string, never>> {
  await tools.execute(userDecider, userId, { type: 'ReplaceInterests', data: { interests } });
  return {};
}

export const pinAgent = ({ data }: Command<'PinAgent', PinData>, tools: Tools) => changePins('PinAgent', data, tools);
export const unpinAgent = ({ data }: Command<'UnpinAgent', PinData>, tools: Tools) => changePins('UnpinAgent', data, tools);

async function changePins(type: 'PinAgent' | 'UnpinAgent', { userId, agentId }: PinData, tools: Tools): Promise<PinsResult> {
  const agentFollowable = await followable(tools, agentId);
  const { state, events } = await tools.execute(userDecider, userId, { type, data: { agentId, agentFollowable } });
  // The decider refuses an unregistered user: a decided state is a registered one.
  return { pinnedAgentIds: state.status === 'registered' ? state.pinnedAgentIds : [], changed: events.length > 0 };
}
