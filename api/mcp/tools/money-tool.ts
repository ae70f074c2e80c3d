// Money moves only after a preview: a money tool's call without `confirmationHandle` answers what
// the move would do and a single-use handle bound to the caller, the tool and these exact
// arguments; the same call with that handle makes the move. Two plain tool calls, so it works the
// same in every protocol era and with every client.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../../domain/shared/canonical-json.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { createConfirmations, handleDigest, type Binding } from '../../../infra/confirmations.ts';
import type { Scope } from '../../../domain/access/scopes.ts';
import type { McpTool, McpToolContext } from '../tool.ts';
import { previewSchema, type Preview } from './preview.ts';

export const confirmationHandle = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe('Leave out to preview the move. To make it, call again with the same arguments and the confirmationHandle the preview gave.');

const resultSchema = z.looseObject({ message: z.string() });

export const moneyOutput = z.object({
  /** preview: nothing moved yet; done: the move was made */
  status: z.enum(['preview', 'done']),
  preview: previewSchema.optional(),
  /** present on a preview the caller may confirm; null when the preview shows a refusal */
  confirmation: z.object({ handle: z.string(), expiresAt: z.string() }).nullable().optional(),
  result: resultSchema.optional(),
});
export type MoneyOutput = z.infer<typeof moneyOutput>;
export type MoneyResult = z.infer<typeof resultSchema>;

type Args<I extends z.ZodObject> = Omit<z.infer<I>, 'confirmationHandle'>;

export interface MoneySpec<I extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  scopes: readonly Scope[];
  /** the tool's input, `confirmationHandle` among its fields */
  input: I;
  preview(ctx: McpToolContext, args: Args<I>): Promise<Preview>;
  /** Makes the move; `moveId` is the confirmation's (stable for it), for the command's transfer id. */
  execute(ctx: McpToolContext, args: Args<I>, moveId: string): Promise<MoneyResult>;
  /** a preview after which nothing needs confirming (a settings change that moves no money) */
  movesNothing?(preview: Preview): boolean;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The digest the handle binds: the canonical JSON of the arguments as parsed (absent fields left out). */
const argsDigest = (args: unknown): string => sha256(canonicalJson(JSON.parse(JSON.stringify(args))));

const confirmationsOf = ({ deps }: McpToolContext) => createConfirmations(deps.redis, deps.clock, deps.ids, deps.config.MCP_CONFIRMATION_TTL_SECONDS);

/** Consumes the handle for exactly this caller, tool and arguments, or refuses with the reason. */
async function consume(ctx: McpToolContext, handle: string, expected: Binding): Promise<void> {
  const consumed = await confirmationsOf(ctx).consume(handle, expected);
  switch (consumed.kind) {
    case 'consumed':
      return;
    case 'unknown':
      throw refuse('CONFIRMATION_INVALID', 'this confirmation handle is unknown or was used already: preview the move again');
    case 'expired':
      throw refuse('CONFIRMATION_EXPIRED', 'this confirmation handle expired: preview the move again');
    case 'mismatch': {
      // Another user's or another tool's handle says nothing about what it was for.
      const { binding } = consumed;
      if (binding.userId !== expected.userId || binding.tool !== expected.tool) {
        throw refuse('CONFIRMATION_INVALID', 'this confirmation handle is unknown or was used already: preview the move again');
      }
      throw refuse('CONFIRMATION_MISMATCH', 'the arguments differ from the previewed ones: confirm exactly what was previewed, or preview these arguments');
    }
  }
}

export function moneyTool<I extends z.ZodObject>(spec: MoneySpec<I>): McpTool<I, typeof moneyOutput> {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    scopes: spec.scopes,
    input: spec.input,
    output: moneyOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async run(ctx, input): Promise<MoneyOutput> {
      const { confirmationHandle: handle, ...args } = input as z.infer<I> & { confirmationHandle?: string };
      const binding = { userId: ctx.identity.userId, tool: spec.name, argsDigest: argsDigest(args) };
      if (handle !== undefined) {
        await consume(ctx, handle, binding);
        return { status: 'done', result: await spec.execute(ctx, args, handleDigest(handle).slice(0, 32)) };
      }
      const preview = await spec.preview(ctx, args);
      if (preview.refusal !== null) return { status: 'preview', preview, confirmation: null };
      if (spec.movesNothing?.(preview)) return { status: 'done', preview, result: await spec.execute(ctx, args, ctx.deps.ids.uuid()) };
      const { handle: issued, expiresAt } = await confirmationsOf(ctx).issue(binding);
      return { status: 'preview', preview, confirmation: { handle: issued, expiresAt: expiresAt.toISOString() } };
    },
  };
}
