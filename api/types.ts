import type { preHandlerHookHandler } from 'fastify';
import type { CommandMap, CommandType } from '../commands/registry.ts';
import type { AppDeps } from './deps.ts';

export type Role = 'user' | 'developer' | 'admin';

/** The caller, resolved by the auth plugin from a bearer JWT (later also API keys and OAuth). */
export interface Identity {
  userId: string;
  email: string;
  role: Role;
  sessionId?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** 401 unless a valid caller is attached */
    requireUser: preHandlerHookHandler;
    /** 401 without a caller, 403 unless the caller is an administrator */
    requireAdmin: preHandlerHookHandler;
    /** Idempotency-Key handling for a route that moves money (api/plugins/idempotency.ts); after requireUser */
    idempotent: preHandlerHookHandler;
  }
  interface FastifyRequest {
    identity: Identity | null;
    /** the caller's Idempotency-Key (its hash) claimed for this request; null without one */
    idempotencyKey: string | null;
    /** whether the read models showed the last dispatched command's effect when it answered */
    writesProjected: boolean;
    /** Dispatches the request's command; its answer, or the caller's next read, waits until the read models show it (api/plugins/dispatch.ts). */
    dispatch<T extends CommandType>(type: T, data: CommandMap[T]['data'], options?: { answeredFromCommand?: boolean; actor?: string }): Promise<CommandMap[T]['result']>;
  }
}
