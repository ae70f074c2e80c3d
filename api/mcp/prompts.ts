// Prompts: a portfolio review and a pre-trade risk check. Each embeds what it is about as resources
// read now with the caller's scopes (the same reads as api/mcp/resources.ts), and tells the model
// which tools to use next: money moves only through a tool's preview and its confirmation.
import { z } from 'zod';
import { completable, type GetPromptResult, type McpServer, type ReadResourceResult } from '@modelcontextprotocol/server';
import { walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';
import type { McpToolContext } from './tool.ts';
import { POOL_SCOPE, poolRecord, readAgent, userPools } from './resources.ts';
import { completeAgentId, completeWalletContext } from './completions.ts';

/** Prompt arguments are strings; an amount stays the caller's decimal text (never a float). */
const usdAmount = z.string().regex(/^\d{1,9}(\.\d{1,2})?$/, 'a USD amount such as 250 or 99.50');

const text = (value: string) => ({ role: 'user' as const, content: { type: 'text' as const, text: value } });
const embedded = (result: ReadResourceResult) =>
  result.contents.map((resource) => ({ role: 'user' as const, content: { type: 'resource' as const, resource } }));
const poolJson = (uri: string, record: unknown): ReadResourceResult => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(record) }] });
const needsPools = ({ authInfo }: { authInfo?: { scopes: string[] } }) =>
  authInfo?.scopes.includes(POOL_SCOPE) ? undefined : { scopes: [POOL_SCOPE] as [string], errorDescription: `the prompt reads your pools: ${POOL_SCOPE}` };

async function portfolioReview(ctx: McpToolContext, walletContext: WalletContext | undefined, focus: string | undefined): Promise<GetPromptResult> {
  const pools = await userPools(ctx, walletContext);
  const intro =
    `Review my agent pools${walletContext ? ` in the ${walletContext} wallet` : ''} (${pools.length}, attached as pool resources). For each: allocation, what is withdrawable, ` +
    'realized and unrealized PnL, fees charged, status (paused, reconciliation). Then the whole: concentration by agent and venue, which pools lag, ' +
    'and concrete next steps (add, withdraw, pause or stop following). Propose moves only; each money tool answers a preview I confirm.' +
    (focus ? ` Focus on: ${focus}.` : '');
  return {
    description: "A review of the caller's pools with suggested next steps",
    messages: [text(intro), ...pools.flatMap((p) => embedded(poolJson(`pool://${p.walletContext}/${p.agent}`, p)))],
  };
}

async function preTradeRiskCheck(ctx: McpToolContext, agentId: string, amountUsd: string, walletContext: WalletContext): Promise<GetPromptResult> {
  const agent = await readAgent(ctx, `agent://${agentId}`, agentId);
  const pool = ctx.identity.scopes.includes(POOL_SCOPE) ? await poolRecord(ctx, walletContext, agentId) : undefined;
  const ask =
    `Before I put ${amountUsd} USD of my ${walletContext} wallet with agent ${agentId}: check the risk. The agent is attached` +
    (pool ? ', and my current pool with it' : '') +
    '. Weigh its trading record (drawdown, win rate, how long it has traded), fees (monthly price, success fee), leverage and venue, the minimum ' +
    `allocation, and how much of my wallet this is. Then call ${pool ? 'add_allocation' : 'follow_agent'} for its preview (what moves, fees, what stays withdrawable, ` +
    'any refusal) and tell me whether to confirm, lower the amount, or not go ahead. Do not confirm without my word.';
  return {
    description: `A risk check before putting ${amountUsd} USD with an agent`,
    messages: [text(ask), ...embedded(agent), ...(pool ? embedded(poolJson(`pool://${walletContext}/${agentId}`, pool)) : [])],
  };
}

/**
 * Arguments a client can complete (completion/complete). `completable` marks the schema object it is
 * given (for good), so each gets a schema of its own: never the domain's `walletContextSchema`.
 */
const walletContext = completable(z.enum(walletContextSchema.options), completeWalletContext).optional();
// Built once, not per request (a server is built per request); the agent id's completer needs the
// caller, so the risk check's arguments are built with it.
const portfolioArgs = z.object({ walletContext, focus: z.string().max(200).optional() });

export function registerPrompts(server: McpServer, ctx: McpToolContext): void {
  server.registerPrompt(
    'portfolio_review',
    {
      title: 'Review my portfolio of agent pools',
      description:
        "Reviews the signed-in user's pools (allocation, withdrawable, PnL, fees, status) and suggests next steps. Optional: walletContext (virtual or real), focus.",
      argsSchema: portfolioArgs,
      scopeChallenge: needsPools,
    },
    ({ walletContext, focus }) => portfolioReview(ctx, walletContext, focus),
  );
  server.registerPrompt(
    'pre_trade_risk_check',
    {
      title: 'Risk check before allocating to an agent',
      description:
        "Checks the risk of putting amountUsd with agentId (its record, fees, leverage, your current pool) before the money tool's preview. walletContext defaults to virtual.",
      argsSchema: z.object({ agentId: completable(z.string().min(1).max(100), completeAgentId(ctx)), amountUsd: usdAmount, walletContext }),
    },
    ({ agentId, amountUsd, walletContext }) => preTradeRiskCheck(ctx, agentId, amountUsd, walletContext ?? 'virtual'),
  );
}
