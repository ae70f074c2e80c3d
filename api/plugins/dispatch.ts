import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { positionBefore } from '../../commands/dispatch.ts';
import type { CommandMap, CommandType } from '../../commands/command-map.ts';
import '../types.ts';

/**
 * `request.dispatch(type, data)`: the request's command, in the one command shape (its id is the
 * correlation id, its caller the actor, the clock's time), sent to the one dispatcher. The answer
 * waits (bounded) until the read models show the command's effect: read-your-writes, here only.
 * With `{ answeredFromCommand: true }` (an answer rendered from the command's own result, reading
 * no read model) the answer goes at once and the caller's next read waits instead: a signed-in
 * caller's GET (or HEAD) first waits for their latest such write (projections/wait.ts, shared in Redis).
 * `actor`: who the command is from when it is not the signed-in user (an agent's signed webhook).
 */
/** Who sends a command: the signed-in user (if any), the actor when it is someone else, the correlation id. */
export interface Caller {
  userId?: string;
  correlationId: string;
}

/** `request.dispatch`'s options (api/types.ts); `withEarlierWrites` waits as projections/wait.ts `defer` says. */
type DispatchOptions = NonNullable<Parameters<FastifyRequest['dispatch']>[2]>;

/**
 * One command from `caller`, as `request.dispatch` sends it (the doc above); also what a caller
 * outside a request (an MCP tool's test context) uses. `writesProjected`: the read models showed it.
 */
export async function dispatchAs<T extends CommandType>(
  deps: FastifyInstance['deps'],
  caller: Caller,
  type: T,
  data: CommandMap[T]['data'],
  options: DispatchOptions = {},
): Promise<{ result: CommandMap[T]['result']; writesProjected: boolean }> {
  const metadata = { now: deps.clock.now(), actor: options.actor ?? caller.userId ?? 'anonymous', correlationId: caller.correlationId };
  let dispatched: Awaited<ReturnType<typeof deps.dispatch<T>>>;
  try {
    dispatched = await deps.dispatch({ type, data, metadata });
  } catch (err) {
    // A refusal after the command wrote (money given back): the caller's next read shows it.
    const before = positionBefore(err);
    await deps.readYourWrites(before);
    if (caller.userId) await deps.deferredWrites.wrote(caller.userId, before);
    throw err;
  }
  const { result, position } = dispatched;
  if (!options.answeredFromCommand) {
    const writesProjected = await deps.readYourWrites(position);
    // the caller's latest write, for any process's memory of what it reads (the users/me document) to be no older
    if (caller.userId) await deps.deferredWrites.wrote(caller.userId, position);
    return { result, writesProjected };
  }
  // A caller without a session has no reads of theirs to hold back (a signed webhook).
  if (caller.userId) await deps.deferredWrites.defer(caller.userId, position, { withEarlier: options.withEarlierWrites === true });
  return { result, writesProjected: false };
}

async function dispatchPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('writesProjected', false);
  app.decorateRequest('ownWrites', null);
  app.decorateRequest('dispatch', async function dispatch<
    T extends CommandType,
  >(this: FastifyRequest, type: T, data: CommandMap[T]['data'], options: DispatchOptions = {}): Promise<CommandMap[T]['result']> {
    const caller = { ...(this.identity ? { userId: this.identity.userId } : {}), correlationId: String(this.id) };
    const { result, writesProjected } = await dispatchAs(this.server.deps, caller, type, data, options);
    this.writesProjected = writesProjected;
    return result;
  });

  app.addHook('preHandler', async (request) => {
    const reads = request.method === 'GET' || request.method === 'HEAD';
    if (reads && request.identity) request.ownWrites = await app.deps.deferredWrites.beforeRead(request.identity.userId);
  });
}

export default fp(dispatchPlugin, { name: 'dispatch' });
