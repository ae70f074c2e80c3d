// A signal executed again, read with the agent's current rules (the inbox's replay with
// `dryRun=false`): an explicit choice of the agent's developer, once per signal, and never for a
// signal that already executed something. The replay is a signal of its own (`{signalId}:replay`),
// so a repeated request answers the first replay's outcome and executes nothing again.
import { agentDecider } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { signalDecider, signalInstanceId } from '../../domain/signal/decide.ts';
import { interpretSignalBody } from '../../domain/signal/index.ts';
import type { Tools } from '../tools.ts';
import { recordSignal, refusedBody, signalKeyOf } from './receive.ts';
import type { ReplaySignalData, ReceivedSignal } from './commands.ts';

export const replayIdOf = (signalId: string): string => `${signalId}:replay`;

export async function replaySignal({ data }: Command<'ReplaySignal', ReplaySignalData>, tools: Tools): Promise<ReceivedSignal> {
  const { agentId, signalId } = data;
  const { state: agent } = await tools.load(agentDecider, agentId);
  if (!agent.exists || agent.deletedAt !== undefined) throw refuse('AGENT_NOT_FOUND', 'no such agent');
  const { state: original } = await tools.load(signalDecider, signalInstanceId(agentId, signalKeyOf(signalId)));
  if (original.status === 'none') throw refuse('SIGNAL_NOT_FOUND', 'the agent has no signal with this id');
  if (original.status === 'received') throw refuse('SIGNAL_NOT_REPLAYABLE', 'the signal is still being executed');
  if (original.executed.results.some((r) => r.status === 'executed')) {
    throw refuse('SIGNAL_NOT_REPLAYABLE', 'the signal already executed in some pools: it never executes twice (send a new signal instead)');
  }
  const read = interpretSignalBody(original.received.body, agent.signalDetectionRule, agent.signalExecutionDefaults);
  if (!read.ok) throw refusedBody(read, "the agent's current rules refuse this body");
  return recordSignal(tools, agentId, {
    signalId: replayIdOf(signalId),
    signalIdGiven: original.received.signalIdGiven,
    source: read.source,
    body: original.received.body,
    interpretation: read.interpretation,
    ...(original.received.replyTo ? { replyTo: original.received.replyTo } : {}),
  });
}
