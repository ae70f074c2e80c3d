// The signals area's commands (receive, replay, execute): their data and results. No handler here.
import type { SignalExecuted } from '../../domain/signal/events.ts';
import type { SignalState } from '../../domain/signal/decide.ts';

export interface ExecuteSignalData {
  agentId: string;
  signalKey: string;
  /** the agent's follower pools (the worker reads them from the subscriptions read model) */
  poolIds: string[];
}

export interface ReceiveSignalData {
  agentId: string;
  body: unknown;
  /** the delivery's X-SVC-Signature, which the webhook verified over this body */
  signature: string;
}

export interface ReceivedSignal {
  agentId: string;
  signalKey: string;
  /** received (the worker executes it) or executed (decided: at arrival, or by the first delivery) */
  signal: Exclude<SignalState, { status: 'none' }>;
  /** the signalId was received before: nothing new was recorded */
  repeated: boolean;
}

export interface ReplaySignalData {
  agentId: string;
  signalId: string;
}

/** The signals area's commands: each one's data and result. */
export interface SignalCommands {
  ReceiveSignal: { data: ReceiveSignalData; result: ReceivedSignal };
  ReplaySignal: { data: ReplaySignalData; result: ReceivedSignal };
  ExecuteSignal: { data: ExecuteSignalData; result: { executed: SignalExecuted } };
}
