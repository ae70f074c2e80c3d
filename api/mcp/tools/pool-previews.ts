// The previews of the pool moves (follow, add, withdraw, stop following): the transfer the command
// would run, dry-decided step by step on the wallet and the pool as they are now.
import { agentDecider, isFollowable } from '../../../domain/agent/index.ts';
import { planFollow, termsOf } from '../../../domain/pool/allocation.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import { ledgerTermsOf, poolFigures } from '../../../domain/pool/ledger.ts';
import { poolId, type PoolState } from '../../../domain/pool/state.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd, usdToMicro, type MicroUsd } from '../../../domain/shared/money.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { requestedWalletContext, type WalletContext } from '../../../domain/wallet/context.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { balanceOf, type WalletState } from '../../../domain/wallet/state.ts';
import { choicesOf, type SubscribeInput } from '../../../commands/subscriptions/subscribe-input.ts';
import type { McpToolContext } from '../tool.ts';
import { contextOf, current, dryRun, metadataOf, move, orRefused, refusedPreview, type Move, type Preview } from './preview.ts';

export interface PoolMove {
  agentId: string;
  walletContext?: WalletContext | undefined;
}

const NOT_FOLLOWED = 'you do not follow this agent in this wallet context';

const startMicro = (ctx: McpToolContext) => usdToMicro(ctx.deps.config.VIRTUAL_START_USD);

/** The wallet context's balance and the pool's figures as the move leaves them. */
function after(ctx: McpToolContext, wallet: WalletState, pool: PoolState, walletContext: WalletContext): Preview['after'] {
  const walletBalanceUsd = microToUsd(balanceOf(wallet, walletContext, startMicro(ctx)));
  if (!pool.followed) return { walletBalanceUsd };
  const figures = poolFigures(pool.ledger, ledgerTermsOf(pool));
  return { walletBalanceUsd, poolAllocatedUsd: microToUsd(figures.allocatedUsd), poolWithdrawableUsd: microToUsd(figures.withdrawableUsd) };
}

async function statesOf(ctx: McpToolContext, req: PoolMove) {
  const walletContext = await contextOf(ctx, req.walletContext);
  const { userId } = ctx.identity;
  const id = poolId(userId, req.agentId, walletContext);
  const [pool, wallet] = await Promise.all([current(ctx, poolDecider, id), current(ctx, walletDecider, userId)]);
  return { walletContext, id, pool, wallet, userId };
}

const pool = (agentId: string) => `pool of agent ${agentId}`;
const wallet = (walletContext: WalletContext) => `${walletContext} wallet`;

/** Wallet → pool, as AddAllocation's transfer: the wallet's debit, then the pool's credit. */
export async function previewAdd(ctx: McpToolContext, req: PoolMove & { amountMicro: MicroUsd }): Promise<Preview> {
  const s = await statesOf(ctx, req);
  const summary = `Add ${microToUsd(req.amountMicro)} USD from the ${wallet(s.walletContext)} to the allocation of agent ${req.agentId}`;
  return orRefused(
    () => {
      if (!s.pool.followed) throw refuse('SUBSCRIPTION_NOT_FOUND', NOT_FOLLOWED);
      const transfer: TransferPlan = {
        transferId: `${s.id}#add-preview`,
        amountMicro: req.amountMicro,
        from: { kind: 'wallet', userId: s.userId, walletContext: s.walletContext },
        to: { kind: 'pool', userId: s.userId, agentId: req.agentId, walletContext: s.walletContext },
      };
      const meta = metadataOf(ctx);
      const w = dryRun(walletDecider, s.wallet, { type: 'DebitWallet', data: { transfer, virtualStartMicro: startMicro(ctx) } }, meta);
      const p = dryRun(poolDecider, s.pool, { type: 'CreditPool', data: { transfer, resumed: false } }, meta);
      const moves = [move(wallet(s.walletContext), pool(req.agentId), req.amountMicro)];
      return moved(summary, s.walletContext, moves, [], after(ctx, w.state, p.state, s.walletContext));
    },
    (err) => refusedPreview(s.walletContext, summary, err),
  );
}

function moved(summary: string, walletContext: WalletContext, moves: Move[], fees: Preview['fees'], afterMove: Preview['after']): Preview {
  const feesUsd = microToUsd(fees.reduce((sum, f) => sum + usdToMicro(f.amountUsd), 0));
  return { summary, walletContext, moves, fees, feesUsd, after: afterMove, pendingAtVenue: walletContext === 'real', refusal: null };
}

/** Pool → wallet, as WithdrawAllocation's and StopFollowing's transfer: the pool's debit (a close settles fees first), then the wallet's credit. */
async function previewOut(ctx: McpToolContext, req: PoolMove, amountMicro: MicroUsd, summary: string): Promise<Preview> {
  const s = await statesOf(ctx, req);
  const close = amountMicro === 0;
  return orRefused(
    () => {
      const transfer: TransferPlan = {
        transferId: `${s.id}#out-preview`,
        amountMicro,
        from: { kind: 'pool', userId: s.userId, agentId: req.agentId, walletContext: s.walletContext, ...(close ? { close: true } : {}) },
        to: { kind: 'wallet', userId: s.userId, walletContext: s.walletContext },
      };
      const meta = metadataOf(ctx);
      const p = dryRun(poolDecider, s.pool, { type: 'DebitPool', data: { transfer } }, meta);
      const fees = p.events.flatMap((e) =>
        e.type === 'FeesSettled' ? [{ name: 'success fee (settled on exit)', amountUsd: microToUsd(e.data.feeMicro) }] : [],
      );
      const out = p.events.flatMap((e) => (e.type === 'WithdrawalRequested' ? [e.data.transfer.amountMicro] : []))[0] ?? 0;
      const w =
        out > 0 && s.walletContext === 'virtual'
          ? dryRun(
              walletDecider,
              s.wallet,
              {
                type: 'CreditWallet',
                data: {
                  transferId: transfer.transferId,
                  walletContext: s.walletContext,
                  amountMicro: out,
                  from: `pool:${s.id}`,
                  virtualStartMicro: startMicro(ctx),
                },
              },
              meta,
            ).state
          : s.wallet;
      const moves = out > 0 ? [move(pool(req.agentId), wallet(s.walletContext), out)] : [];
      return moved(summary, s.walletContext, moves, fees, after(ctx, w, p.state, s.walletContext));
    },
    (err) => refusedPreview(s.walletContext, summary, err),
  );
}

export const previewWithdraw = (ctx: McpToolContext, req: PoolMove & { amountMicro: MicroUsd }): Promise<Preview> =>
  previewOut(ctx, req, req.amountMicro, `Withdraw ${microToUsd(req.amountMicro)} USD from the allocation of agent ${req.agentId} back to the wallet`);

export const previewStop = (ctx: McpToolContext, req: PoolMove): Promise<Preview> =>
  previewOut(ctx, req, 0, `Stop following agent ${req.agentId}: settle pending fees and return everything the pool holds to the wallet`);

/** A follow as FollowAgent plans it (domain/pool/allocation.ts planFollow): the settings it leaves and the capital it adds. */
export async function previewFollow(ctx: McpToolContext, input: SubscribeInput): Promise<Preview & { topUpMicro: MicroUsd }> {
  const s = await statesOf(ctx, { agentId: input.agentId, walletContext: requestedWalletContext(input) });
  const summary = `Follow agent ${input.agentId} in the ${wallet(s.walletContext)} context`;
  return orRefused(
    async () => {
      const agent = await current(ctx, agentDecider, input.agentId);
      if (!agent.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
      const status = agent.betaStatus;
      if (!isFollowable(agent)) throw refuse('AGENT_NOT_FOLLOWABLE', `agent is ${status} and cannot be followed`);
      const { SOL_PRICE_USD } = ctx.deps.config;
      const plan = planFollow({
        pool: s.pool,
        wallet: s.wallet,
        walletContext: s.walletContext,
        agentTerms: termsOf(agent),
        choices: choicesOf(input),
        virtualStartMicro: startMicro(ctx),
        solPriceMicro: usdToMicro(SOL_PRICE_USD),
      });
      const top = plan.topUpMicro;
      const moves = top > 0 ? [move(wallet(s.walletContext), pool(input.agentId), top)] : [];
      const balance = balanceOf(s.wallet, s.walletContext, startMicro(ctx)) - top;
      const allocated = (s.pool.followed ? poolFigures(s.pool.ledger, ledgerTermsOf(s.pool)).allocatedUsd : 0) + top;
      const text = `${summary}${plan.settings.isPaused ? ' (paused)' : ''}: ${top > 0 ? `${microToUsd(top)} USD moves to its pool` : 'settings only, no money moves'}`;
      return {
        ...moved(text, s.walletContext, moves, [], { walletBalanceUsd: microToUsd(balance), poolAllocatedUsd: microToUsd(allocated) }),
        topUpMicro: top,
      };
    },
    (err) => ({ ...refusedPreview(s.walletContext, summary, err), topUpMicro: 0 }),
  );
}
