// The shape of an MCP tool and what it runs with (the transport lists and calls these).
import type { z } from 'zod';
import type { CommandMap, CommandType } from '../../commands/registry.ts';
import type { AppDeps } from '../deps.ts';
import type { Identity } from '../types.ts';

/** What a tool runs with: the app's deps, the caller, and the same dispatch REST routes use. */
export interface McpToolContext {
  deps: AppDeps;
  /** the caller, as the REST auth plugins set request.identity */
  identity: Identity;
  dispatch: <T extends CommandType>(
    type: T,
    data: CommandMap[T]['data'],
    options?: { answeredFromCommand?: boolean; actor?: string },
  ) => Promise<CommandMap[T]['result']>;
  requestId: string;
}

export interface McpTool<I extends z.ZodObject<any>, O extends z.ZodType> {
  /** snake_case, e.g. `list_agents` */
  name: string;
  /** written for a model */
  title: string;
  description: string;
  /** the canonical scopes (domain/access/scopes.ts) the tool needs */
  scopes: readonly string[];
  input: I;
  output: O;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** A failure is a DomainError: the transport answers an `isError` result with its code and reason. */
  run(ctx: McpToolContext, input: z.infer<I>): Promise<z.infer<O>>;
}
