// Which of a user's beta seat claims on an agent may go back, decided on the user's pools of the
// agent (every wallet context), their wallet and the seat shards, never on a read model. A claim
// is live while a pool is open with it or a debit waits to open a pool with it; only a live claim
// keeps a seat that an open pool needs, so only claims that cannot become live again go back.
import type { PoolState } from '../pool/state.ts';
import type { WalletState } from '../wallet/state.ts';
import { transferOfClaim, UNNAMED_CLAIM, type SeatClaim } from './seats.ts';

export interface ClaimFacts {
  /** the user's pools of the agent, with each one's destination key (endpointKey) */
  pools: ReadonlyArray<{ key: string; state: PoolState }>;
  wallet: WalletState;
  /** claims the caller took itself and no longer uses (a follow that did not open the pool with them) */
  own: readonly string[];
  /** epoch ms: a claim taken before it is past the grace period of any follow still in flight */
  graceEndsBefore: number;
}

/**
 * Transfers the wallet paid towards one of the pools that no pool decided and the wallet did not
 * take back: the recovery (or the request) will credit them, opening a pool with their claim.
 */
function waitingTransfers({ pools, wallet }: ClaimFacts): Set<string> {
  const keys = new Set(pools.map((p) => p.key));
  const waiting = new Set<string>();
  for (const [transferId, debit] of wallet.debits.entries()) {
    if (debit.refunded || !keys.has(debit.to)) continue;
    if (!pools.some((p) => p.state.transfers.has(transferId))) waiting.add(transferId);
  }
  return waiting;
}

/**
 * The claims of `held` that go back: never a live one; a spent one (its opening closed: no credit
 * can open a pool with it again), the caller's own, and one older than the grace period (its follow
 * died before any debit) do. A seat taken before claims (UNNAMED_CLAIM) goes back as it did then:
 * when no pool opened without a claim is open and no debit waits to open one.
 */
export function claimsToRelease(held: readonly SeatClaim[], facts: ClaimFacts): string[] {
  const waiting = waitingTransfers(facts);
  const open = facts.pools.flatMap((p) => (p.state.followed ? [p.state.seatClaim] : []));
  const spent = new Set(facts.pools.flatMap((p) => p.state.closedClaims ?? []));
  const live = (claimId: string) => open.includes(claimId) || waiting.has(transferOfClaim(claimId));
  return held
    .filter(({ claimId, at }) => {
      if (claimId === UNNAMED_CLAIM) return !open.includes(undefined) && waiting.size === 0;
      if (live(claimId)) return false;
      return spent.has(claimId) || facts.own.includes(claimId) || Date.parse(at) < facts.graceEndsBefore;
    })
    .map((c) => c.claimId);
}
