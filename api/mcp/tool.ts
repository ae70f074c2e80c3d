// The shape of an MCP tool: one definition, served to both protocol eras by api/mcp/server.ts.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Scope } from '../../domain/access/scopes.ts';
import type { AppDeps } from '../deps.ts';
import type { Identity } from '../types.ts';

export interface McpToolContext {
  deps: AppDeps;
  /** the caller, as the REST auth plugins resolved it */
  identity: Identity;
  /** the same dispatch REST routes use: the answer waits until the read models show the command */
  dispatch: FastifyRequest['dispatch'];
  requestId: string;
  /** where this deployment is reached (PUBLIC_BASE_URL, else the listening address), as the REST records name their URLs */
  baseUrl: string;
}

export interface McpToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface McpTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  /** snake_case, e.g. `list_agents` */
  name: string;
  /** written for a model */
  title: string;
  description: string;
  /** the canonical scopes the tool needs, every one of them */
  scopes: readonly Scope[];
  /** from the same schemas as the REST route */
  input: I;
  output: O;
  annotations: McpToolAnnotations;
  /** a refusal is a DomainError (domain/shared/errors.ts): the caller gets an `isError` result with its REST `code` and `reason` */
  run(ctx: McpToolContext, input: z.infer<I>): Promise<z.infer<O>>;
}

/**
 * A tool, typed by its schemas, stored in the untyped list. A tool that reads first waits for the
 * caller's latest write answered from its command (a money tool's move), as a REST GET does
 * (api/plugins/dispatch.ts): every MCP call is a POST, so that hook never holds it back.
 */
export const defineTool = <I extends z.ZodObject, O extends z.ZodType>(tool: McpTool<I, O>): McpTool => {
  if (!tool.annotations.readOnlyHint) return tool as unknown as McpTool;
  const run: McpTool<I, O>['run'] = async (ctx, input) => {
    await ctx.deps.deferredWrites.beforeRead(ctx.identity.userId);
    return tool.run(ctx, input);
  };
  return { ...tool, run } as unknown as McpTool;
};

/** The annotations of a tool that only reads our own records. */
export const READ_ONLY: McpToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
