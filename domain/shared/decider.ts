// The decider shape every aggregate follows: pure, no I/O, time comes in the command.

/** An event as the domain sees it: a type and its data. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

export interface Decider<Command, State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the events the command produces, or throws a DomainError. */
  decide(command: Command, state: State): Event[];
}

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
