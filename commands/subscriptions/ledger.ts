// Capital in and out of a followed pool (docs/domain-rules.md, Pool ledger and Withdraw): add, withdraw and
// stop following, each a transfer of the command layer; and the pool facts that arrive from trades
// and the venue. Every answer carries the pool's state after the command, so the route renders the
// subscription record from it (the same record function the read model's rows go through).
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId, type PoolState } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import { planned } from '../../domain/transfer/process.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import type { Tools } from '../tools.ts';
import { runTransfer } from '../transfers/run.ts';
import { currentWalletContext, PLAN_STALENESS_MS } from './planning.ts';
import type { PoolRequest, PoolMoveResult, PoolFact } from './commands.ts';
import { transferIds } from '../../domain/transfer/ids.ts';

/** The request's context, else the user's current one. */
const contextOf = (tools: Tools, req: PoolRequest): Promise<WalletContext> =>
  req.walletContext ? Promise.resolve(req.walletContext) : currentWalletContext(tools, req.userId, { maxStaleMs: PLAN_STALENESS_MS });

/** The pool, which the user must follow: a refusal is only ever answered from a fresh read. */
async function followedPool(tools: Tools, req: PoolRequest) {
  const walletContext = await contextOf(tools, req);
  const id = poolId(req.userId, req.agentId, walletContext);
  let { state } = await tools.load(poolDecider, id, { maxStaleMs: PLAN_STALENESS_MS });
  if (!state.followed) ({ state } = await tools.load(poolDecider, id));
  if (!state.followed) throw refuse('SUBSCRIPTION_NOT_FOUND', 'you do not follow this agent in this wallet context');
  return { id, walletContext, state };
}

/** A failed transfer answers its refusal; anything else answers the pool as it is now. */
async function settle(tools: Tools, id: string, req: PoolRequest, walletContext: WalletContext, transfer: Awaited<ReturnType<typeof runTransfer>>) {
  if (transfer.status === 'failed') throw transfer.refusal!;
  if (transfer.status === 'compensated')
    throw refuse('UNPROCESSABLE', `the pool did not accept the allocation (${transfer.rejection}); the funds are back in the wallet`);
  const { state } = await tools.load(poolDecider, id, { answer: true });
  return { agentId: req.agentId, walletContext, pool: state, status: transfer.status, amountMicro: transfer.plan.amountMicro };
}

/** POST …/allocation/add: wallet → pool; pending in the real context until the venue confirms. */
export async function addAllocation({ data }: Command<'AddAllocation', PoolRequest & { amountMicro: MicroUsd }>, tools: Tools): Promise<PoolMoveResult> {
  const { id, walletContext } = await followedPool(tools, data);
  const transfer = await runTransfer(
    tools,
    planned({
      transferId: transferIds.add(id, data.moveId ?? tools.deps.ids.uuid()),
      amountMicro: data.amountMicro,
      from: { kind: 'wallet', userId: data.userId, walletContext },
      to: { kind: 'pool', userId: data.userId, agentId: data.agentId, walletContext },
    }),
  );
  return settle(tools, id, data, walletContext, transfer);
}

/**
 * POST …/allocation/withdraw: pool → wallet. The pool decides under its stream's single writer,
 * so two withdrawals are decided one after the other on fresh state and never take the same dollar.
 */
export async function withdrawAllocation(
  { data }: Command<'WithdrawAllocation', PoolRequest & { amountMicro: MicroUsd }>,
  tools: Tools,
): Promise<PoolMoveResult> {
  // No read first: the pool's debit refuses a pool the user does not follow (SUBSCRIPTION_NOT_FOUND) on fresh state.
  const walletContext = await contextOf(tools, data);
  const id = poolId(data.userId, data.agentId, walletContext);
  const transfer = await runTransfer(
    tools,
    planned({
      transferId: transferIds.withdraw(id, data.moveId ?? tools.deps.ids.uuid()),
      amountMicro: data.amountMicro,
      from: { kind: 'pool', userId: data.userId, agentId: data.agentId, walletContext },
      to: { kind: 'wallet', userId: data.userId, walletContext },
    }),
  );
  return settle(tools, id, data, walletContext, transfer);
}

/**
 * DELETE …/subscriptions/{agentId}: the pool settles its pending fees, pays out everything it
 * holds and closes (refused while it has open trades); then the user's beta seat goes back.
 */
export async function stopFollowing({ data }: Command<'StopFollowing', PoolRequest>, tools: Tools): Promise<PoolMoveResult> {
  const { id, walletContext } = await followedPool(tools, data);
  const transfer = await runTransfer(
    tools,
    planned({
      transferId: transferIds.stop(id, data.moveId ?? tools.deps.ids.uuid()),
      amountMicro: 0,
      from: { kind: 'pool', userId: data.userId, agentId: data.agentId, walletContext, close: true },
      to: { kind: 'wallet', userId: data.userId, walletContext },
    }),
  );
  const result = await settle(tools, id, data, walletContext, transfer);
  await tools.dispatch('ReleaseOrphanSeat', { agentId: data.agentId, userId: data.userId });
  // Real context: the payout is still at the venue; the answer names what is on its way.
  const leg = result.pool.pending[transfer.plan.transferId];
  return leg ? { ...result, amountMicro: leg.amountMicro } : result;
}

export async function recordPoolFact({ data }: Command<'RecordPoolFact', { poolId: string; fact: PoolFact }>, tools: Tools): Promise<{ pool: PoolState }> {
  const { state } = await tools.execute(poolDecider, data.poolId, data.fact);
  return { pool: state };
}
