// The money tools: the pool moves (follow, add, withdraw, stop following, pause and resume) and
// the wallet's and trades' moves (api/mcp/tools/trade-money.ts), each previewed before it moves
// anything (api/mcp/tools/money-tool.ts). They dispatch the commands of the REST routes with the
// same data (api/routes/subscriptions).
import { z } from 'zod';
import { subscribeInput, subscribeRules } from '../../../commands/subscriptions/subscribe-input.ts';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import { walletContextSchema } from '../../../domain/wallet/context.ts';
import { subscriptionRecordOfPool } from '../../../projections/subscriptions/record.ts';
import { agentParams, amountBody } from '../../routes/subscriptions/schemas.ts';
import type { McpToolContext } from '../tool.ts';
import { confirmationHandle, moneyTool, type MoneyResult } from './money-tool.ts';
import { previewAdd, previewFollow, previewStop, previewWithdraw } from './pool-previews.ts';
import { closeTradeTool } from './trade-close.ts';
import { tradeMoneyTools } from './trade-money.ts';
import type { PoolMoveResult } from '../../../commands/subscriptions/commands.ts';

const SCOPES = ['subscriptions:write'] as const;
const HOW =
  ' The first call only previews (nothing moves) and returns a confirmationHandle; call again with the same arguments and that handle within minutes to make the move.';

/** The REST answer's record of the pool the command left (none once stopped). */
const poolAnswer = (message: string, pool: PoolMoveResult['pool']): MoneyResult => ({
  message,
  ...(pool.followed ? { subscription: subscriptionRecordOfPool(pool) } : {}),
});

const pending = (r: PoolMoveResult) => (r.status === 'pending' ? ' (pending until the venue confirms it)' : '');

const followInput = z.object({ ...subscribeInput.shape, confirmationHandle }).superRefine(subscribeRules);
const poolInput = z.object({ ...agentParams.shape, walletContext: walletContextSchema.optional(), confirmationHandle });
const amountInput = z.object({ ...agentParams.shape, ...amountBody.shape, confirmationHandle });

const follow = async (ctx: McpToolContext, input: z.infer<typeof subscribeInput>): Promise<MoneyResult> => {
  const followed = await ctx.dispatch('FollowAgent', { userId: ctx.identity.userId, input }, { answeredFromCommand: true });
  const { agentName } = followed.terms;
  return poolAnswer(followed.created ? `Now following ${agentName}` : `Subscription to ${agentName} updated`, followed.pool);
};

/** Pause and resume are settings: applied at once when they move no money, previewed when the pool's settings would top it up. */
const pauseTool = (paused: boolean) =>
  moneyTool({
    name: paused ? 'pause_following' : 'resume_following',
    title: paused ? 'Pause following an agent' : 'Resume following an agent',
    description: paused
      ? "Pause a followed agent: its new signals open no trades in the user's pool; open trades and the capital stay. Moves no money."
      : "Resume a paused agent: its signals open trades in the user's pool again. Moves no money unless the pool's allocation settings now ask for more capital, which is then previewed first.",
    scopes: SCOPES,
    input: poolInput,
    preview: (ctx, { agentId, walletContext }) => previewFollow(ctx, { agentId, isPaused: paused, ...(walletContext ? { walletContext } : {}) }),
    movesNothing: (preview) => preview.moves.length === 0,
    execute: (ctx, { agentId, walletContext }) => follow(ctx, { agentId, isPaused: paused, ...(walletContext ? { walletContext } : {}) }),
  });

const amountData = (ctx: McpToolContext, args: { agentId: string; amountUsd: number; walletContext?: 'virtual' | 'real' | undefined }, moveId: string) => ({
  userId: ctx.identity.userId,
  agentId: args.agentId,
  amountMicro: usdToMicro(args.amountUsd),
  moveId,
  ...(args.walletContext ? { walletContext: args.walletContext } : {}),
});

export const moneyTools = [
  moneyTool({
    name: 'follow_agent',
    title: 'Follow an agent',
    description: `Follow an agent with a capital allocation moved from the user's wallet to the agent's pool (following again updates the same subscription).${HOW}`,
    scopes: SCOPES,
    input: followInput,
    preview: (ctx, args) => previewFollow(ctx, args),
    movesNothing: (preview) => preview.moves.length === 0,
    execute: (ctx, args) => follow(ctx, args),
  }),
  moneyTool({
    name: 'add_allocation',
    title: 'Add capital to a followed agent',
    description: `Move capital from the user's wallet to a followed agent's pool.${HOW}`,
    scopes: SCOPES,
    input: amountInput,
    preview: (ctx, args) => previewAdd(ctx, { ...args, amountMicro: usdToMicro(args.amountUsd) }),
    async execute(ctx, args, moveId) {
      const moved = await ctx.dispatch('AddAllocation', amountData(ctx, args, moveId), { answeredFromCommand: true });
      return poolAnswer(`Added ${args.amountUsd} USD to the allocation${pending(moved)}`, moved.pool);
    },
  }),
  moneyTool({
    name: 'withdraw_allocation',
    title: 'Withdraw capital from a followed agent',
    description: `Move unused capital from a followed agent's pool back to the user's wallet (open trades lock what they use).${HOW}`,
    scopes: SCOPES,
    input: amountInput,
    preview: (ctx, args) => previewWithdraw(ctx, { ...args, amountMicro: usdToMicro(args.amountUsd) }),
    async execute(ctx, args, moveId) {
      const moved = await ctx.dispatch('WithdrawAllocation', amountData(ctx, args, moveId), { answeredFromCommand: true });
      return poolAnswer(`Withdrew ${args.amountUsd} USD from the allocation${pending(moved)}`, moved.pool);
    },
  }),
  moneyTool({
    name: 'stop_following',
    title: 'Stop following an agent',
    description: `Stop following an agent: settles pending fees and returns everything its pool holds to the user's wallet (refused while its trades are open).${HOW}`,
    scopes: SCOPES,
    input: poolInput,
    preview: (ctx, args) => previewStop(ctx, args),
    async execute(ctx, { agentId, walletContext }, moveId) {
      const data = { userId: ctx.identity.userId, agentId, moveId, ...(walletContext ? { walletContext } : {}) };
      const stopped = await ctx.dispatch('StopFollowing', data, { answeredFromCommand: true });
      return poolAnswer(`Stopped following; ${microToUsd(stopped.amountMicro)} USD returned to the wallet${pending(stopped)}`, stopped.pool);
    },
  }),
  pauseTool(true),
  pauseTool(false),
  ...tradeMoneyTools,
  closeTradeTool,
];
