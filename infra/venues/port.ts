// The venue ports: what the service asks of a trading venue in the real wallet context. The
// simulated adapters (simulated.ts) implement them in process; a real venue's adapter implements
// the same calls. README.md gives each call's idempotency key, answers and failure modes.
//
// Every call that moves money is keyed by an id the caller derives from its transfer or position
// (never a fresh random id), so a caller that crashes after the call, or loses its answer, repeats
// it with the same id and the venue applies it once. A call that cannot reach the venue throws
// VenueUnavailableError (errors.ts): the caller cannot know whether it took effect and repeats it.

/** Integer micro-USD, as everywhere in the service (domain/shared/money.ts): safe integers only. */
export type MicroUsd = number;

// Spot venue: money moves between the user's wallet and the pool's venue balance on chain.

export type ChainDirection = 'deposit' | 'withdrawal';
/** PENDING until the chain transfer is final; CONFIRMED and FAILED are final and never change. */
export type ChainStatus = 'PENDING' | 'CONFIRMED' | 'FAILED';

export interface ChainTransferRequest {
  /** the caller's transfer id: the idempotency key */
  transferId: string;
  /** deposit: wallet → pool at the venue (an add); withdrawal: pool → wallet */
  direction: ChainDirection;
  userId: string;
  poolId: string;
  amountMicro: MicroUsd;
}

export interface ChainTransfer extends ChainTransferRequest {
  status: ChainStatus;
  /** the chain transaction, once sent (a real adapter may not have it yet) */
  txHash: string | null;
  /** why it FAILED, else null */
  reason: string | null;
}

export interface ChainTransfers {
  /**
   * Sends the transfer, or answers the one already sent under this transferId (any status).
   * A withdrawal leaves the pool's venue balance at once (PoolFigures.outgoingMicro) and comes
   * back if it FAILS; one beyond the pool's free balance is never sent: FAILED at once, reason
   * INSUFFICIENT_FUNDS. Throws VenueConflictError when the id was used with another direction,
   * user, pool or amount.
   */
  submit(request: ChainTransferRequest): Promise<ChainTransfer>;
  /** null when the venue never received this transferId. */
  status(transferId: string): Promise<ChainTransfer | null>;
}

// Perp venue: money moves between the chain and the one shared perp account through a bridge.

export type BridgeDirection = 'deposit' | 'reclaim';
/**
 * The venue's part of the bridge lifecycle (the ledger's PENDING_BRIDGE is "not started yet":
 * status() answers null for it). CONFIRMED and FAILED are final.
 */
export type BridgeStatus = 'BRIDGING' | 'CONFIRMED' | 'FAILED' | 'RECLAIM_DEFERRED';

export interface BridgeRequest {
  /** the caller's transfer id: the idempotency key */
  transferId: string;
  /** deposit: chain → the pool's collateral (an add); reclaim: the pool's collateral → chain */
  direction: BridgeDirection;
  poolId: string;
  /** what the caller asks to move */
  amountMicro: MicroUsd;
}

export interface BridgeTransfer {
  transferId: string;
  direction: BridgeDirection;
  poolId: string;
  /** the request's amountMicro */
  requestedMicro: MicroUsd;
  /**
   * What moves: a deposit's request; for a reclaim min(requested, the pool's free collateral when
   * it left the account), 0 while RECLAIM_DEFERRED. CONFIRMED applies this figure, not the request.
   */
  amountMicro: MicroUsd;
  status: BridgeStatus;
  /** the bridge's own transaction; null while RECLAIM_DEFERRED (nothing was sent) */
  bridgeTransactionId: string | null;
  /** why it FAILED, else null */
  reason: string | null;
}

export interface Bridge {
  /**
   * Starts the transfer, or answers the one already started under this transferId. A reclaim with
   * no free collateral is RECLAIM_DEFERRED; starting it again (same request) moves it to BRIDGING
   * once collateral is free. A reclaim leaves the account at once (PoolFigures.outgoingMicro) and
   * comes back if it FAILS. Throws VenueConflictError when the id was used with another
   * direction, pool or requested amount.
   */
  start(request: BridgeRequest): Promise<BridgeTransfer>;
  /** null when the venue never received this transferId. */
  status(transferId: string): Promise<BridgeTransfer | null>;
}

// A venue account: the perp venue's one shared account, or the spot venue's, split by pool.

/** One pool's money at a venue, read at one instant. Unrealized PnL is not included. */
export interface PoolFigures {
  poolId: string;
  /**
   * Confirmed deposits − withdrawals/reclaims that left the account + realized PnL of released
   * positions. The ledger's currentBalanceUsd still counts outgoing money (its pendingOut), so it
   * compares with equityMicro + outgoingMicro.
   */
  equityMicro: MicroUsd;
  /** margin locked by open positions */
  marginInUseMicro: MicroUsd;
  /** max(0, equity − margin in use): what a reclaim, a withdrawal or a new position can take */
  freeMicro: MicroUsd;
  /** withdrawals and reclaims that left the account and are not final yet */
  outgoingMicro: MicroUsd;
}

/** The whole account: each figure summed over its pools. */
export type AccountFigures = Omit<PoolFigures, 'poolId'>;

export interface MarginRequest {
  poolId: string;
  /** the caller's position id: the idempotency key */
  positionId: string;
  amountMicro: MicroUsd;
}

export interface ReleaseRequest {
  poolId: string;
  positionId: string;
  /** realized PnL of the closed position, net of venue fees; negative for a loss */
  pnlMicro: MicroUsd;
}

export interface MarginLock {
  positionId: string;
  poolId: string;
  amountMicro: MicroUsd;
  status: 'LOCKED' | 'RELEASED';
  /** the PnL booked at release; null while LOCKED */
  pnlMicro: MicroUsd | null;
}

export interface VenueAccount {
  /** A pool the venue never saw has zero figures. */
  poolFigures(poolId: string): Promise<PoolFigures>;
  accountFigures(): Promise<AccountFigures>;
  /**
   * Locks margin of the pool for a position, or answers the lock already made under this
   * positionId (LOCKED or RELEASED). VenueRefusedError INSUFFICIENT_MARGIN when the pool's free
   * money is short; VenueConflictError when the id was used with another pool or amount.
   */
  lockMargin(request: MarginRequest): Promise<MarginLock>;
  /**
   * Releases the position's margin and books its PnL into the pool's equity, or answers the
   * release already made. VenueRefusedError UNKNOWN_POSITION when nothing was locked under the
   * id; VenueConflictError for another pool, or a repeat with another PnL.
   */
  releaseMargin(request: ReleaseRequest): Promise<MarginLock>;
}

/** Mark prices. The admin route (`PUT /api/admin/market/prices`) sets those of the simulated venue. */
export interface PriceSource {
  /** One whole token of a symbol or mint in attodollars (domain/shared/price.ts); null when no price is known. */
  priceOf(symbolOrMint: string): Promise<bigint | null>;
}

// Swaps (spot venue): a user's manual buy or sell of a token against the spend stablecoin.

/** CONFIRMED and FAILED are final and never change; PENDING until the chain says. */
export type SwapStatus = 'PENDING' | 'CONFIRMED' | 'FAILED';

export interface SwapRequest {
  /** the caller's transfer id: the idempotency key */
  swapId: string;
  userId: string;
  /** paper trading (virtual) swaps at the same prices, moving no chain money */
  walletContext: 'virtual' | 'real';
  /** a withdrawal sends the spend stablecoin (`mint`) to `destination`, swapping nothing */
  side: 'buy' | 'sell' | 'withdraw';
  /** the token's mint (or the symbol the simulated market prices) */
  mint: string;
  /** a buy or a withdrawal: micro-USD; a sell: token units (10^-6 of a whole token) to sell */
  amount: number;
  /** a withdrawal's address */
  destination?: string;
}

export interface Swap extends SwapRequest {
  status: SwapStatus;
  /** the chain transaction; null when nothing was sent */
  txId: string | null;
  /** attodollars (10^-18 USD) per whole token it executed at, as `PriceSource` quotes; null when it did not execute */
  price: bigint | null;
  /** token units bought or sold (0 unless CONFIRMED) */
  units: number;
  /** micro-USD paid (a buy) or fetched (a sell) (0 unless CONFIRMED) */
  usdMicro: MicroUsd;
  /** why it FAILED, else null */
  reason: string | null;
}

export interface Swaps {
  /**
   * Executes the swap, or answers the one already made under this swapId (any status). Throws
   * VenueConflictError when the id was used for another request, VenueUnavailableError when the
   * venue was not reached (the swap may have happened: repeat it with the same id).
   */
  swap(request: SwapRequest): Promise<Swap>;
  /** null when the venue never received this swapId. */
  status(swapId: string): Promise<Swap | null>;
}

/** Everything the service uses of the venues in the real context. */
export interface Venues {
  spot: { chain: ChainTransfers; account: VenueAccount };
  perp: { bridge: Bridge; account: VenueAccount };
  prices: PriceSource;
}
