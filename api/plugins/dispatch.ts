import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CommandMap, CommandType } from '../../commands/registry.ts';
import '../types.ts';

/**
 * `request.dispatch(type, data)`: the request's command, in the one command shape (its id is the
 * correlation id, its caller the actor, the clock's time), sent to the one dispatcher. The answer
 * waits (bounded) until the read models show the command's effect: read-your-writes, here only.
 */
async function dispatchPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('dispatch', async function dispatch<T extends CommandType>(
    this: FastifyRequest,
    type: T,
    data: CommandMap[T]['data'],
  ): Promise<CommandMap[T]['result']> {
    const { deps } = this.server;
    const metadata = { now: deps.clock.now(), actor: this.identity?.userId ?? 'anonymous', correlationId: String(this.id) };
    const { result, position } = await deps.dispatch({ type, data, metadata });
    await deps.readYourWrites(position);
    return result;
  });
}

export default fp(dispatchPlugin, { name: 'dispatch' });
