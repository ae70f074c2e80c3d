// The one dispatcher: routes, workers and scripts send `dispatch(command, context)` with the one
// command shape; the command's handler decides on streams through the tools below. The outcome
// carries the global position of the newest event the command appended or decided on, so the
// API answers only once the read models show it (read-your-writes, in api/plugins/dispatch.ts).
import type { Redis } from 'ioredis';
import type { Aggregate, Command, CommandBody, CommandMetadata, DomainEvent } from '../domain/shared/decider.ts';
import type { Config } from '../infra/config.ts';
import { comparePositions, type EventStore, type Position } from '../infra/eventstore/port.ts';
import type { Ids } from '../infra/ids.ts';
import type { Mailer } from '../infra/mailer.ts';
import type { SocialProvider } from '../infra/social.ts';
import type { Swaps } from '../infra/venues/port.ts';
import { handle, load, serialized, storable, type Decided, type Loaded } from './handle.ts';
import { handlers, type CommandMap, type CommandType } from './registry.ts';
import type { SignalJobs } from './signals/receive.ts';

/** What command handlers may use besides the streams. */
export interface CommandDeps {
  store: EventStore;
  redis: Redis;
  mailer: Mailer;
  ids: Ids;
  /** the spot venue's swaps: manual buys and sells (paper ones too, at the same prices) */
  swaps: Swaps;
  /** the signal worker's queue: where a received signal goes to be executed (absent: it stays received) */
  signals?: SignalJobs;
  /** the social identity provider (GOOGLE); absent: social login is off */
  social?: SocialProvider;
  config: Pick<
    Config,
    | 'COMMAND_DEADLINE_MS'
    | 'JWT_SECRET'
    | 'LOGIN_CODE_TTL_SECONDS'
    | 'REFRESH_TOKEN_TTL_DAYS'
    | 'SOCIAL_STATE_TTL_SECONDS'
    | 'MFA_TOKEN_TTL_SECONDS'
    | 'ADMIN_EMAILS'
    | 'VIRTUAL_START_USD'
    | 'SOL_PRICE_USD'
    | 'VENUE'
    | 'TRADE_FEE_BPS'
    | 'KEY_ENCRYPTION_KEY'
    | 'LOOKUP_PER_ADDRESS_PER_HOUR'
    | 'TRANSFER_RECOVERY_GRACE_MS'
  >;
}

export interface DispatchContext {
  /** epoch ms: a decision still losing races then is refused as BUSY (default: now + COMMAND_DEADLINE_MS) */
  deadline?: number;
}

export type CommandOf<T extends CommandType> = Command<T, CommandMap[T]['data']>;

export interface Dispatched<R> {
  result: R;
  /** the newest event the command appended or decided on; undefined when it touched no stream */
  position?: Position;
}

export type Dispatch = <T extends CommandType>(command: CommandOf<T>, context?: DispatchContext) => Promise<Dispatched<CommandMap[T]['result']>>;

/** A handler's view of one dispatch: its metadata, its deadline, and the streams. */
export interface Tools {
  readonly deps: CommandDeps;
  readonly metadata: CommandMetadata;
  readonly deadline: number;
  /**
   * The current state of one instance of an aggregate. `answer: true`: the state this process
   * last saw, without a read when it has one, for a command's answer only (never to decide).
   * `maxStaleMs`: a state this process verified that recently, without a read: for planning a
   * step whose own decision re-checks on fresh state (its append carries the expected revision).
   */
  load<C extends Command, S, E extends DomainEvent>(
    aggregate: Aggregate<C, S, E>,
    id: string,
    options?: { answer?: boolean; maxStaleMs?: number },
  ): Promise<Loaded<S>>;
  /** Decides `command` on one instance, as its stream's single writer; appends what it decides. */
  execute<C extends Command, S, E extends DomainEvent>(
    aggregate: Aggregate<C, S, E>,
    id: string,
    command: CommandBody<C>,
    options?: { deadline?: number },
  ): Promise<Decided<S, E>>;
  /**
   * What `execute` would append, decided on the stream's current state, appending nothing: its
   * refusal (the decider's, or text the store cannot hold) comes before a command of several
   * streams appends to the first, so it appends to all of them or to none.
   */
  preview<C extends Command, S, E extends DomainEvent>(aggregate: Aggregate<C, S, E>, id: string, command: CommandBody<C>): Promise<E[]>;
  /**
   * Runs `work` alone among this process's work under the same `key` (`claim:…`): for a step that
   * reads several streams before it decides on one of them (a beta seat among its shards).
   */
  exclusively<T>(key: string, work: () => Promise<T>): Promise<T>;
  /** Runs another command within this one (same metadata, same read-your-writes position). */
  dispatch<T extends CommandType>(type: T, data: CommandMap[T]['data'], options?: { deadline?: number }): Promise<CommandMap[T]['result']>;
  /**
   * The same tools, recording `actor` as the one who asks: for a command that learns who its caller
   * is on the way (a social sign-in knows its user once the provider's answer verified).
   */
  as(actor: string): Tools;
}

export function createDispatcher(deps: CommandDeps): Dispatch {
  const { store, ids } = deps;

  function toolsFor(metadata: CommandMetadata, deadline: number, seen: (p: Position | undefined) => void): Tools {
    const tools: Tools = {
      deps,
      metadata,
      deadline,
      async load(aggregate, id, options) {
        const loaded = await load(store, aggregate.streamOf(id), aggregate, {
          cachedOnly: options?.answer === true,
          ...(options?.maxStaleMs !== undefined ? { maxStaleMs: options.maxStaleMs } : {}),
        });
        seen(loaded.position);
        return loaded;
      },
      async execute(aggregate, id, body, options) {
        const command = { ...body, metadata } as Parameters<typeof aggregate.decide>[0];
        const decided = await handle(store, aggregate.streamOf(id), aggregate, (state) => aggregate.decide(command, state), {
          metadata,
          ids,
          deadline: options?.deadline ?? deadline,
        });
        seen(decided.position);
        return decided;
      },
      async preview(aggregate, id, body) {
        const command = { ...body, metadata } as Parameters<typeof aggregate.decide>[0];
        const { state } = await load(store, aggregate.streamOf(id), aggregate);
        return storable(aggregate.decide(command, state));
      },
      exclusively(key, work) {
        return serialized(store, `claim:${key}`, work);
      },
      dispatch(type, data, options) {
        const nested = options?.deadline === undefined ? tools : toolsFor(metadata, options.deadline, seen);
        return run({ type, data, metadata }, nested);
      },
      as(actor) {
        return toolsFor({ ...metadata, actor }, deadline, seen);
      },
    };
    return tools;
  }

  function run<T extends CommandType>(command: CommandOf<T>, tools: Tools): Promise<CommandMap[T]['result']> {
    const handler = handlers[command.type] as (c: CommandOf<T>, t: Tools) => Promise<CommandMap[T]['result']>;
    return handler(command, tools);
  }

  return async (command, context = {}) => {
    let position: Position | undefined;
    const seen = (p: Position | undefined) => {
      if (p && (!position || comparePositions(p, position) > 0)) position = p;
    };
    const deadline = context.deadline ?? Date.now() + deps.config.COMMAND_DEADLINE_MS;
    try {
      const result = await run(command, toolsFor(command.metadata, deadline, seen));
      return { result, position };
    } catch (err) {
      if (position && typeof err === 'object' && err !== null) written.set(err, position);
      throw err;
    }
  };
}

const written = new WeakMap<object, Position>();

/**
 * The newest event a command appended or decided on before it failed (a refusal after a step
 * moved money: a compensated transfer), so the answer can wait for the read models all the same.
 */
export const positionBefore = (err: unknown): Position | undefined => (typeof err === 'object' && err !== null ? written.get(err) : undefined);
