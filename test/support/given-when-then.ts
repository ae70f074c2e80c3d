// The one Given / When / Then helper for deciders: given the events a stream holds, when a command
// is decided, then these events (or this refusal of the catalogue). The transfer process decider
// (domain/transfer/process.ts) reads the same way: given the outcomes its steps reported, when it
// decides, then the next step.
import type { Test } from 'tap';
import type { CommandMetadata, Decider, Command, DomainEvent } from '../../domain/shared/decider.ts';
import { DomainError, type ErrorReason, InvariantViolation } from '../../domain/shared/errors.ts';
import { decide, evolve, type TransferOutcome, type TransferState, type TransferStep } from '../../domain/transfer/process.ts';

/** Command metadata at `now`, as a test's sender would write it. */
export const at = (now: Date | string, actor = 'test-user'): CommandMetadata => ({
  now: typeof now === 'string' ? new Date(now) : now,
  actor,
  correlationId: 'test-request',
});

export interface Then<S, E> {
  /** the events decided */
  readonly events: () => E[];
  /** asserts the decided events */
  then(t: Test, expected: E[], message?: string): void;
  /** asserts a refusal with this catalogue reason (and message pattern); returns it */
  thenRefused(t: Test, reason: ErrorReason, message?: RegExp): DomainError | undefined;
  /** asserts an invariant broken: a state the code never produces, a bug if reached (not a refusal) */
  thenViolates(t: Test, message: RegExp): void;
  /** the state after the given and the decided events */
  after(): S;
}

export function scenario<C extends Command, S, E extends DomainEvent>(decider: Decider<C, S, E>) {
  return {
    given(events: E[] = []) {
      const state = events.reduce(decider.evolve, decider.initialState());
      return {
        state,
        when(command: C): Then<S, E> {
          const events = () => decider.decide(command, state);
          return {
            events,
            // biome-ignore lint/suspicious/noThenProperty: the helper's Given / When / Then, never awaited
            then(t, expected, message) {
              t.same(events(), expected, message ?? 'decided events');
            },
            thenRefused(t, reason, message) {
              try {
                const decided = events();
                t.fail(`expected a refusal ${reason}, got ${JSON.stringify(decided)}`);
                return undefined;
              } catch (err) {
                if (!(err instanceof DomainError)) throw err;
                t.equal(err.reason, reason, `refused: ${reason}`);
                if (message) t.match(err.message, message);
                return err;
              }
            },
            thenViolates(t, message) {
              t.throws(events, InvariantViolation, 'an invariant broken, not a refusal');
              t.throws(events, { message }, 'the invariant named');
            },
            after: () => events().reduce(decider.evolve, state),
          };
        },
      };
    },
  };
}

/**
 * The transfer process: given a start (planned or resumed) and the outcomes its steps reported so
 * far, the state they fold into; then the next step it asks for (null: over, or waiting for the venue).
 */
export function givenTransfer(start: TransferState, ...outcomes: TransferOutcome[]) {
  const state = outcomes.reduce(evolve, start);
  return {
    state,
    thenStep(t: Test, step: TransferStep | null, message?: string): void {
      t.same(decide(state), step, message ?? 'the next step');
    },
  };
}
