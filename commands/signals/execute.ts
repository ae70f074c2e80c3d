// A signal executed in its follower pools (the signal worker sends this): every open is a transfer
// of margin from the pool to a new trade, every follow-up manages the trade it names, and a trade
// that ends pays its pool back. Each pool's part is idempotent by the trade ids (a digest of pool, signal and intent),
// so a run repeated after a crash opens nothing twice; the outcome is recorded once, on the signal.
import { createHash } from 'node:crypto';
import { agentDecider, type ListedAgent } from '../../domain/agent/index.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolEventSchema, type PoolEvent } from '../../domain/pool/events.ts';
import { tradeLimitsOf, type TradeSize } from '../../domain/pool/limits.ts';
import { openTradeRefs } from '../../domain/pool/queries.ts';
import { poolStream, type FollowedPool } from '../../domain/pool/state.ts';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import { signalDecider, signalInstanceId } from '../../domain/signal/decide.ts';
import type { PoolResult, SignalExecuted, SignalReceived } from '../../domain/signal/events.ts';
import { tradeOrderOf } from '../../domain/signal/execution.ts';
import { resolveTarget, type FollowUpIntent, type Intent, type OpenIntent } from '../../domain/signal/index.ts';
import { tradeDecider, type TradeCommand } from '../../domain/trade/decide.ts';
import { poolEndpointOf, type TransferPlan, type TradeRequest } from '../../domain/transfer/plan.ts';
import { groupDebited, groupReason, groupStatus } from '../../domain/transfer/group.ts';
import type { CommandBody, Command } from '../../domain/shared/decider.ts';
import type { Tools } from '../tools.ts';
import { markPriceOf } from '../market/mark-price.ts';
import { runGroup } from '../transfers/run.ts';
import { manageTrade } from '../trades/manage.ts';
import { intentPrice } from '../../domain/signal/price.ts';
import type { ExecuteSignalData } from './commands.ts';
import { inParallel } from '../../infra/parallel.ts';
import { transferIds } from '../../domain/transfer/ids.ts';

/**
 * Pools worked on at once by one run: each is a handful of appends on its own streams, independent
 * of the others', so many at once make the store's group commit and coalesced reads carry many pools
 * per statement and commit (infra/eventstore/postgres-append.ts, postgres-reads.ts).
 */
const POOL_CONCURRENCY = 128;

interface Signal {
  key: string;
  received: SignalReceived;
  agent: ListedAgent;
  feeBps: number;
}

/**
 * A trade id: stable per pool, signal and intent, so a repeated run finds what the first one did;
 * a digest, so that the ids a developer sees in the webhook's answer do not name the followers.
 */
export const tradeIdOf = (poolId: string, signalKey: string, intent: number): string =>
  createHash('sha256').update(`${poolId}#${signalKey}#${intent}`).digest('base64url').slice(0, 24);

const NOT_LIVE = 'the follower has not gone live with this pool yet';

const skipped = (poolId: string, skipReason: string, errorMessage?: string): PoolResult => ({
  poolId,
  status: 'skipped',
  tradeIds: [],
  skipReason,
  ...(errorMessage ? { errorMessage } : {}),
});
const failed = (poolId: string, tag: string, errorMessage: string, tradeIds: string[] = []): PoolResult => ({
  poolId,
  status: 'failed',
  tradeIds,
  errorMessage: `[${tag}] ${errorMessage}`,
  errorTags: [tag],
});

async function openTrades(tools: Tools, signal: Signal, pool: FollowedPool, opens: Array<{ intent: OpenIntent; index: number }>): Promise<PoolResult> {
  const { poolId } = pool;
  const now = tools.metadata.now;
  const orders: Array<{ tradeId: string; request: TradeRequest; size: TradeSize }> = [];
  for (const { intent, index } of opens) {
    const markPrice = await markPriceOf(tools, intent.token);
    const order = tradeOrderOf(intent, { defaults: signal.agent.signalExecutionDefaults, terms: pool.terms, feeBps: signal.feeBps, now, markPrice });
    // A pool not live yet skips for that first, whatever else it would have skipped for.
    if (!order.ok) return pool.awaitingGoLive ? skipped(poolId, 'AWAITING_GO_LIVE', NOT_LIVE) : skipped(poolId, order.skipReason, order.message);
    orders.push({ tradeId: tradeIdOf(poolId, signal.key, index), request: order.request, size: order.size });
  }
  const from = poolEndpointOf(poolId);
  const { events } = await tools.execute(poolDecider, poolId, {
    type: 'OpenTrade',
    data: {
      limits: tradeLimitsOf(signal.agent.signalExecutionDefaults, pool.terms),
      trades: orders.map(({ tradeId, request, size }) => ({
        tradeId,
        size,
        token: request.token,
        side: request.side,
        signalId: signal.received.signalId,
        transfer: { transferId: transferIds.tradeMargin(tradeId), amountMicro: 0, from, to: { kind: 'trade' as const, tradeId, poolId, request } },
      })),
    },
  });
  const tradeIds = orders.map((o) => o.tradeId);
  const decision = decisionOf(events.length > 0 ? events : recordedDecisions(await tools.deps.store.readStream(poolStream(poolId))), tradeIds);
  if ('refused' in decision) return skipped(poolId, decision.refused.reason, decision.refused.message);
  if ('simulated' in decision) return { poolId, status: 'simulated', tradeIds };
  // The pool's decision is the group's debit, taken for all its trades at once by this run (each
  // TradeOpened carries the margin decided): the group goes on from the credits, and gives back
  // everything itself when one trade cannot open (domain/transfer/group.ts).
  if (decision.plans.length === 0) return { poolId, status: 'executed', tradeIds };
  const group = await runGroup(tools, groupDebited(decision.plans));
  const status = groupStatus(group);
  if (status === 'completed') return { poolId, status: 'executed', tradeIds };
  const reason = groupReason(group) ?? status;
  if (reason === 'INVALID_LEVELS') return skipped(poolId, 'INVALID_LEVELS', "the levels contradict the side at the venue's price");
  return failed(poolId, reason, `the trade could not open: ${reason}`);
}

type Decision = { plans: TransferPlan[] } | { refused: { reason: string; message: string } } | { simulated: true };

const DECISIONS: ReadonlySet<string> = new Set(['TradeOpened', 'TradeRefused', 'TradeSimulated']);

/** The decisions on trades a pool's stream recorded, read back through the pool's event schema. */
const recordedDecisions = (events: ReadonlyArray<{ type: string; data: unknown }>): PoolEvent[] =>
  events.filter((e) => DECISIONS.has(e.type)).map((e) => poolEventSchema.parse(e));

/**
 * The pool's decision on a group of trades, from its events (the group's own as decided, or its
 * stream's read back): the plans it locked margin for, why it refused, or that it executed them on paper.
 */
function decisionOf(events: readonly PoolEvent[], tradeIds: string[]): Decision {
  const ids = new Set(tradeIds);
  const plans: TransferPlan[] = [];
  for (const e of events) {
    if (e.type === 'TradeRefused' && ids.has(e.data.tradeId)) return { refused: e.data };
    if (e.type === 'TradeSimulated' && ids.has(e.data.tradeId)) return { simulated: true };
    if (e.type === 'TradeOpened' && ids.has(e.data.tradeId) && e.data.transfer) plans.push(e.data.transfer);
  }
  return { plans };
}

/**
 * The trade command a follow-up asks for, at the venue's price for a close. A partial close names
 * the signal and intent that asked for it, so a run of the signal again closes nothing more (the
 * other follow-ups are repeats by nature: a cancel, a stop or targets set again, a trade ended).
 */
async function followUpCommand(
  tools: Tools,
  intent: FollowUpIntent,
  token: string,
  tradeId: string,
  requestId: string,
): Promise<CommandBody<TradeCommand> | PoolResult['errorMessage']> {
  switch (intent.action) {
    case 'close': {
      const price = await markPriceOf(tools, token);
      if (price === null) return `the venue has no price for ${token}`;
      return { type: 'ClosePosition', data: { closePercent: intent.closePercent, price, reason: 'SIGNAL', requestId } };
    }
    case 'cancel':
      return { type: 'CancelEntry', data: {} };
    case 'update': {
      if (intent.takeProfits)
        return {
          type: 'SetTargets',
          data: {
            takeProfits: intent.takeProfits.map((tp) =>
              tp.closePercent === undefined ? { price: intentPrice(tp.price) } : { price: intentPrice(tp.price), closePercent: tp.closePercent },
            ),
          },
        };
      if (intent.breakeven) return { type: 'MoveStop', data: { to: 'breakeven' } };
      if (intent.stopLoss !== undefined) return { type: 'MoveStop', data: { price: intentPrice(intent.stopLoss) } };
      if (intent.stopLossAtTarget !== undefined) {
        const { state } = await tools.load(tradeDecider, tradeId);
        const target = 'targets' in state ? state.targets.find((t) => t.tier === intent.stopLossAtTarget) : undefined;
        if (!target) return `the trade has no open target ${intent.stopLossAtTarget}`;
        return { type: 'MoveStop', data: { price: target.price } };
      }
      return 'the update names nothing to change';
    }
  }
}

/**
 * Management of an open trade beyond ending it: stop moves, breakeven, new targets, partial closes.
 * Only full trading applies it; every mode closes its trades and cancels their unfilled entries
 * when the agent says so (docs/decisions.md, "Trade modes and going live").
 */
const isManagement = (intent: FollowUpIntent): boolean => intent.action === 'update' || (intent.action === 'close' && intent.closePercent < 100);

/** A follow-up manages the one trade it names; two candidates or none skip it, and so does management outside full trading. */
async function followUp(tools: Tools, signal: Signal, pool: FollowedPool, intent: FollowUpIntent, index: number): Promise<PoolResult> {
  const { poolId } = pool;
  if (pool.awaitingGoLive) return skipped(poolId, 'AWAITING_GO_LIVE', NOT_LIVE);
  const target = resolveTarget(intent, openTradeRefs(pool), signal.received.replyTo);
  if (target.kind === 'ambiguous') return skipped(poolId, 'AMBIGUOUS_TARGET', `${target.candidates} open trades match`);
  if (target.kind === 'notFound') return skipped(poolId, 'NO_MATCHING_TRADE', 'no open trade of the agent matches');
  if (isManagement(intent) && pool.settings.tradeMode !== 'FULL_TRADING') {
    return skipped(
      poolId,
      'FULL_TRADING_ONLY',
      `the follower's ${pool.settings.tradeMode} does not apply the agent's management of open trades (stop moves, targets, partial closes): FULL_TRADING does`,
    );
  }
  const { tradeId, token } = target.trade;
  const command = await followUpCommand(tools, intent, token, tradeId, `${signal.key}#${index}`);
  if (typeof command !== 'object') return failed(poolId, 'NOT_APPLICABLE', command ?? 'not applicable', [tradeId]);
  try {
    await manageTrade(tools, tradeId, command);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    if (err.reason === 'INVALID_LEVELS') return skipped(poolId, 'INVALID_LEVELS', err.message);
    return failed(poolId, err.reason, err.message, [tradeId]);
  }
  return { poolId, status: 'executed', tradeIds: [tradeId] };
}

/** One pool's part: its opens together (both or neither), then each follow-up. */
async function executeInPool(tools: Tools, signal: Signal, intents: Intent[], poolId: string): Promise<PoolResult> {
  const { state } = await tools.load(poolDecider, poolId);
  if (!state.followed) return skipped(poolId, 'POOL_CLOSED', 'the user no longer follows the agent here');
  const opens = intents.flatMap((intent, index) => (intent.action === 'open' ? [{ intent, index }] : []));
  const results: PoolResult[] = [];
  if (opens.length > 0) results.push(await openTrades(tools, signal, state, opens));
  for (const [index, intent] of intents.entries()) {
    if (intent.action === 'open') continue;
    const { state: now } = await tools.load(poolDecider, poolId);
    if (!now.followed) break;
    results.push(await followUp(tools, signal, now, intent, index));
  }
  return mergedResult(poolId, results);
}

/** A pool's results for several intents as one: executed when each was, else the first that was not. */
function mergedResult(poolId: string, results: PoolResult[]): PoolResult {
  const tradeIds = [...new Set(results.flatMap((r) => r.tradeIds))];
  const notExecuted = results.find((r) => r.status !== 'executed');
  return notExecuted ? { ...notExecuted, tradeIds } : { poolId, status: 'executed', tradeIds };
}

export async function executeSignal({ data }: Command<'ExecuteSignal', ExecuteSignalData>, tools: Tools): Promise<{ executed: SignalExecuted }> {
  const id = signalInstanceId(data.agentId, data.signalKey);
  const { state } = await tools.load(signalDecider, id);
  if (state.status === 'none') throw refuse('SIGNAL_NOT_FOUND', `no signal ${data.signalKey} of agent ${data.agentId}`);
  if (state.status === 'executed') return { executed: state.executed };
  const { interpretation } = state.received;
  const { state: agent } = await tools.load(agentDecider, data.agentId);
  if (!agent.exists) throw refuse('AGENT_NOT_FOUND', `no agent ${data.agentId}`);
  const results =
    agent.deletedAt !== undefined
      ? data.poolIds.map((poolId) => skipped(poolId, 'AGENT_DELETED', 'the agent was deleted'))
      : interpretation.kind === 'signal'
        ? await inParallel(data.poolIds, POOL_CONCURRENCY, (poolId) =>
            executeInPool(
              tools,
              { key: data.signalKey, received: state.received, agent, feeBps: tools.deps.config.TRADE_FEE_BPS },
              interpretation.intents,
              poolId,
            ),
          )
        : [];
  const recorded = await tools.execute(signalDecider, id, { type: 'RecordSignalOutcome', data: { results } });
  if (recorded.state.status !== 'executed') throw new Error(`signal ${id}: the outcome was not recorded`);
  return { executed: recorded.state.executed };
}
