// The shapes every aggregate and every command share: pure deciders, time in the command.

/** An event as the domain sees it: a type and its data. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** Who asked, when, and why: every command carries it, every event it appends keeps it. */
export interface CommandMetadata {
  /** the time of the decision: deciders never read a clock */
  now: Date;
  /** user id, API key id or `system:<worker>` */
  actor: string;
  /** the request (or job) the command belongs to */
  correlationId: string;
  /** the message that caused it (an event id for a reaction, absent for a request) */
  causationId?: string;
}

/** The one command shape: routes, workers, scripts and deciders all speak it. */
export interface Command<T extends string = string, D = unknown> {
  type: T;
  data: D;
  metadata: CommandMetadata;
}

export interface Decider<C extends Command, State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the events the command produces, or throws a DomainError. */
  decide(command: C, state: State): Event[];
}

/** A decider and the stream it lives in: `streamOf(id)` names the stream of one instance. */
export interface Aggregate<C extends Command, State, Event extends DomainEvent> extends Decider<C, State, Event> {
  streamOf(id: string): string;
}

/** A command as its sender writes it: the dispatcher adds the metadata. */
export type CommandBody<C extends Command> = C extends Command ? Omit<C, 'metadata'> : never;

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
