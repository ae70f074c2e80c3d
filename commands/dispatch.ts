// The one dispatcher: routes, workers and scripts send `dispatch(command, context)` with the one
// command shape; the command's handler decides on streams through the tools below. The outcome
// carries the global position of the newest event the command appended or decided on, so the
// API answers only once the read models show it (read-your-writes, in api/plugins/dispatch.ts).
// The dispatcher owns its command room (the state cache, the writer queues, the deadline clock):
// given one, or a new one on the deps' store; whatever else reads streams beside it uses `room`.
import type { CommandMetadata } from '../domain/shared/decider.ts';
import { comparePositions, type Position } from '../infra/eventstore/port.ts';
import type { CommandMap, CommandOf, CommandType } from './command-map.ts';
import { createCommandRoom, storable, type CommandRoom } from './handle.ts';
import { handlers } from './registry.ts';
import type { CommandDeps, Tools } from './tools.ts';

export interface DispatchContext {
  /** epoch ms on the room's clock: a decision still losing races then is refused as BUSY (default: now + COMMAND_DEADLINE_MS) */
  deadline?: number;
}

export interface Dispatched<R> {
  result: R;
  /** the newest event the command appended or decided on; undefined when it touched no stream */
  position?: Position;
}

export type Dispatch = <T extends CommandType>(command: CommandOf<T>, context?: DispatchContext) => Promise<Dispatched<CommandMap[T]['result']>>;

/** The dispatcher, and the command room it decides in. */
export interface Dispatcher extends Dispatch {
  readonly room: CommandRoom;
  /**
   * A handler's tools outside any command, bound to this dispatcher's room: for code that runs a
   * transfer itself with the one runner (the in-memory money properties, which wrap each step).
   * Anything it decides goes through the room's single writers, as a command's would.
   */
  tools(metadata: CommandMetadata, deadline?: number): Tools;
}

/**
 * A command type the public registry does not hold (a transfer step sent from outside the runner,
 * a type cast past the compiler): a programming error, refused before anything is read or written.
 */
export class UnknownCommandError extends Error {
  constructor(readonly commandType: string) {
    super(`${commandType} is not a public command: the dispatcher runs only the commands of commands/registry.ts`);
    this.name = 'UnknownCommandError';
  }
}

function handlerOf<T extends CommandType>(type: T): (command: CommandOf<T>, tools: Tools) => Promise<CommandMap[T]['result']> {
  if (!Object.hasOwn(handlers, type)) throw new UnknownCommandError(type);
  return handlers[type] as (command: CommandOf<T>, tools: Tools) => Promise<CommandMap[T]['result']>;
}

export function createDispatcher(deps: CommandDeps, room: CommandRoom = createCommandRoom(deps.store)): Dispatcher {
  const { ids } = deps;

  function toolsFor(metadata: CommandMetadata, deadline: number, seen: (p: Position | undefined) => void): Tools {
    const tools: Tools = {
      deps,
      metadata,
      deadline,
      deadlineClock: room.clock,
      async load(aggregate, id, options) {
        const loaded = await room.load(aggregate.streamOf(id), aggregate, {
          cachedOnly: options?.answer === true,
          ...(options?.maxStaleMs !== undefined ? { maxStaleMs: options.maxStaleMs } : {}),
        });
        seen(loaded.position);
        return loaded;
      },
      async execute(aggregate, id, body, options) {
        const command = { ...body, metadata } as Parameters<typeof aggregate.decide>[0];
        const decided = await room.handle(aggregate.streamOf(id), aggregate, (state) => aggregate.decide(command, state), {
          metadata,
          ids,
          deadline: options?.deadline ?? deadline,
          ...(options?.likelyNew ? { likelyNew: true } : {}),
        });
        seen(decided.position);
        return decided;
      },
      async preview(aggregate, id, body) {
        const command = { ...body, metadata } as Parameters<typeof aggregate.decide>[0];
        const { state } = await room.load(aggregate.streamOf(id), aggregate);
        return storable(aggregate.decide(command, state));
      },
      exclusively(key, work) {
        return room.serialized(`claim:${key}`, work);
      },
      async dispatch(type, data, options) {
        const nested = options?.deadline === undefined ? tools : toolsFor(metadata, options.deadline, seen);
        return handlerOf(type)({ type, data, metadata }, nested);
      },
      as(actor) {
        return toolsFor({ ...metadata, actor }, deadline, seen);
      },
      until(later) {
        return toolsFor(metadata, later, seen);
      },
    };
    return tools;
  }

  const dispatch = async <T extends CommandType>(command: CommandOf<T>, context: DispatchContext = {}): Promise<Dispatched<CommandMap[T]['result']>> => {
    const handler = handlerOf(command.type);
    let position: Position | undefined;
    const seen = (p: Position | undefined) => {
      if (p && (!position || comparePositions(p, position) > 0)) position = p;
    };
    const deadline = context.deadline ?? room.clock.nowMs() + deps.config.COMMAND_DEADLINE_MS;
    try {
      const result = await handler(command, toolsFor(command.metadata, deadline, seen));
      return { result, position };
    } catch (err) {
      if (position && typeof err === 'object' && err !== null) written.set(err, position);
      throw err;
    }
  };
  const tools = (metadata: CommandMetadata, deadline = room.clock.nowMs() + deps.config.COMMAND_DEADLINE_MS) => toolsFor(metadata, deadline, () => {});
  return Object.assign(dispatch, { room, tools });
}

const written = new WeakMap<object, Position>();

/**
 * The newest event a command appended or decided on before it failed (a refusal after a step
 * moved money: a compensated transfer), so the answer can wait for the read models all the same.
 */
export const positionBefore = (err: unknown): Position | undefined => (typeof err === 'object' && err !== null ? written.get(err) : undefined);
