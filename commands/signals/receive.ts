// A signal arrives on the agent's webhook, authenticated there with the agent's signing secret
// before its body was parsed (api/routes/signals/delivery.ts; docs/domain-rules.md: timestamp and signature over
// the body, 5 minutes of skew); here its signature is spent (used once), the body read with the
// agent's rules and recorded once per signalId. A signal with something to
// execute is handed to the signal worker (the `signals` port); a repeated signalId answers what the
// first one decided and hands nothing new over, but for a first run that never reached the worker.
import { createHash } from 'node:crypto';
import { agentDecider } from '../../domain/agent/index.ts';
import { cut, firstProblems, problemsMessage } from '../../domain/shared/echo.ts';
import { refuse, type DomainError } from '../../domain/shared/errors.ts';
import { signalDecider, signalInstanceId } from '../../domain/signal/decide.ts';
import { interpretSignalBody, type StructuredProblem } from '../../domain/signal/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import type { SignalReceived } from '../../domain/signal/events.ts';
import { AGENT_SIGNING_SECRET, decryptSecret } from '../../infra/secrets.ts';
import { MAX_SKEW_MS } from '../../infra/signing/webhook.ts';
import type { Tools } from '../tools.ts';
import type { CommandRoom } from '../handle.ts';
import type { ReceiveSignalData, ReceivedSignal } from './commands.ts';

/** A signal's key in its stream name and trade ids: a digest of its id (any text up to 200 characters). */
export const signalKeyOf = (signalId: string): string => createHash('sha256').update(signalId).digest('base64url').slice(0, 22);

/** The signature is spent for the skew window and a minute more: a replay inside it is refused. */
async function spendSignature(tools: Tools, agentId: string, signature: string): Promise<void> {
  const first = await tools.deps.redis.set(`signal-signature:${agentId}:${signature}`, '1', 'PX', 2 * MAX_SKEW_MS + 60_000, 'NX');
  if (first === null) throw refuse('INVALID_SIGNATURE', 'this signature was already used: sign every delivery anew');
}

/**
 * The agent's signing secret, for the webhook to verify a delivery before reading its body;
 * undefined for an unknown or deleted agent. The state this process verified within the last
 * second will do (as for the command below): a flood of deliveries reads the stream once a second.
 */
export async function agentSigningSecret(deps: { room: CommandRoom; config: { JWT_SECRET: string } }, agentId: string): Promise<string | undefined> {
  const { state: agent } = await deps.room.load(agentDecider.streamOf(agentId), agentDecider, { maxStaleMs: 1_000 });
  if (!agent.exists || agent.deletedAt !== undefined) return undefined;
  return decryptSecret(agent.signingSecretCiphertext, deps.config.JWT_SECRET, AGENT_SIGNING_SECRET);
}

/** A body the agent's rules refuse, naming its first few problems, each cut short (domain/shared/echo.ts). */
export function refusedBody(read: { reason: 'VALIDATION_FAILED' | 'INVALID_LEVELS'; problems: StructuredProblem[] }, message: string): DomainError {
  const { shown, more } = firstProblems(read.problems);
  const problems = shown.map((p) => ({ ...p, path: cut(p.path), message: cut(p.message) }));
  return refuse(read.reason, message, { problems, ...(more ? { moreProblems: more } : {}) });
}

export async function receiveSignal({ data }: Command<'ReceiveSignal', ReceiveSignalData>, tools: Tools): Promise<ReceivedSignal> {
  const { agentId, body } = data;
  const { state: agent } = await tools.load(agentDecider, agentId, { maxStaleMs: 1_000 });
  if (!agent.exists || agent.deletedAt !== undefined) throw refuse('AGENT_NOT_FOUND', 'no such agent');
  await spendSignature(tools, agentId, data.signature);
  const read = interpretSignalBody(body, agent.signalDetectionRule, agent.signalExecutionDefaults);
  if (!read.ok)
    throw refusedBody(
      read,
      `the body is not a valid signal: ${problemsMessage(
        read.problems.map((p) => `${p.path}: ${p.message}`),
        '; ',
      )}`,
    );
  const signalIdGiven = read.signalId !== undefined;
  return recordSignal(tools, agentId, {
    signalId: read.signalId ?? tools.deps.ids.uuid(),
    signalIdGiven,
    source: read.source,
    body,
    interpretation: read.interpretation,
    ...(read.replyTo ? { replyTo: read.replyTo } : {}),
  });
}

/** Records a signal once under its id and hands one with something to execute to the worker. */
export async function recordSignal(tools: Tools, agentId: string, signal: Omit<SignalReceived, 'agentId' | 'receivedAt'>): Promise<ReceivedSignal> {
  const signalKey = signalKeyOf(signal.signalId);
  const { state, events } = await tools.execute(signalDecider, signalInstanceId(agentId, signalKey), { type: 'ReceiveSignal', data: { agentId, ...signal } });
  if (state.status === 'none') throw new Error(`signal ${signalKey} of agent ${agentId} was not recorded`);
  if (state.status === 'received') await tools.deps.signals?.enqueue({ agentId, signalKey, correlationId: tools.metadata.correlationId });
  return { agentId, signalKey, signal: state, repeated: events.length === 0 };
}
