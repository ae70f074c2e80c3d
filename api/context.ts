import './types.ts';
import type { FastifyRequest } from 'fastify';
import type { CommandContext } from '../commands/handle.ts';

/** The command context of a request: its id becomes the events' correlationId. */
export function commandContext(request: FastifyRequest): CommandContext {
  return {
    correlationId: String(request.id),
    actor: request.identity?.userId ?? 'anonymous',
    now: request.server.deps.clock(),
  };
}
