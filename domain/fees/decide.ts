// An agent's fee account decides alone on its stream: the creator fees its pools settled come in
// (AccrueFees: each pool's total, which only ever grows, so a repeat or a stale total adds nothing),
// and a claim takes them out (DebitFees: the debit of a transfer to the developer's real wallet).
// As the stream's single writer it decides claims one after the other on fresh state, so two claims
// never take the same micro-USD.
import { MIN_WITHDRAWAL_MICRO } from '../pool/ledger.ts';
import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { invariant, refuse } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import { endpointKey, type TransferPlan } from '../transfer/plan.ts';
import type { ClaimPart, FeeEvent } from './events.ts';
import { claimableOf, evolve, feeAccountStream, initialState, type FeeAccountState } from './state.ts';

/** The least a claim moves (0.01 USD), as a withdrawal. */
export const MIN_CLAIM_MICRO: MicroUsd = MIN_WITHDRAWAL_MICRO;

/** Each pool's creator fees as its stream holds them now (read by the command, from the pool streams). */
export type AccrueFees = Command<'AccrueFees', { earned: Array<{ poolId: string; earnedMicro: MicroUsd }> }>;
export type DebitFees = Command<'DebitFees', { transfer: TransferPlan }>;
export type FeeAccountCommand = AccrueFees | DebitFees;

function accrue({ data, metadata }: AccrueFees, state: FeeAccountState): FeeEvent[] {
  const at = metadata.now.toISOString();
  // A pool named twice counts once, at the larger of its totals: each total is what its stream held, never an increment.
  const totals = new Map<string, MicroUsd>();
  for (const { poolId, earnedMicro } of data.earned) totals.set(poolId, Math.max(totals.get(poolId) ?? 0, earnedMicro));
  return [...totals].flatMap(([poolId, earnedMicro]) => {
    const known = state.pools.get(poolId)?.earnedMicro ?? 0;
    return earnedMicro > known ? [{ type: 'FeesAccrued' as const, data: { poolId, creatorMicro: earnedMicro - known, earnedMicro, at } }] : [];
  });
}

/** The claim's amount from each pool's unclaimed fees, the oldest accrual first. */
function partsOf(state: FeeAccountState, amountMicro: MicroUsd): ClaimPart[] {
  const parts: ClaimPart[] = [];
  let left = amountMicro;
  for (const poolId of state.order) {
    if (left === 0) break;
    const pool = state.pools.get(poolId)!;
    const take = Math.min(left, pool.earnedMicro - pool.claimedMicro);
    if (take > 0) parts.push({ poolId, amountMicro: take });
    left -= take;
  }
  return parts;
}

function debit({ data, metadata }: DebitFees, state: FeeAccountState): FeeEvent[] {
  const { transfer } = data;
  const { from, to } = transfer;
  // the claim command builds the plan: another shape is a bug, never a client's input
  invariant(from.kind === 'fees', `transfer ${transfer.transferId} is not paid by a fee account`);
  invariant(
    to.kind === 'wallet' && to.walletContext === 'real' && to.userId === from.developerId,
    `transfer ${transfer.transferId}: fees are paid to the developer's real wallet only`,
  );
  const known = state.claims.get(transfer.transferId);
  if (known) {
    // A retry of the same claim moves nothing; the same id for another destination never pays.
    if (known.to !== endpointKey(to)) throw refuse('ALREADY_EXISTS', `transfer ${transfer.transferId} was claimed for another destination`);
    return [];
  }
  const claimable = claimableOf(state);
  const amountMicro = from.all ? claimable : transfer.amountMicro;
  const details = { claimableFeesUsd: microToUsd(claimable), requestedUsd: microToUsd(amountMicro) };
  if (from.all && amountMicro < MIN_CLAIM_MICRO) {
    const least = microToUsd(MIN_CLAIM_MICRO);
    throw refuse('EXCEEDS_CLAIMABLE', `nothing to claim: ${microToUsd(claimable)} USD is claimable, a claim moves at least ${least} USD`, details);
  }
  if (amountMicro < MIN_CLAIM_MICRO) throw refuse('VALIDATION_FAILED', `amountUsd must be at least ${microToUsd(MIN_CLAIM_MICRO)}`);
  if (amountMicro > claimable) throw refuse('EXCEEDS_CLAIMABLE', `at most ${microToUsd(claimable)} USD of fees can be claimed`, details);
  const claimed = { ...transfer, from, to, amountMicro };
  return [{ type: 'FeesClaimed', data: { transfer: claimed, parts: partsOf(state, amountMicro), at: metadata.now.toISOString() } }];
}

export function decide(command: FeeAccountCommand, state: FeeAccountState): FeeEvent[] {
  switch (command.type) {
    case 'AccrueFees':
      return accrue(command, state);
    case 'DebitFees':
      return debit(command, state);
    default:
      return assertNever(command);
  }
}

export const feeAccountDecider: Aggregate<FeeAccountCommand, FeeAccountState, FeeEvent> = { streamOf: feeAccountStream, initialState, evolve, decide };
