// The decider of one signal (stream `signal-{agentId}.{signalKey}`): received once, executed once.
// A signal read as nothing to execute (unmatched, levels that contradict the side) is decided as
// it arrives; the others are executed by the signal worker in every follower pool.
import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import type { PoolResult, SignalEvent, SignalExecuted, SignalOutcome, SignalReceived } from './events.ts';
import { upcastInterpretation, type Interpretation } from './intent.ts';

export const signalStream = (id: string): string => `signal-${id}`;
/** One signal of one agent: the agent id, then the key of its signalId. */
export const signalInstanceId = (agentId: string, signalKey: string): string => `${agentId}.${signalKey}`;

export type SignalState =
  | { status: 'none' }
  | { status: 'received'; received: SignalReceived }
  | { status: 'executed'; received: SignalReceived; executed: SignalExecuted };

export type ReceiveSignal = Command<'ReceiveSignal', Omit<SignalReceived, 'receivedAt'>>;
export type RecordSignalOutcome = Command<'RecordSignalOutcome', { results: PoolResult[] }>;
export type SignalCommand = ReceiveSignal | RecordSignalOutcome;

export const initialState = (): SignalState => ({ status: 'none' });

export function evolve(state: SignalState, event: SignalEvent): SignalState {
  switch (event.type) {
    case 'SignalReceived':
      // Interpretations stored before prices were finer hold micro-USD integers: read them as today's text.
      return state.status === 'none'
        ? { status: 'received', received: { ...event.data, interpretation: upcastInterpretation(event.data.interpretation) as Interpretation } }
        : state;
    case 'SignalExecuted':
      return state.status === 'received' ? { status: 'executed', received: state.received, executed: event.data } : state;
    default:
      return assertNever(event);
  }
}

/**
 * The outcome of the pools' results: every pool executed, some, none (a failure among them), or all
 * skipped. A pool's paper execution (test trading) is no execution: it counts as a skip for
 * TEST_TRADING.
 */
export function outcomeOf(results: readonly PoolResult[]): { outcome: SignalOutcome; skipReason?: string } {
  const executed = results.filter((r) => r.status === 'executed').length;
  if (results.length === 0) return { outcome: 'skipped', skipReason: 'NO_FOLLOWERS' };
  if (executed === results.length) return { outcome: 'executed' };
  if (executed > 0) return { outcome: 'partially_executed' };
  if (results.some((r) => r.status === 'failed')) return { outcome: 'failed' };
  const reasons = new Set(results.map((r) => (r.status === 'simulated' ? 'TEST_TRADING' : (r.skipReason ?? 'SKIPPED'))));
  return { outcome: 'skipped', skipReason: reasons.size === 1 ? [...reasons][0]! : 'MIXED' };
}

/** What a signal read as nothing to execute decides at once. */
function decidedAtArrival(received: SignalReceived): SignalExecuted | null {
  const { interpretation } = received;
  if (interpretation.kind === 'unmatched') return { outcome: 'unmatched', results: [], executedAt: received.receivedAt };
  if (interpretation.kind === 'skipped') return { outcome: 'skipped', skipReason: interpretation.skipReason, results: [], executedAt: received.receivedAt };
  return null;
}

function receive({ data, metadata }: ReceiveSignal, state: SignalState): SignalEvent[] {
  if (state.status !== 'none') return [];
  const received: SignalReceived = { ...data, receivedAt: metadata.now.toISOString() };
  const executed = decidedAtArrival(received);
  return executed
    ? [
        { type: 'SignalReceived', data: received },
        { type: 'SignalExecuted', data: executed },
      ]
    : [{ type: 'SignalReceived', data: received }];
}

function recordOutcome({ data, metadata }: RecordSignalOutcome, state: SignalState): SignalEvent[] {
  if (state.status === 'none') throw refuse('SIGNAL_NOT_FOUND', 'no such signal');
  if (state.status === 'executed') return [];
  return [{ type: 'SignalExecuted', data: { ...outcomeOf(data.results), results: data.results, executedAt: metadata.now.toISOString() } }];
}

export function decide(command: SignalCommand, state: SignalState): SignalEvent[] {
  switch (command.type) {
    case 'ReceiveSignal':
      return receive(command, state);
    case 'RecordSignalOutcome':
      return recordOutcome(command, state);
    default:
      return assertNever(command);
  }
}

export const signalDecider: Aggregate<SignalCommand, SignalState, SignalEvent> = { streamOf: signalStream, initialState, evolve, decide };
