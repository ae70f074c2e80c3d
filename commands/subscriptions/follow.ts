// Follow an agent (POST /api/v1/users/me/subscriptions): plan on the pool and wallet as they are,
// then move the capital as a transfer (wallet → pool) whose credit opens the pool or applies the
// new settings; for a pool of a beta agent it opens, the transfer's first step takes a seat claim
// (domain/transfer/legs/pool.ts). Nothing to add: the settings alone. The credit
// lands only on the pool as the follow found it (domain/pool/follow.ts): a pool stopped or opened
// meanwhile rejects it, the money goes back, and the follow plans again on fresh state.
import { agentDecider, isFollowable, seatClaimId, type ListedAgent } from '../../domain/agent/index.ts';
import { planFollow, termsOf, type FollowPlan } from '../../domain/pool/allocation.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { lostOpeningRace } from '../../domain/pool/follow.ts';
import { nextTransferId } from '../../domain/pool/queries.ts';
import { poolId, type PoolState } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { planned } from '../../domain/transfer/process.ts';
import { requestedWalletContext, type WalletContext } from '../../domain/wallet/context.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { Tools } from '../tools.ts';
import { runReserved, runTransfer } from '../transfers/run.ts';
import { currentWalletContext, PLAN_STALENESS_MS } from './planning.ts';
import { choicesOf, type SubscribeInput } from './subscribe-input.ts';
import type { FollowAgentData, FollowAgentResult } from './commands.ts';

/**
 * Concurrent follows of one pool plan the same transfer id; the later one finds it debited already
 * (for the other's amount), credits that, and plans again for what is still missing. Only the
 * first round may refuse: a later one that cannot add more ends with what the pool holds (unless
 * the pool stopped meanwhile and its opening finds the beta full).
 */
const MAX_ROUNDS = 5;

interface Round {
  pool: PoolState;
  plan: FollowPlan;
}

/** Rounds until one adds all it planned (or MAX_ROUNDS), each planned again on fresh state. */
async function rounds(first: Round, planAgain: () => Promise<Round>, applyRound: (round: Round) => Promise<number>): Promise<void> {
  let round = first;
  for (let n = 1; ; n++) {
    const added = await applyRound(round);
    if (added === round.plan.topUpMicro || n === MAX_ROUNDS) return;
    try {
      round = await planAgain();
    } catch (err) {
      if (err instanceof DomainError) return;
      throw err;
    }
  }
}

/** A follow that found its pool stopped or opened by another request meanwhile: planned again, never answered. */
class LostOpeningRace extends Error {}

export async function followAgent({ data }: Command<'FollowAgent', FollowAgentData>, tools: Tools): Promise<FollowAgentResult> {
  let maxStaleMs: number | undefined = PLAN_STALENESS_MS;
  for (;;) {
    try {
      return await follow(data, tools, maxStaleMs);
    } catch (err) {
      // A refusal is never answered from a state that may be stale: plan again on fresh state. A
      // lost race plans again until the deadline, then answers BUSY (the money went back each time).
      const raced = err instanceof LostOpeningRace;
      if (!raced && !(err instanceof DomainError && maxStaleMs !== undefined)) throw err;
      if (raced && tools.deadlineClock.nowMs() > tools.deadline) {
        throw refuse('BUSY', 'the pool kept changing under this follow (stopped or followed by other requests); nothing was moved; retry shortly', {
          retryAfterSeconds: 1,
        });
      }
      maxStaleMs = undefined;
    }
  }
}

async function follow({ userId, input }: FollowAgentData, tools: Tools, maxStaleMs: number | undefined): Promise<FollowAgentResult> {
  const staleness = maxStaleMs === undefined ? {} : { maxStaleMs };
  const [agent, walletContext] = await Promise.all([followableAgent(tools, input.agentId, staleness), walletContextOf(tools, userId, input, staleness)]);
  const id = poolId(userId, agent.id, walletContext);
  const planOnce = async (fresh = false): Promise<Round> => {
    const options = fresh ? {} : staleness;
    const [pool, wallet] = await Promise.all([tools.load(poolDecider, id, options), tools.load(walletDecider, userId, options)]);
    const facts = { pool: pool.state, wallet: wallet.state, walletContext, agentTerms: termsOf(agent), choices: choicesOf(input) };
    const { VIRTUAL_START_USD, SOL_PRICE_USD } = tools.deps.config;
    return { pool: pool.state, plan: planFollow({ ...facts, virtualStartMicro: usdToMicro(VIRTUAL_START_USD), solPriceMicro: usdToMicro(SOL_PRICE_USD) }) };
  };
  // An opening of a beta agent's pool names a seat claim of its own (after the transfer that opens
  // it); the transfer takes it before the wallet pays and gives it back unless the pool opened with it.
  const moveOf = (state: PoolState, plan: FollowPlan): FollowMove => {
    if (state.followed) return { ...plan, topsUp: state.openings ?? 0 };
    if (agent.betaStatus !== 'beta') return plan;
    return { ...plan, seatClaim: seatClaimId(nextTransferId(id, state), tools.deps.ids.uuid()) };
  };
  const first = await planOnce();
  const endpoint = { userId, agentId: agent.id, walletContext };
  await rounds(
    first,
    () => planOnce(true),
    (round) => apply(tools, id, endpoint, round.pool, moveOf(round.pool, round.plan)),
  );
  const { state: pool } = await tools.load(poolDecider, id, { answer: true });
  return { agentId: agent.id, walletContext, terms: first.plan.terms, created: !first.pool.followed, pool };
}

/** A round's plan and how it found the pool: it tops up the opening it found, or opens a pool not followed (with a seat claim for a beta agent). */
type FollowMove = FollowPlan & { topsUp?: number; seatClaim?: string };

/** One round: the settings alone, or a transfer whose credit carries them. Returns what the pool was credited. */
async function apply(
  tools: Tools,
  id: string,
  pool: { userId: string; agentId: string; walletContext: WalletContext },
  state: PoolState,
  { settings, terms, topUpMicro, topsUp, seatClaim }: FollowMove,
): Promise<number> {
  const follow = { settings, terms, ...(topsUp !== undefined ? { topsUp } : {}), ...(seatClaim !== undefined ? { seatClaim } : {}) };
  const plan = {
    transferId: nextTransferId(id, state),
    amountMicro: topUpMicro,
    from: { kind: 'wallet' as const, userId: pool.userId, walletContext: pool.walletContext },
    to: { kind: 'pool' as const, ...pool, follow },
  };
  if (topUpMicro === 0) {
    // Nothing to move: the settings alone, or a pool opened empty (its seat reserved all the same).
    await runReserved(tools, plan, () =>
      tools.execute(poolDecider, id, { type: 'FollowAgent', data: { ...pool, ...follow } }).catch((err: unknown) => {
        throw err instanceof DomainError && lostOpeningRace(err.message) ? new LostOpeningRace(err.message) : err;
      }),
    );
    return 0;
  }
  const transfer = await runTransfer(tools, planned(plan));
  if (transfer.status === 'failed') throw transfer.refusal!;
  // Real context: the credit waits for the venue (pending); the capital is on its way.
  if (transfer.status === 'compensated' && lostOpeningRace(transfer.rejection ?? '')) throw new LostOpeningRace(transfer.rejection);
  if (transfer.status !== 'completed' && transfer.status !== 'pending') {
    throw refuse('UNPROCESSABLE', `the pool did not accept the allocation (${transfer.rejection}); the funds are back in the wallet`);
  }
  return transfer.plan.amountMicro;
}

async function followableAgent(tools: Tools, agentId: string, options: { maxStaleMs?: number }): Promise<ListedAgent> {
  const { state } = await tools.load(agentDecider, agentId, options);
  if (!state.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  const status = state.betaStatus;
  if (!isFollowable(state)) throw refuse('AGENT_NOT_FOLLOWABLE', `agent is ${status} and cannot be followed`);
  return state;
}

/** The body's context, else the user's current one. */
async function walletContextOf(tools: Tools, userId: string, input: SubscribeInput, options: { maxStaleMs?: number }): Promise<WalletContext> {
  return requestedWalletContext(input) ?? currentWalletContext(tools, userId, options);
}
