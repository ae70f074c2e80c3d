// Follow an agent: POST /api/v1/users/me/subscriptions. Moves the allocation from the user's
// wallet into the agent pool in two appends that share one transferId (see transferFunds).
import { z } from 'zod';
import { agentFolder, agentStream, isFollowable, type ListedAgent } from '../../domain/agent/index.ts';
import { resolveSettings, targetAllocationMicro, termsOf, topUpMicro, type FollowChoices } from '../../domain/pool/allocation.ts';
import { decide as decidePool } from '../../domain/pool/decide.ts';
import { allocationModeSchema, tradeModeSchema, walletModeSchema, type AllocationSettings, type FollowOpening } from '../../domain/pool/events.ts';
import { nextTransferId, poolFolder, poolId, poolStream, type FollowedPool, type PoolState } from '../../domain/pool/state.ts';
import { conflict, DomainError, notFound } from '../../domain/shared/errors.ts';
import { toUnits, usdToMicro, type MicroUsd } from '../../domain/shared/money.ts';
import { decide as decideWallet, ensureFunds } from '../../domain/wallet/decide.ts';
import { walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';
import { balanceOf, walletFolder, walletStream } from '../../domain/wallet/state.ts';
import type { Config } from '../../infra/config.ts';
import { comparePositions, type EventStore, type Position } from '../../infra/eventstore/port.ts';
import { releaseBetaSeat, takeBetaSeat } from '../agents/beta-seat.ts';
import { handle, load, type CommandContext } from '../handle.ts';
import { loadUser } from '../users/streams.ts';
import { subscribeRules } from './subscribe-input.ts';

export const subscribeInput = z
  .object({
    agentId: z.string({ message: 'agentId is required' }).trim().min(1, 'agentId is required').max(200),
    tradeMode: tradeModeSchema.optional(),
    /** deprecated alias of tradeMode */
    subscriptionType: tradeModeSchema.optional(),
    walletContext: walletContextSchema.optional(),
    /** deprecated alias of walletContext */
    walletMode: walletModeSchema.optional(),
    allocationMode: allocationModeSchema.optional(),
    allocationPercentageMin: z.number().gt(0, 'allocationPercentageMin must be above 0').max(100, 'allocationPercentageMin must be at most 100').optional(),
    allocationPercentageMax: z.number().gt(0, 'allocationPercentageMax must be above 0').max(100, 'allocationPercentageMax must be at most 100').optional(),
    allocationAmountUsd: z.number().gt(0, 'allocationAmountUsd must be positive').max(1_000_000_000, 'allocationAmountUsd is too large').optional(),
    allocationAmountSol: z.number().gt(0, 'allocationAmountSol must be positive').max(1_000_000, 'allocationAmountSol is too large').optional(),
    goLiveUponConfirmation: z.boolean().optional(),
    isPaused: z.boolean().optional(),
  })
  .superRefine(subscribeRules);
export type SubscribeInput = z.infer<typeof subscribeInput>;

export interface SubscribeResult {
  agent: ListedAgent;
  pool: FollowedPool;
  /** true when this call made the first follow */
  created: boolean;
  /** global position read-your-writes waits for: the last event appended, else the pool's last event */
  position?: Position;
}

export interface SubscribeDeps {
  store: EventStore;
  config: Pick<Config, 'VIRTUAL_START_USD' | 'SOL_PRICE_USD'>;
}

/** The allocation the body asks for, in the domain's units; undefined when it names none. */
export function allocationOf(input: SubscribeInput): AllocationSettings | undefined {
  const { allocationPercentageMin: pMin, allocationPercentageMax: pMax, allocationAmountUsd: usd, allocationAmountSol: sol } = input;
  const mode =
    input.allocationMode ??
    (usd !== undefined ? 'USD_AMOUNT' : sol !== undefined ? 'SOL_AMOUNT' : pMin !== undefined || pMax !== undefined ? 'PERCENTAGE_RANGE' : undefined);
  if (!mode) return undefined;
  return {
    allocationMode: mode,
    allocationPercentageMin: mode === 'PERCENTAGE_RANGE' ? (pMin ?? null) : null,
    allocationPercentageMax: mode === 'PERCENTAGE_RANGE' ? (pMax ?? null) : null,
    allocationAmountUsd: mode === 'USD_AMOUNT' && usd !== undefined ? usdToMicro(usd) : null,
    allocationAmountSol: mode === 'SOL_AMOUNT' && sol !== undefined ? Number(toUnits(sol, 9)) : null,
  };
}

const choicesOf = (input: SubscribeInput): FollowChoices => ({
  tradeMode: input.tradeMode ?? input.subscriptionType,
  allocation: allocationOf(input),
  goLiveUponConfirmation: input.goLiveUponConfirmation,
  isPaused: input.isPaused,
});

async function followableAgent(store: EventStore, agentId: string): Promise<ListedAgent> {
  const { state } = await load(store, agentStream(agentId), agentFolder);
  if (!state.exists) throw notFound('agent not found');
  const status = state.betaStatus;
  if (!isFollowable(state)) throw conflict(`agent is ${status} and cannot be followed`);
  return state;
}

/** The body's context, else the user's current one (virtualWalletMode), else virtual. */
async function walletContextOf(store: EventStore, userId: string, input: SubscribeInput): Promise<WalletContext> {
  if (input.walletContext) return input.walletContext;
  if (input.walletMode) return input.walletMode === 'REAL' ? 'real' : 'virtual';
  const user = await loadUser(store, userId);
  return user.status === 'registered' && !user.virtualWalletMode ? 'real' : 'virtual';
}

const later = (a: Position | undefined, b: Position | undefined) => (!a ? b : !b ? a : comparePositions(a, b) >= 0 ? a : b);

/**
 * Rounds of "plan, move funds, credit". A round that credited less than it planned (a concurrent
 * follow of the same pool took the transfer id, or an earlier crashed attempt left a debit) plans
 * again. Only the first round can refuse the follow: a later one that cannot add more (another
 * follow spent the funds meanwhile) ends with what the pool already holds.
 */
const MAX_ROUNDS = 5;

export async function subscribe(deps: SubscribeDeps, userId: string, input: SubscribeInput, ctx: CommandContext): Promise<SubscribeResult> {
  const { store } = deps;
  const [agent, walletContext] = await Promise.all([followableAgent(store, input.agentId), walletContextOf(store, userId, input)]);
  const follow = new Follow(deps, agent, userId, walletContext, choicesOf(input), ctx);
  let last = await follow.round(true);
  let { created, position } = last;
  for (let round = 2; round <= MAX_ROUNDS && last.credited < last.planned; round++) {
    try {
      last = await follow.round(false);
    } catch (err) {
      if (err instanceof DomainError) break;
      throw err;
    }
    created ||= last.created;
    position = later(position, last.position);
  }
  // Nothing appended: another writer (a concurrent follow, the transfer recovery) made the pool as
  // it is, so read-your-writes must wait for the pool's last event instead.
  position ??= (await store.readStream(poolStream(last.pool.poolId), { direction: 'backwards', maxCount: 1 }))[0]?.position;
  return { agent, pool: last.pool, created, position };
}

/** One follow request: its fixed inputs, and one round of the two-step transfer. */
class Follow {
  private readonly id: string;
  private readonly virtualStartMicro: MicroUsd;
  private readonly solPriceMicro: MicroUsd;

  constructor(
    private readonly deps: SubscribeDeps,
    private readonly agent: ListedAgent,
    private readonly userId: string,
    private readonly walletContext: WalletContext,
    private readonly choices: FollowChoices,
    private readonly ctx: CommandContext,
  ) {
    this.id = poolId(userId, agent.id, walletContext);
    this.virtualStartMicro = usdToMicro(deps.config.VIRTUAL_START_USD);
    this.solPriceMicro = usdToMicro(deps.config.SOL_PRICE_USD);
  }

  /** What this round must do: the resolved settings and terms, and how much to add. */
  private async plan() {
    const { store } = this.deps;
    const [pool, wallet] = await Promise.all([load(store, poolStream(this.id), poolFolder), load(store, walletStream(this.userId), walletFolder)]);
    const terms = pool.state.followed ? pool.state.terms : termsOf(this.agent);
    const settings = resolveSettings(this.choices, pool.state.followed ? pool.state.settings : null, terms);
    const balance = balanceOf(wallet.state, this.walletContext, this.virtualStartMicro);
    const planned = topUpMicro(pool.state, targetAllocationMicro(settings, balance, this.solPriceMicro), terms.minAllocationUsd);
    // Refuse before taking a beta seat; the wallet append re-checks under its expected revision.
    ensureFunds(wallet.state, this.walletContext, planned, this.virtualStartMicro);
    return { pool: pool.state, terms, settings, planned };
  }

  async round(first: boolean) {
    const { store } = this.deps;
    const { pool, terms, settings, planned } = await this.plan();
    const seat = first && this.agent.betaStatus === 'beta' ? await takeBetaSeat(store, this.agent.id, this.userId, this.ctx) : undefined;
    let debited = false;
    try {
      // A first follow's debit carries the pool's opening, so a crash before the pool append is recoverable.
      const opening = pool.followed ? undefined : { agentId: this.agent.id, settings, terms };
      const transfer = planned > 0 ? await this.transferFunds(pool, planned, opening) : undefined;
      debited = transfer !== undefined;
      const data = { poolId: this.id, agentId: this.agent.id, userId: this.userId, walletContext: this.walletContext, settings, terms, transfer, now: this.ctx.now };
      const result = await handle(store, poolStream(this.id), poolFolder, (state) => decidePool({ type: 'FollowAgent', data }, state), this.ctx);
      const credited = result.events.reduce((sum, e) => sum + (e.type === 'AllocationAdded' ? e.data.amountMicro : 0), 0);
      const created = result.events.some((e) => e.type === 'AgentFollowed');
      if (!result.state.followed) throw new Error(`pool ${this.id} is not followed after FollowAgent`);
      return { pool: result.state, planned, credited, created, position: later(later(seat?.position, transfer?.position), result.position) };
    } catch (err) {
      // A follow that failed before its debit (e.g. a concurrent follow spent the funds first)
      // gives back the seat it took. After the debit the pool will open (this request retried, or
      // the transfer recovery), so the seat stays with it.
      if (seat?.events.length && !pool.followed && !debited) await releaseBetaSeat(store, this.agent.id, this.userId, this.ctx).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Debits the wallet under the pool's next transfer id (expected revision: two follows can never
   * spend the same dollar). The id is derived from the pool's history, so when an earlier attempt
   * debited the wallet and crashed before crediting the pool, this finds that debit and credits
   * its amount instead of debiting again.
   */
  private async transferFunds(pool: PoolState, amountMicro: MicroUsd, follow: FollowOpening | undefined) {
    const transferId = nextTransferId(this.id, pool);
    const result = await handle(
      this.deps.store,
      walletStream(this.userId),
      walletFolder,
      (state) =>
        decideWallet(
          {
            type: 'AllocateFunds',
            data: { transferId, poolId: this.id, walletContext: this.walletContext, amountMicro, virtualStartMicro: this.virtualStartMicro, follow, now: this.ctx.now },
          },
          state,
        ),
      this.ctx,
    );
    return { transferId, amountMicro: result.state.transfers[transferId]!, position: result.position };
  }
}
