// What a money tool's preview says, and the reading and dry-deciding it is computed with: the same
// streams and deciders the command decides on, folded in memory, nothing appended.
import { z } from 'zod';
import type { Aggregate, Command, CommandBody, CommandMetadata, DomainEvent } from '../../../domain/shared/decider.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import { codeOf } from '../../plugins/error-status.ts';
import { microToUsd, type MicroUsd } from '../../../domain/shared/money.ts';
import { userDecider } from '../../../domain/user/decide.ts';
import { currentWalletContextOf, walletContextSchema, type WalletContext } from '../../../domain/wallet/context.ts';
import type { McpToolContext } from '../tool.ts';

export const refusalSchema = z.object({ code: z.string(), reason: z.string(), message: z.string() });
export type Refusal = z.infer<typeof refusalSchema>;

/** One movement of money, in USD as the REST answers show it. */
const moveSchema = z.object({ from: z.string(), to: z.string(), amountUsd: z.number() });

export const previewSchema = z.object({
  /** what the confirmed call does, in one sentence */
  summary: z.string(),
  walletContext: walletContextSchema,
  moves: z.array(moveSchema),
  /** fees the move settles or pays, by name (empty: none) */
  fees: z.array(z.object({ name: z.string(), amountUsd: z.number() })),
  feesUsd: z.number(),
  /** what stays: the wallet context's balance and the pool's figures after the move */
  after: z.object({
    walletBalanceUsd: z.number().optional(),
    poolAllocatedUsd: z.number().optional(),
    poolWithdrawableUsd: z.number().optional(),
  }),
  /** what the move realizes, net of its fees: a trade's close at the venue's price now */
  realizedPnlUsd: z.number().optional(),
  /** real context: the move waits for the venue's confirmation */
  pendingAtVenue: z.boolean(),
  /** the refusal the move would meet now (then no confirmation handle is given) */
  refusal: refusalSchema.nullable(),
});
export type Preview = z.infer<typeof previewSchema>;

export type Move = z.infer<typeof moveSchema>;
export const move = (from: string, to: string, amountMicro: MicroUsd): Move => ({ from, to, amountUsd: microToUsd(amountMicro) });

export const refusalOf = (err: DomainError): Refusal => ({ code: codeOf(err.reason), reason: err.reason, message: err.message });

/** The preview of a move refused before it is planned. */
export const refusedPreview = (walletContext: WalletContext, summary: string, err: DomainError): Preview => ({
  summary,
  walletContext,
  moves: [],
  fees: [],
  feesUsd: 0,
  after: {},
  pendingAtVenue: false,
  refusal: refusalOf(err),
});

/** Runs `plan`; a refusal it throws becomes the value of `refused`. */
export async function orRefused<T>(plan: () => Promise<T> | T, refused: (err: DomainError) => T): Promise<T> {
  try {
    return await plan();
  } catch (err) {
    if (err instanceof DomainError) return refused(err);
    throw err;
  }
}

/** A stream's current state, read fresh (a preview decides nothing: no cache shortcut). */
export async function current<C extends Command, S, E extends DomainEvent>(ctx: McpToolContext, aggregate: Aggregate<C, S, E>, id: string): Promise<S> {
  return (await ctx.deps.dispatch.room.load(aggregate.streamOf(id), aggregate)).state;
}

export const metadataOf = (ctx: McpToolContext): CommandMetadata => ({ now: ctx.deps.clock.now(), actor: ctx.identity.userId, correlationId: ctx.requestId });

/** What `aggregate` would decide on `state` and the state after it; throws its refusal. */
export function dryRun<C extends Command, S, E extends DomainEvent>(
  aggregate: Aggregate<C, S, E>,
  state: S,
  body: CommandBody<C>,
  metadata: CommandMetadata,
): { events: E[]; state: S } {
  const events = aggregate.decide({ ...body, metadata } as C, state);
  return { events, state: events.reduce(aggregate.evolve, state) };
}

/** The request's context, else the user's current one (as the pool and wallet commands choose it). */
export async function contextOf(ctx: McpToolContext, walletContext: WalletContext | undefined): Promise<WalletContext> {
  if (walletContext) return walletContext;
  return currentWalletContextOf(await current(ctx, userDecider, ctx.identity.userId));
}
