// A signal arrives on the agent's webhook: authenticated with the agent's signing secret
// (domain.md: timestamp and signature over the canonical JSON body, 5 minutes of skew, a signature
// used once), read with the agent's rules, recorded once per signalId. A signal with something to
// execute is handed to the signal worker (the `signals` port); a repeated signalId answers what the
// first one decided and hands nothing new over, but for a first run that never reached the worker.
import { createHash } from 'node:crypto';
import { agentDecider } from '../../domain/agent/index.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { signalDecider, signalInstanceId, type SignalState } from '../../domain/signal/decide.ts';
import { interpretSignalBody } from '../../domain/signal/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import type { SignalReceived } from '../../domain/signal/events.ts';
import { AGENT_SIGNING_SECRET, decryptSecret } from '../../infra/secrets.ts';
import { verifyWebhookSignature, MAX_SKEW_MS } from '../../infra/signing/webhook.ts';
import type { Tools } from '../dispatch.ts';

export interface ReceiveSignalData {
  agentId: string;
  body: unknown;
  timestampHeader: string | string[] | undefined;
  signatureHeader: string | string[] | undefined;
}

export interface ReceivedSignal {
  agentId: string;
  signalKey: string;
  /** received (the worker executes it) or executed (decided: at arrival, or by the first delivery) */
  signal: Exclude<SignalState, { status: 'none' }>;
  /** the signalId was received before: nothing new was recorded */
  repeated: boolean;
}

/** Where signals to execute go (the signal worker's queue); absent where no worker runs (then it stays received). */
export interface SignalJobs {
  enqueue(job: { agentId: string; signalKey: string; correlationId: string }): Promise<void>;
}

/** A signal's key in its stream name and trade ids: a digest of its id (any text up to 200 characters). */
export const signalKeyOf = (signalId: string): string => createHash('sha256').update(signalId).digest('base64url').slice(0, 22);

/** The signature is spent for the skew window and a minute more: a replay inside it is refused. */
async function spendSignature(tools: Tools, agentId: string, signature: string): Promise<void> {
  const first = await tools.deps.redis.set(`signal-signature:${agentId}:${signature}`, '1', 'PX', 2 * MAX_SKEW_MS + 60_000, 'NX');
  if (first === null) throw refuse('INVALID_SIGNATURE', 'this signature was already used: sign every delivery anew');
}

export async function receiveSignal({ data }: Command<'ReceiveSignal', ReceiveSignalData>, tools: Tools): Promise<ReceivedSignal> {
  const { agentId, body } = data;
  const { state: agent } = await tools.load(agentDecider, agentId, { maxStaleMs: 1_000 });
  if (!agent.exists || agent.deletedAt !== undefined) throw refuse('AGENT_NOT_FOUND', 'no such agent');
  const secret = decryptSecret(agent.signingSecretCiphertext, tools.deps.config.JWT_SECRET, AGENT_SIGNING_SECRET);
  const verified = verifyWebhookSignature({ secret, timestampHeader: data.timestampHeader, signatureHeader: data.signatureHeader, body, nowMs: tools.metadata.now.getTime() });
  if (!verified.ok) throw refuse('INVALID_SIGNATURE', `the signature was refused: ${verified.reason}`, { signatureProblem: verified.reason });
  await spendSignature(tools, agentId, String(data.signatureHeader));
  const read = interpretSignalBody(body, agent.signalDetectionRule, agent.signalExecutionDefaults);
  if (!read.ok) {
    const what = read.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
    throw refuse(read.reason, `the body is not a valid signal: ${what}`, { problems: read.problems });
  }
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

