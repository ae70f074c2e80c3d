// What a command handler works with: the ports it may use (CommandDeps) and its view of one
// dispatch (Tools). Handlers import this file, never the dispatcher or the registry, so no
// handler depends on every other one.
import type { Redis } from 'ioredis';
import type { Aggregate, Command, CommandBody, CommandMetadata, DomainEvent } from '../domain/shared/decider.ts';
import type { DeadlineClock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import type { Ids } from '../infra/ids.ts';
import type { Mailer } from '../infra/mailer.ts';
import type { SocialProvider } from '../infra/social.ts';
import type { Swaps } from '../infra/venues/port.ts';
import type { CommandMap, CommandType } from './command-map.ts';
import type { Decided, Loaded } from './handle.ts';

/** Where signals to execute go (the signal worker's queue); absent where no worker runs (then it stays received). */
export interface SignalJobs {
  enqueue(job: { agentId: string; signalKey: string; correlationId: string }): Promise<void>;
}

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
    | 'WEBHOOK_ALLOW_LOOPBACK'
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

/** A handler's view of one dispatch: its metadata, its deadline, and the streams. */
export interface Tools {
  readonly deps: CommandDeps;
  readonly metadata: CommandMetadata;
  /** epoch ms, on `deadlineClock`: a decision still losing races then is refused as BUSY */
  readonly deadline: number;
  /** the clock `deadline` is read on (the dispatcher's; never business time, which is `metadata.now`) */
  readonly deadlineClock: DeadlineClock;
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
  /**
   * Decides `command` on one instance, as its stream's single writer; appends what it decides.
   * `likelyNew`: the instance's id was just derived, so its first decision skips the read (handle.ts).
   */
  execute<C extends Command, S, E extends DomainEvent>(
    aggregate: Aggregate<C, S, E>,
    id: string,
    command: CommandBody<C>,
    options?: { deadline?: number; likelyNew?: boolean },
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
  /** Runs another public command within this one (same metadata, same read-your-writes position). */
  dispatch<T extends CommandType>(type: T, data: CommandMap[T]['data'], options?: { deadline?: number }): Promise<CommandMap[T]['result']>;
  /**
   * The same tools, recording `actor` as the one who asks: for a command that learns who its caller
   * is on the way (a social sign-in knows its user once the provider's answer verified).
   */
  as(actor: string): Tools;
  /** The same tools with another deadline: the transfer runner's steps past the debit get longer. */
  until(deadline: number): Tools;
}

/** The command map of an area (or of every area): each command's data and result. */
export type CommandsOf<M> = { [T in keyof M]: { data: unknown; result: unknown } };

/** One handler per command of `M`: the command in the one command shape, and the tools. */
export type Handlers<M extends CommandsOf<M>> = {
  [T in keyof M & string]: (command: Command<T, M[T]['data']>, tools: Tools) => Promise<M[T]['result']>;
};
